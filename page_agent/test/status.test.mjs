// page/status.js alone: the phase from the state, its sentence and hints, coverage; and a session's status
// assembled from its collector's state (the registry ledger, the calls seen, the loss the uplink's feed reported).
import { test } from "node:test"
import assert from "node:assert/strict"
import { statusFor, sessionStatus, COUNTED_HINT } from "../src/page/status.js"
import { Ledger } from "../src/page/ledger.js"

test("phases in order of precedence, with coverage", () => {
  const phase = (s) => statusFor({ reasons: [], active: true, ...s })
  assert.equal(phase({ inactive: true }).phase, "inactive")
  assert.equal(phase({ active: false, anyCall: true }).phase, "detached")
  assert.equal(phase({ anyCall: true, registered: true }).phase, "measuring")
  assert.equal(phase({ countedCalls: 2 }).message, "Calls are arriving and counted, not measured: these tools were registered before the agent loaded.")
  assert.equal(phase({ registered: true, hostFound: true }).phase, "tools-registered")
  assert.equal(phase({ hostFound: true, hostLocation: "navigator" }).message, "Registry found on navigator.modelContext; the page has not registered any tools on it yet.")
  assert.equal(phase({}).phase, "no-host")
  assert.deepEqual([phase({}).coverage, phase({ anyCall: true }).coverage, phase({ anyCall: true, reasons: ["x"] }).coverage], ["none-observed", "running", "incomplete"])
  assert.equal(phase({ active: false }).coverage, null)
  const s = phase({ anyCall: true, split: "tools 1ms", countedOnly: true, hints: ["mine"] })
  assert.equal(s.message, "Measuring tool calls: tools 1ms")
  assert.deepEqual(s.hints.slice(0, 2), ["mine", COUNTED_HINT])
})

function state(extra = {}) {
  return { active: true, registry: new Ledger(0), lost: 0, extraReasons: new Set(), notes: [], firstCallAt: null, unsampled: 0, lastSettledAt: null, stats: { totals: { calls: 0 } }, ...extra }
}

test("sessionStatus: the ledger's side, the calls seen, the loss and the agent's own reasons and hints", () => {
  const c = state()
  assert.equal(sessionStatus(c, null).phase, "no-host")
  c.registry.hostFound("document", 5)
  c.registry.registered({ name: "t", schemaBytes: 3 }, 6)
  c.registry.registered({ name: "get_perf_report", schemaBytes: 3, internal: true }, 6)
  let s = sessionStatus(c, null)
  assert.deepEqual([s.phase, s.hostLocation, s.hostFoundAt, s.toolCount], ["tools-registered", "document", 5, 2])
  c.unsampled = 1
  assert.equal(sessionStatus(c, null).phase, "measuring", "a call sampled out is a call seen")
  c.lost = 2
  c.extraReasons.add("a wrap failed")
  c.notes.push("a hint of the agent's")
  Object.assign(c, { firstCallAt: 7, lastSettledAt: 9, stats: { totals: { calls: 4 } } })
  s = sessionStatus(c, "tools 2ms")
  assert.deepEqual(s.reasons, ["2 span(s) evicted before the relay stored them", "a wrap failed"])
  assert.equal(s.coverage, "incomplete")
  assert.equal(s.hints[0], "a hint of the agent's")
  assert.equal(s.message, "Measuring tool calls: tools 2ms")
  assert.deepEqual([s.callCount, s.lastCallAt], [4, 9])
  assert.deepEqual(Object.keys(s), ["phase", "message", "hostLocation", "hostFoundAt", "toolCount", "callCount", "lastCallAt", "hints", "coverage", "reasons"])
  c.active = false
  assert.equal(sessionStatus(c, null).phase, "detached")
})
