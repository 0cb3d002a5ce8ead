// ledger.js alone: the registry ledger's rules (host found once, registration times, redefinition, counted
// calls, the frame's order and cap), with every time handed in.
import { test } from "node:test"
import assert from "node:assert/strict"
import { Ledger, MAX_LEDGER_TOOLS } from "../src/page/ledger.js"

const tool = (name, over = {}) => ({ name, schemaBytes: 40, descriptor: `{"name":"${name}"}`, internal: false, ...over })

test("the host is found once: the first place and time stay", () => {
  const l = new Ledger(5000)
  assert.equal(l.hostFound("document", 12), true)
  assert.equal(l.hostFound("navigator", 30), false)
  assert.deepEqual([l.hostLocation, l.hostFoundAt], ["document", 12])
})

test("registration times: the first of the page's own tools, kept across a re-registration, new after a withdrawal", () => {
  const l = new Ledger(0)
  l.registered(tool("report", { internal: true }), 5)
  assert.equal(l.firstRegistrationAt, null, "the agent's own report tool is not the page's first registration")
  l.registered(tool("search"), 10)
  l.registered(tool("search"), 20)
  assert.equal(l.tools.get("search").registeredAt, 10)
  assert.equal(l.firstRegistrationAt, 10)
  const gone = l.unregistered("search", 30)
  assert.deepEqual([gone.registered, gone.unregisteredAt], [false, 30])
  assert.equal(l.unregistered("search", 31), null, "withdrawn twice: nothing to say")
  assert.equal(l.unregistered("never", 31), null)
  assert.equal(l.registered(tool("search"), 40).full.registeredAt, 40)
})

test("redefinition: another descriptor or handler under the same name says what moved; the same again does not", () => {
  const l = new Ledger(0)
  assert.equal(l.registered(tool("a"), 1).redefined, null)
  assert.equal(l.registered(tool("a"), 2).redefined, null)
  const moved = l.registered(tool("a", { descriptor: '{"name":"a","description":"new"}' }), 3)
  assert.deepEqual(moved.redefined, { descriptor: true, handler: false })
  assert.equal(moved.full.redefined, true)
  assert.equal(l.registered(tool("a", { descriptor: '{"name":"a","description":"new"}' }), 4).full.redefined, true, "once redefined, the record says so")
  l.registered(tool("h", { handlerHash: "1111" }), 5)
  assert.deepEqual(l.registered(tool("h", { handlerHash: "2222" }), 6).redefined, { descriptor: false, handler: true })
})

test("keptAnnotations: only a record whose frame waits for them", () => {
  const l = new Ledger(0)
  l.registered(tool("a"), 1)
  assert.equal(l.keptAnnotations("a", { readOnlyHint: true }), null)
  l.tools.get("a").framePending = true
  const rec = l.keptAnnotations("a", { readOnlyHint: true })
  assert.deepEqual([rec.framePending, rec.annotationsKept], [false, { readOnlyHint: true }])
  assert.equal(l.keptAnnotations("a", {}), null, "its frame left already")
})

test("counted, not measured: unwrapped tools and their counted calls in the frame and the reasons", () => {
  const l = new Ledger(0)
  l.registered(tool("early"), 1)
  assert.equal(l.unwrappedTool("early"), true)
  assert.equal(l.unwrappedTool("early"), false)
  l.countedCall("early")
  l.countedCall("early")
  l.wrapFailures = 1
  assert.equal(l.countedCalls(), 2)
  const f = l.frame({ sessionId: "abcdef01", firstCallAt: null, lastSettledAt: null, totals: {} })
  assert.deepEqual(f.tools.early, { schemaBytes: 40, registeredAt: 1, unregisteredAt: null, internal: false, measured: false, counted: 2 })
  assert.deepEqual(l.reasons(), ["1 tool execute() could not be wrapped", "1 tool(s) registered before the agent loaded are counted, not measured (2 call(s) counted from toolactivated)"])
  assert.equal(l.wrappedTool("early"), true)
  assert.equal(l.frame({ sessionId: "x", firstCallAt: null, lastSettledAt: null, totals: {} }).tools.early.measured, undefined)
})

test("counting stops at MAX_LEDGER_TOOLS names; a name already counted still counts", () => {
  const l = new Ledger(0)
  for (let i = 0; i < MAX_LEDGER_TOOLS; i++) assert.equal(l.countedCall(`t${i}`), true)
  assert.equal(l.countedCall("one-too-many"), false)
  assert.equal(l.countedCall("t0"), true)
  assert.equal(l.counted.get("t0"), 2)
})

test("the frame: registered tools before withdrawn ones, at most MAX_LEDGER_TOOLS, the calls' side as handed in", () => {
  const l = new Ledger(1234)
  l.hostFound("document", 3)
  l.registered(tool("gone"), 4)
  l.unregistered("gone", 5)
  for (let i = 0; i < MAX_LEDGER_TOOLS; i++) l.registered(tool(`t${i}`), 6)
  const totals = { calls: 2 }
  const f = l.frame({ sessionId: "abcdef01", firstCallAt: 7, lastSettledAt: 9, totals })
  assert.equal(Object.keys(f.tools).length, MAX_LEDGER_TOOLS)
  assert.equal(f.tools.gone, undefined, "the withdrawn tool is the one past the cap")
  assert.equal(f.registeredTools.length, MAX_LEDGER_TOOLS)
  assert.deepEqual([f.sessionId, f.attachedAt, f.hostFoundAt, f.hostLocation, f.firstRegistrationAt, f.firstCallAt, f.lastSettledAt], ["abcdef01", 1234, 3, "document", 4, 7, 9])
  assert.equal(f.totals, totals)
  assert.deepEqual(l.registeredCount(), { count: MAX_LEDGER_TOOLS, own: true })
})
