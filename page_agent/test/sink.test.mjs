// page/sink.js alone: what the collector says becomes frames for the uplink and messages for the channel, one way
// (pushed into the uplink's feed, transport/feed.js), with a stand-in collector, uplink and channel.
import { test } from "node:test"
import assert from "node:assert/strict"
import { Sink } from "../src/page/sink.js"
import { Ledger } from "../src/page/ledger.js"

function rig({ uplink = true, channel = true } = {}) {
  const sent = []
  const posted = []
  const u = uplink
    ? { open: true, kicks: 0, ready: 0, feeds: [], dirty: [], welcome: null, send: (id, f) => sent.push([id, f]), kick() { this.kicks++ }, spansReady() { this.ready++ }, ledgerDirty(id) { this.dirty.push(id) }, addFeed(f) { this.feeds.push(f) }, flush() {} }
    : null
  const ch = channel ? { sessionId: "abcdef01", span: (s) => posted.push(["span", s.seq]), update: (id, seq, ms) => posted.push(["update", id, seq, ms]), announce() {} } : null
  let phase = "measuring"
  const collector = {
    sessionId: "abcdef01",
    registry: new Ledger(1000),
    config: { sample: 1, errorPolicy: "message" },
    stats: { buffer: 100 },
    inFlight: new Map(),
    clock: () => 5,
    status: () => ({ phase }),
    ledger: () => ({ tools: {} }),
    lost: 0,
    rename(id) {
      this.sessionId = id
    },
  }
  const microtasks = []
  const g = { document: { title: "Shop", visibilityState: "visible" }, performance: { timeOrigin: 42 } }
  const sink = new Sink({ g, env: { origin: "https://shop.example", path: "/", userAgent: "UA", context: "top" }, microtask: (fn) => microtasks.push(fn) })
  sink.collector = collector
  sink.connect(u, ch)
  const runMicrotasks = () => {
    for (const fn of microtasks.splice(0)) fn()
  }
  return { sink, collector, u, ch, g, sent, posted, runMicrotasks, setPhase: (p) => (phase = p) }
}

test("a span goes to the channel and into the uplink's feed, which says it is ready; nothing is read back", () => {
  const r = rig()
  r.sink.span({ sessionId: "abcdef01", seq: 0 })
  r.sink.span({ sessionId: "abcdef01", seq: 1 })
  assert.deepEqual(r.posted, [["span", 0], ["span", 1]])
  assert.deepEqual(Array.from(r.sink.feed.spans(), (s) => s.seq), [0, 1])
  assert.equal(r.u.ready, 2)
  r.sink.evicted({ seq: 0 })
  assert.deepEqual(Array.from(r.sink.feed.spans(), (s) => s.seq), [1])
  assert.equal(r.sink.feed.delivery.lost, 1)
  assert.equal(r.collector.lost, 1, "the status's loss count is the feed's, pushed when it moves")
})

test("without an uplink: the channel only, and no feed", () => {
  const r = rig({ uplink: false })
  r.sink.span({ sessionId: "abcdef01", seq: 0 })
  r.sink.status()
  r.sink.event({ at: 1, kind: "reload", detail: {} })
  assert.deepEqual(r.posted, [["span", 0]])
  assert.equal(r.sink.feed, null)
})

test("each status is handed to the feed and sent (the uplink drops repeats); a restatement is only handed over", () => {
  const r = rig()
  r.sink.status()
  r.setPhase("detached")
  r.sink.status()
  assert.deepEqual(r.sent.map(([, f]) => [f.type, f.phase]), [["status", "measuring"], ["status", "detached"]])
  assert.equal(r.sink.feed.statusFrame.phase, "detached")
  r.setPhase("measuring")
  r.sink.restateStatus()
  assert.equal(r.sent.length, 2, "a restatement is not sent")
  assert.equal(r.sink.feed.statusFrame.phase, "measuring", "a reconnect says it")
})

test("starts: each call begun is handed to the feed, its settle and accounting too; the feed says which still run", () => {
  const r = rig()
  const running = { seq: 0, tool: "a", invokedAt: 1, depth: 0, parent: null, settledAt: null }
  const settled = { seq: 1, tool: "b", invokedAt: 2, depth: 0, parent: null, settledAt: null }
  const form = { seq: 2, tool: "f", invokedAt: 4, depth: 0, parent: null, settledAt: null, waiting: true, terminal: true }
  for (const c of [running, settled, form]) r.sink.start(c)
  r.sink.settled(settled)
  assert.equal(r.u.kicks, 3)
  assert.deepEqual(r.sent, [], "nothing sent: the uplink drains the feed at its flush")
  const [f] = r.sink.feed.starts()
  assert.deepEqual(f.calls.map((c) => [c.seq, !!c.waiting, c.invokedBy]), [[0, false, undefined], [2, true, "terminal"]])
  assert.deepEqual(r.sink.feed.seqs(), { open: 0, next: 3 })
  r.sink.accounted([running, settled])
  assert.deepEqual(r.sink.feed.seqs(), { open: 2, next: 3 })
  r.sink.settled(form)
  r.sink.reopened(form)
  assert.equal(form.begun.settled, false, "an adopted call runs again")
  const wait = form.begun
  r.sink.start({ ...form, waiting: false, invokedAt: 9 })
  assert.equal(wait.accounted, true, "a form's submit supersedes its wait")
})

test("payloads only to a relay that asked for them; facts and prompts to the relay only", () => {
  const r = rig()
  r.sink.payload({ seq: 0, arguments: "{}", result: "x", error: null })
  assert.equal(r.sent.length, 0)
  r.u.welcome = { payloads: true }
  r.sink.payload({ seq: 0, arguments: "{}", result: "x", error: null })
  r.sink.facts(0, { a: 1 })
  assert.deepEqual(r.sent.map(([, f]) => f.type), ["payload", "facts"])
  assert.equal("error" in r.sent[0][1], false, "no error: no error field")
  assert.deepEqual(r.posted, [], "nothing of these on the channel")
})

test("what restates the session is pushed as it changes: tools, status, ledger (once a task), the hello", () => {
  const r = rig()
  const t = r.collector.registry.registered({ name: "t", schemaBytes: 10, descriptor: null }, 2).full
  r.sink.tool(t, "registered")
  r.sink.listed({ ...t, name: "pending" })
  r.sink.rejected({ ...t, rejected: "duplicate" })
  assert.deepEqual(r.sent.map(([, f]) => [f.type, f.name, f.rejected]), [["tool", "t", undefined], ["tool", "t", "duplicate"]], "a listed tool's frame waits")
  r.sink.status()
  const pushed = r.u.dirty.length
  r.sink.ledger()
  r.sink.ledger()
  r.sink.ledger()
  assert.equal(r.u.dirty.length, pushed, "a registry change's ledger is made at the end of the task")
  r.runMicrotasks()
  assert.equal(r.u.dirty.length, pushed + 1, "three changes in a task: one ledger frame")
  r.sink.ledger(true)
  assert.equal(r.u.dirty.length, pushed + 2, "a batch of accounted calls: made now")
  const out = r.sink.feed.replay()
  assert.deepEqual(out.map((f) => [f.type, f.name]), [["tool", "t"], ["tool", "pending"], ["status", undefined], ["ledger", undefined]])
  r.g.document.title = "Cart"
  r.sink.event({ at: 3, kind: "visibility", detail: { state: "hidden" } })
  const h = r.sink.feed.about
  assert.deepEqual([h.session.id, h.session.title, h.session.attachedAt, h.session.timeOrigin, h.config.buffer], ["abcdef01", "Cart", 1000, 42, 100])
})

test("what waits leaves now (deliver): a registry change's ledger first, then the uplink's batch", () => {
  const r = rig()
  let flushed = 0
  r.u.flush = () => flushed++
  const before = r.u.dirty.length
  r.sink.ledger()
  r.sink.deliver()
  assert.deepEqual([r.u.dirty.length - before, flushed], [1, 1])
  r.runMicrotasks()
  assert.equal(r.u.dirty.length - before, 1, "made once")
})

test("relayed sessions: a feed each, a span once, an update changes the held span", () => {
  const r = rig()
  r.sink.foreignSession("eeeeeeee")
  assert.equal(r.u.feeds[0].id, "eeeeeeee")
  assert.equal(r.u.feeds[0].about.session.via, "abcdef01")
  const s = { sessionId: "eeeeeeee", seq: 3, blockingMs: 0 }
  r.sink.foreignSpan(s)
  r.sink.foreignSpan({ ...s })
  assert.equal(r.u.ready, 1, "a seq already held is not ready again")
  r.sink.foreignUpdate({ sessionId: "eeeeeeee", seq: 3, blockingMs: 7 })
  assert.equal(s.blockingMs, 7)
  assert.deepEqual(r.sent.map(([id, f]) => [id, f.type]), [["eeeeeeee", "update"]])
  r.sink.foreignSpan({ sessionId: "ffffffff", seq: 0 })
  assert.equal(r.u.ready, 1, "a session the channel never announced is not carried")
})

test("rename: the uplink's feed goes on under a new id; the collector, the channel and the hook follow, and it is restated", () => {
  const r = rig()
  let heard = null
  r.sink.onRename = (id) => (heard = id)
  r.sink.tool(r.collector.registry.registered({ name: "t", schemaBytes: 10, descriptor: null }, 2).full, "registered")
  r.sink.status()
  r.sink.foreignSession("eeeeeeee")
  r.sink.feed.renamed("12345678")
  assert.deepEqual([r.collector.sessionId, r.ch.sessionId, heard], ["12345678", "12345678", "12345678"])
  const out = r.sink.feed.replay()
  assert.deepEqual(out.map((f) => [f.type, f.session]), [["tool", "12345678"], ["status", "12345678"], ["ledger", "12345678"]])
  assert.equal(r.sink.feed.about.session.id, "12345678")
  assert.equal(r.u.feeds[0].about.session.via, "12345678", "a relayed session comes through the new id")
})

test("payloads captured before the relay's welcome are held (at most 64) and leave only if it wants them", () => {
  const r = rig()
  for (let seq = 0; seq < 70; seq++) r.sink.payload({ seq, arguments: "{}", result: "ok" })
  assert.equal(r.sent.length, 0, "nothing leaves before the relay says whether it wants payloads")
  r.u.welcome = { relay: "wmcp-top", protocol: "wmcp-relay/1", payloads: true }
  r.u.onWelcome(r.u.welcome)
  assert.deepEqual(
    r.sent.map(([, f]) => [f.type, f.seq]),
    Array.from({ length: 64 }, (_, seq) => ["payload", seq]),
  )
  r.sink.payload({ seq: 70, arguments: "{}", result: "ok" })
  assert.equal(r.sent.at(-1)[1].seq, 70, "after the welcome: sent at once")
})

test("a relay that wants no payloads gets none, held or new", () => {
  const r = rig()
  r.sink.payload({ seq: 0, arguments: "{}", result: "ok" })
  r.u.welcome = { relay: "wmcp-top", protocol: "wmcp-relay/1", payloads: false }
  r.u.onWelcome(r.u.welcome)
  r.sink.payload({ seq: 1, arguments: "{}", result: "ok" })
  assert.equal(r.sent.length, 0)
})
