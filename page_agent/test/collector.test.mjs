// page/collector.js alone, with a recording sink: what it says, in what order, as a call enters, settles and is
// accounted, and as the registry changes. Everything leaves through the sink; nothing comes back but the loss count
// the sink pushes.
import { test } from "node:test"
import assert from "node:assert/strict"
import { Collector } from "../src/page/collector.js"
import { Pacer } from "../src/transport/pacing.js"

function rig(config = {}) {
  let t = 0
  const said = []
  const tasks = []
  const schedule = (fn) => tasks.push(fn)
  const record = (name) => (...args) => said.push([name, ...args])
  const sink = {}
  for (const name of ["start", "settled", "reopened", "accounted", "span", "update", "evicted", "beforeReset", "tool", "listed", "rejected", "ledger", "status", "restateStatus", "event"]) sink[name] = record(name)
  const c = new Collector({
    sessionId: "abcd0123",
    config: { buffer: 100, sample: 1, errorPolicy: "message", ...config },
    clock: () => t,
    schedule,
    pacer: new Pacer({ clock: () => t, schedule, setTimeout: () => null, clearTimeout() {} }),
    perf: null,
    sink,
  })
  const run = () => {
    while (tasks.length) tasks.shift()()
  }
  return { c, said, run, tick: (ms) => (t += ms) }
}

const names = (said) => said.map(([name]) => name)

test("a call: start when it enters, settled when it settles, then span, accounted and the batch's ledger", () => {
  const { c, said, run, tick } = rig()
  const call = c.enter("t", { q: 1 }, "native")
  assert.deepEqual(names(said), ["status", "start"], "the first call changes the phase")
  assert.equal(said[1][1], call)
  tick(3)
  c.settle(call, true, "ok")
  assert.deepEqual(names(said), ["status", "start", "settled"])
  assert.equal(said[2][1].seq, 0)
  said.length = 0
  run()
  assert.deepEqual(names(said), ["span", "accounted", "ledger"])
  assert.equal(said[0][1].wallMs, 3)
  assert.deepEqual(said[1][1].map((x) => x.seq), [0])
  assert.deepEqual(said[2].slice(1), [true], "made now: a batch was accounted")
  assert.equal(call.input, undefined, "the bodies are dropped once measured")
})

test("the registry: listed while its annotations are awaited, then its frame; refused ones are said, not restated", () => {
  const { c, said } = rig()
  c.registered({ name: "t", schemaBytes: 5, descriptor: null }, false)
  assert.deepEqual(names(said), ["listed", "ledger", "status"])
  assert.deepEqual(said[1].slice(1), [false], "a registry change's ledger is made once a task")
  said.length = 0
  c.keptAnnotations("t", { readOnlyHint: true })
  c.rejected({ name: "t", schemaBytes: 5 }, new Error("duplicate"))
  c.unregistered("t")
  assert.deepEqual(names(said), ["tool", "rejected", "tool", "ledger", "status"])
  assert.equal(said[1][1].rejected, "duplicate")
  assert.equal(said[2][2], "unregistered")
})

test("a first call sampled out makes the phase measuring for a reconnect's restatement, not a frame", () => {
  const { c, said } = rig({ sample: 0 })
  assert.equal(c.enter("t", {}, "native"), null)
  assert.deepEqual(names(said), ["restateStatus"])
  c.enter("t", {}, "native")
  assert.deepEqual(names(said), ["restateStatus"], "once")
  assert.equal(c.status().phase, "measuring")
})

test("the status says the loss the sink pushed", () => {
  const { c } = rig()
  c.lost = 3
  assert.deepEqual(c.status().reasons, ["3 span(s) evicted before the relay stored them"])
})

test("a call whose start reads a little before the previous settle (two clocks) has a gap of 0, never below", () => {
  const { c, said, run, tick } = rig()
  const first = c.enter("t", {}, "native")
  tick(5)
  c.settle(first, true, "ok")
  tick(-0.4) // a replayed time a fraction of a millisecond before that settle
  const second = c.enter("t", {}, "native")
  tick(1)
  c.settle(second, true, "ok")
  said.length = 0
  run()
  const spans = said.filter(([name]) => name === "span").map(([, s]) => s)
  assert.deepEqual(spans.map((s) => s.gapSincePrevCallMs), [null, 0])
})
