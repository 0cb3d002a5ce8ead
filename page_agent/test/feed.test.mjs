// transport/feed.js alone (what its owner pushes, what the uplink reads), then the one-way path through a whole
// agent: the uplink sends what was handed to the feed, with the collector's ring and state out of its reach, at a
// flush and after a reconnect.
import { test } from "node:test"
import assert from "node:assert/strict"
import { Feed, begun as made } from "../src/transport/feed.js"
import { connectedAgent, settle, FakeWebSocket } from "../test-support/helpers.mjs"
import { agentOf } from "../src/page/index.js"

const span = (seq) => ({ sessionId: "abcdef01", seq, tool: "t" })
const about = { session: { id: "abcdef01" }, config: {} }
const begun = (seq, { invokedAt = seq, terminal = false, waiting = false } = {}) => made(seq, "t", invokedAt, 0, null, terminal, waiting)

test("a feed holds what it is handed, once per seq, oldest first, until evicted; its owner hears of loss", () => {
  const f = new Feed("abcdef01", about)
  const heard = []
  f.onLost = (n) => heard.push(n)
  assert.equal(f.span(span(2)), true)
  assert.equal(f.span(span(0)), true)
  assert.equal(f.span(span(2)), false, "a seq held already is not held twice")
  assert.deepEqual(Array.from(f.spans(), (s) => s.seq), [2, 0])
  f.evicted(2)
  assert.deepEqual(Array.from(f.spans(), (s) => s.seq), [0])
  assert.equal(f.delivery.lost, 1, "evicted before any socket carried it: lost")
  f.acked(0, [], true)
  f.evicted(0)
  assert.equal(f.delivery.lost, 1, "evicted after the relay acked it: not lost")
  assert.deepEqual(heard, [1], "told once, when the count moved")
  f.span(span(1))
  f.delivery.written(1)
  f.evicted(1)
  f.acked(0, [], true)
  assert.deepEqual(heard, [1, 2], "an unsure span a resume ack does not cover is lost, and said")
  assert.deepEqual(f.replay(), [], "nothing pushed: nothing to restate")
  assert.equal(f.seqs(), null, "an owner that does not hand over its seqs: no floor")
})

test("a capped feed (a relayed session) evicts its oldest past the cap, and counts it lost", () => {
  const f = new Feed("eeeeeeee", about, { max: 3 })
  for (let i = 0; i < 5; i++) f.span(span(i))
  assert.deepEqual(Array.from(f.spans(), (s) => s.seq), [2, 3, 4])
  assert.equal(f.delivery.lost, 2)
})

test("starts: one frame a flush, for the calls begun since that still run, as they are now", () => {
  const f = new Feed("abcdef01", about, { seqs: true })
  const b = [begun(0), begun(1, { terminal: true }), begun(2)]
  for (const x of b) f.begin(x)
  f.settled(b[2])
  const [frame, more] = f.starts()
  assert.equal(more, undefined)
  assert.deepEqual(frame, {
    type: "start",
    session: "abcdef01",
    calls: [
      { seq: 0, tool: "t", invokedAt: 0, depth: 0, parent: null },
      { seq: 1, tool: "t", invokedAt: 1, depth: 0, parent: null, invokedBy: "terminal" },
    ],
  })
  assert.deepEqual(f.starts(), [], "each begun call is said once")
  for (let seq = 3; seq < 1203; seq++) f.begin(begun(seq))
  assert.deepEqual(f.starts().map((s) => s.calls.length), [500, 500, 200], "at most 500 a frame")
})

test("a form call: its wait is said, and its user's submit too, even when the call settled and was accounted", () => {
  const f = new Feed("abcdef01", about, { seqs: true })
  const wait = begun(4, { waiting: true })
  f.begin(wait)
  assert.deepEqual(f.starts()[0].calls, [{ seq: 4, tool: "t", invokedAt: 4, depth: 0, parent: null, waiting: true }])
  const submit = begun(4, { invokedAt: 9 })
  f.begin(submit, wait)
  f.settled(submit)
  f.accounted(submit)
  assert.deepEqual(f.starts()[0].calls, [{ seq: 4, tool: "t", invokedAt: 9, depth: 0, parent: null }])
  const quick = begun(5)
  f.begin(quick)
  f.settled(quick)
  assert.deepEqual(f.starts(), [], "a call that never waited and settled needs none")
  const w2 = begun(6, { waiting: true })
  f.begin(w2)
  const s2 = begun(6, { invokedAt: 12 })
  f.begin(s2, w2)
  f.settled(s2)
  assert.deepEqual(f.starts(), [], "a wait the relay never heard of: its submit needs no start once settled")
})

test("a wait first said by the replay after hello (the call began while the socket opened) is owed its submit's start", () => {
  const f = new Feed("abcdef01", about, { seqs: true })
  const wait = begun(4, { waiting: true })
  f.begin(wait)
  assert.deepEqual(f.replay().at(-1).calls, [{ seq: 4, tool: "t", invokedAt: 4, depth: 0, parent: null, waiting: true }])
  assert.deepEqual(f.starts(), [], "said once")
  const submit = begun(4, { invokedAt: 9 })
  f.begin(submit, wait)
  f.settled(submit)
  f.accounted(submit)
  assert.deepEqual(f.starts()[0].calls, [{ seq: 4, tool: "t", invokedAt: 9, depth: 0, parent: null }])
  const w2 = begun(6, { waiting: true })
  f.begin(w2)
  f.starts()
  const s2 = begun(6, { invokedAt: 12 })
  f.begin(s2, w2)
  f.settled(s2)
  assert.deepEqual(f.replay().at(-1).calls, [{ seq: 6, tool: "t", invokedAt: 12, depth: 0, parent: null }], "a reconnect before the flush: the replay says the submit")
})

test("seqs: the floor is the lowest seq begun and not yet accounted, else the next; accounted calls are let go", () => {
  const f = new Feed("abcdef01", about, { seqs: true })
  assert.deepEqual(f.seqs(), { open: null, next: 0 })
  const b = [begun(0), begun(1), begun(2)]
  for (const x of b) f.begin(x)
  f.settled(b[0])
  assert.deepEqual(f.seqs(), { open: 0, next: 3 }, "settled but not accounted: still to become a span")
  f.accounted(b[0])
  f.accounted(b[2])
  assert.deepEqual(f.seqs(), { open: 1, next: 3 })
  f.accounted(b[1])
  assert.deepEqual(f.seqs(), { open: null, next: 3 })
  for (let seq = 3; seq < 2003; seq++) {
    const x = begun(seq)
    f.begin(x)
    f.settled(x)
    f.accounted(x)
  }
  assert.ok(f.live.length < 256, "with no flush (a socket closed), what was accounted is still let go")
})

test("replay restates what was pushed last: tools in first-registration order, status, ledger, calls running", () => {
  const f = new Feed("abcdef01", about, { seqs: true })
  const tool = (name, change, n = 1) => ({ type: "tool", session: "abcdef01", change, name, n })
  f.tool(tool("a", "registered"))
  f.tool(tool("b", "registered"))
  f.tool(tool("a", "unregistered"))
  f.tool(tool("c", "registered"))
  f.tool(tool("b", "registered", 2))
  f.tool(tool("a", "registered", 3))
  f.status({ type: "status", phase: "host-found" })
  f.status({ type: "status", phase: "measuring" })
  f.ledger({ type: "ledger", rev: 1 })
  f.ledger({ type: "ledger", rev: 2 })
  f.begin(begun(0, { waiting: true, terminal: true }))
  const done = begun(1)
  f.begin(done)
  f.settled(done)
  const out = f.replay()
  assert.deepEqual(out.map((x) => [x.type, x.name ?? x.phase ?? x.rev ?? x.calls, x.n]), [
    ["tool", "a", 3],
    ["tool", "b", 2],
    ["tool", "c", 1],
    ["status", "measuring", undefined],
    ["ledger", 2, undefined],
    ["start", [{ seq: 0, tool: "t", invokedAt: 0, depth: 0, parent: null, waiting: true }], undefined],
  ])
  assert.deepEqual(f.starts(), [], "the replay said what runs: nothing begun is said again")
  f.tool(tool("c", "unregistered"))
  assert.deepEqual(f.replay().filter((x) => x.type === "tool").map((x) => x.name), ["a", "b"])
})

test("renamed: the held spans take the new id and the owner is told", () => {
  const f = new Feed("abcdef01", about)
  const s = span(0)
  f.span(s)
  let told = null
  f.onRename = (id) => (told = id)
  f.renamed("12345678")
  assert.deepEqual([f.id, s.sessionId, told], ["12345678", "12345678", "12345678"])
})

test("one way: the uplink sends what the feed was handed, with the collector's ring out of its reach", async () => {
  const ctx = await connectedAgent({ config: { flushMs: 0 } })
  await ctx.host.registerTool({ name: "t", description: "t", execute: () => "x" })
  await settle()
  ctx.env.run()
  const agent = agentOf(ctx.api)
  // A ring whose spans cannot be read: an uplink (or a feed) that reads spans back from the collector fails here.
  const ring = agent.collector.stats.ring
  const read = () => assert.fail("the ring was read back")
  ring.values = read
  ring[Symbol.iterator] = read
  try {
    await ctx.host.executeTool({ name: "t" }, {})
    await ctx.host.executeTool({ name: "t" }, {})
    ctx.env.run()
  } finally {
    delete ring.values
    delete ring[Symbol.iterator]
  }
  const sent = ctx.ws.frames("spans").flatMap((f) => f.spans.map((s) => s.seq))
  assert.deepEqual(sent, [0, 1])
  assert.deepEqual(Array.from(agent.sink.feed.spans(), (s) => s.seq), [0, 1], "the feed holds what the ring holds")
  // A reset empties the ring: the feed is told, span by span, and holds nothing more.
  ctx.api.reset()
  ctx.env.run()
  assert.equal(agent.sink.feed.held.size, 0)
})

test("one way after a reconnect: hello and replay come from the feed, with the page's state out of the uplink's reach", async () => {
  const ctx = await connectedAgent({ config: { flushMs: 0 } })
  let release
  await ctx.host.registerTool({ name: "t", description: "t", execute: () => "x" })
  await ctx.host.registerTool({ name: "hang", description: "h", execute: () => new Promise((r) => (release = r)) })
  await settle()
  const running = ctx.host.executeTool({ name: "hang" }, {})
  await ctx.host.executeTool({ name: "t" }, {})
  ctx.env.advance(600) // the page awaits "hang": accounting waits for its answer, HOLD_MS at most (pacing.js)
  await settle()
  ctx.env.run()
  assert.deepEqual(ctx.ws.frames("spans").flatMap((f) => f.spans.map((s) => s.seq)), [1])
  const first = ctx.ws
  const agent = agentOf(ctx.api)
  const c = agent.collector
  // Everything a reconnect used to read back from the page: the collector's state and the sink's makers.
  const poisoned = { status: c.status, ledger: c.ledger, about: agent.sink.about, statusFrame: agent.sink.statusFrame, toolFrame: agent.sink.toolFrame }
  const trap = (what) => () => assert.fail(`${what} was read back at the reconnect`)
  c.status = trap("the collector's status")
  c.ledger = trap("the collector's ledger")
  agent.sink.about = trap("the session's description")
  agent.sink.statusFrame = trap("the status frame")
  agent.sink.toolFrame = trap("a tool frame")
  const tools = c.registry.tools
  c.registry.tools = /** @type {any} */ ({ values: trap("the registry"), get: trap("the registry"), [Symbol.iterator]: trap("the registry") })
  const inFlight = c.inFlight
  c.inFlight = /** @type {any} */ ({ values: trap("the calls in flight"), keys: trap("the calls in flight"), [Symbol.iterator]: trap("the calls in flight") })
  try {
    first.drop()
    ctx.env.advance(250)
    const ws2 = FakeWebSocket.last()
    assert.notEqual(ws2, first)
    ws2.accept()
    ctx.env.run()
    const types = ws2.sent.map((f) => f.type)
    assert.deepEqual(types.slice(0, 6), ["hello", "tool", "tool", "status", "ledger", "start"])
    assert.equal(ws2.sent[0].session.id, ctx.id)
    assert.deepEqual(ws2.sent.filter((f) => f.type === "tool").map((f) => f.name), ["t", "hang"])
    assert.equal(ws2.frames("status")[0].phase, "measuring")
    assert.deepEqual(ws2.frames("ledger")[0].ledger.registeredTools, ["t", "hang"])
    assert.deepEqual(ws2.frames("start")[0].calls.map((x) => [x.seq, x.tool]), [[0, "hang"]])
    ws2.deliver({ type: "ack", session: ctx.id, seq: -1 })
    ctx.env.run()
    assert.deepEqual(ws2.frames("spans").flatMap((f) => f.spans.map((s) => s.seq)), [1])
    assert.equal(ws2.frames("spans")[0].floor, 0, "the call still running holds the floor: its span comes later")
  } finally {
    Object.assign(c, { status: poisoned.status, ledger: poisoned.ledger, inFlight })
    c.registry.tools = tools
    Object.assign(agent.sink, { about: poisoned.about, statusFrame: poisoned.statusFrame, toolFrame: poisoned.toolFrame })
  }
  release("late")
  await running
})
