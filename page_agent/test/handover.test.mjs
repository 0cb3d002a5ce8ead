// page/handover.js alone: what the page asked of the early agent takes effect in the rest, the early buffer
// replays into the collector (page/replay.js, real), and the waiting promises resolve; with stand-ins for both.
import { test } from "node:test"
import assert from "node:assert/strict"
import { takeOver } from "../src/page/handover.js"

function rig({ lost = 0, reportTool = false } = {}) {
  const done = []
  const rec = { name: "f", descriptor: JSON.stringify({ name: "f", inputSchema: { type: "object" } }) }
  const p = {
    spanListeners: new Set([() => {}]),
    updateListeners: new Set([() => {}]),
    notes: ["a late config"],
    reportName: "perf",
    reportTool,
    instrumentLater: [],
    waiting: [() => done.push("api resolved")],
    done: false,
    collector: null,
    log: { lost, events: [{ name: "registered", args: [rec] }], real: null, stopWatching: () => {}, arrived: null, waits: 0, extraReasons: [], seq: 0, running: new Set(), expected: [] },
  }
  const c = {
    name: "rest",
    spanListeners: new Set(),
    updateListeners: new Set(),
    notes: [],
    extraReasons: new Set(),
    reportToolName: null,
    clock: () => 0,
    stack: [],
    seq: 0,
    pageWaits: 0,
    registered: (r) => done.push(["replayed into", "rest", r.name]),
    statusChanged: () => done.push("status"),
  }
  const interceptor = { asForm: (r, schema) => done.push(["asForm", r.name, schema]), askKeptLater: () => done.push("askKeptLater") }
  const report = { register: () => done.push("report tool") }
  return { p, c, interceptor, report, done }
}

test("the early agent's listeners, notes and names move over; the buffer replays; the API resolves last", () => {
  const x = rig()
  takeOver(x.p, { collector: x.c, interceptor: x.interceptor, report: x.report })
  assert.equal(x.c.spanListeners.size, 1)
  assert.equal(x.c.updateListeners.size, 1)
  assert.deepEqual(x.c.notes, ["a late config"])
  assert.equal(x.c.reportToolName, "perf")
  assert.equal(x.p.collector, x.c)
  assert.equal(x.p.done, true)
  assert.equal(x.p.log.real, x.c)
  assert.deepEqual(x.done, [["asForm", "f", { type: "object" }], ["replayed into", "rest", "f"], "status", "askKeptLater", "api resolved"])
  assert.equal(x.c.extraReasons.size, 0)
})

test("calls the early buffer could not hold are a coverage reason; a report tool asked for early is registered", () => {
  const x = rig({ lost: 3, reportTool: true })
  takeOver(x.p, { collector: x.c, interceptor: x.interceptor, report: x.report })
  assert.match(Array.from(x.c.extraReasons)[0], /^3 call\(s\) or event\(s\) before the agent finished loading were not measured/)
  assert.deepEqual(x.done.slice(2), ["status", "status", "askKeptLater", "report tool", "api resolved"])
})

test("the early buffer's wall-clock stamps convert with one offset: in order, and never later than the page clock", async () => {
  const { pageTime } = await import("../src/page/replay.js")
  const stamps = []
  for (let i = 0; i < 4; i++) {
    const w = Date.now()
    stamps.push([w, performance.now()]) // the page clock just after the stamp
    const until = performance.now() + 1.3 // past a turn of the wall clock's millisecond
    while (performance.now() < until);
  }
  const first = stamps.map(([w]) => pageTime(w))
  const until = performance.now() + 2.5
  while (performance.now() < until);
  assert.deepEqual(stamps.map(([w]) => pageTime(w)), first, "converted later, each reads the same")
  for (let i = 0; i < stamps.length; i++) {
    assert.ok(first[i] <= stamps[i][1], `stamp ${i}: ${first[i]} is after the page clock's ${stamps[i][1]}`)
    if (i) assert.ok(first[i] >= first[i - 1], "in the order they were taken")
  }
  assert.equal(pageTime(12.5), 12.5, "a time on the page's clock is left as it is")
})
