// page/sink.js alone: what the collector says becomes frames for the uplink and messages for the channel, one way,
// with a stand-in collector, uplink and channel.
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
    openSeqs: () => ({ open: null, next: 0 }),
    lostFn: () => 0,
    rename(id) {
      this.sessionId = id
    },
  }
  const sink = new Sink({ g: { document: { title: "Shop", visibilityState: "visible" }, performance: { timeOrigin: 42 } }, env: { origin: "https://shop.example", path: "/", userAgent: "UA", context: "top" } })
  sink.collector = collector
  sink.connect(u, ch)
  return { sink, collector, u, ch, sent, posted, setPhase: (p) => (phase = p) }
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
  assert.equal(r.collector.lostFn(), 1, "the status's loss count is the feed's")
})

test("without an uplink: the channel only, and no feed", () => {
  const r = rig({ uplink: false })
  r.sink.span({ sessionId: "abcdef01", seq: 0 })
  r.sink.status()
  r.sink.event({ at: 1, kind: "reload", detail: {} })
  assert.deepEqual(r.posted, [["span", 0]])
  assert.equal(r.sink.feed, null)
})

test("status frames leave only when they say something new", () => {
  const r = rig()
  r.sink.status()
  r.sink.status()
  r.setPhase("detached")
  r.sink.status()
  assert.deepEqual(r.sent.map(([, f]) => [f.type, f.phase]), [["status", "measuring"], ["status", "detached"]])
})

test("starts: batched until the flush, only for calls still running (and a form's submit after its wait)", () => {
  const r = rig()
  const running = { seq: 0, tool: "a", invokedAt: 1, depth: 0, parent: null, settledAt: null }
  const settled = { seq: 1, tool: "b", invokedAt: 2, depth: 0, parent: null, settledAt: 3 }
  const form = { seq: 2, tool: "f", invokedAt: 4, depth: 0, parent: null, settledAt: null, waiting: true }
  for (const c of [running, settled, form]) r.sink.start(c)
  assert.equal(r.u.kicks, 3)
  assert.deepEqual(r.sent, [], "nothing before the flush")
  r.sink.feed.drain()
  const [[id, f]] = r.sent
  assert.equal(id, "abcdef01")
  assert.deepEqual(f.calls.map((c) => [c.seq, !!c.waiting]), [[0, false], [2, true]])
  form.waiting = false
  form.settledAt = 9
  r.sink.start(form)
  r.sink.feed.drain()
  assert.deepEqual(r.sent[1][1].calls.map((c) => c.seq), [2], "the submit of a form the relay saw waiting")
  r.u.open = false
  r.sink.start(running)
  assert.equal(r.sink.pendingStarts.length, 0, "no socket: nothing gathered (the replay says what runs)")
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

test("the feed's replay restates tools, status, ledger and the calls running; hello describes the session", () => {
  const r = rig()
  r.collector.registry.registered({ name: "t", schemaBytes: 10, descriptor: null }, 2)
  r.collector.registry.registered({ name: "gone", schemaBytes: 10, descriptor: null }, 2)
  r.collector.registry.unregistered("gone", 3)
  r.collector.inFlight.set(4, { seq: 4, tool: "t", invokedAt: 3, depth: 0, parent: null, waiting: true })
  const out = r.sink.feed.replay()
  assert.deepEqual(out.map((f) => f.type), ["tool", "status", "ledger", "start"])
  assert.equal(out[0].name, "t")
  assert.deepEqual(out[3].calls, [{ seq: 4, tool: "t", invokedAt: 3, depth: 0, parent: null, waiting: true }])
  r.sink.status()
  assert.equal(r.sent.length, 0, "the replayed status is the last one said")
  const h = r.sink.feed.hello()
  assert.deepEqual([h.session.id, h.session.title, h.session.attachedAt, h.session.timeOrigin, h.config.buffer], ["abcdef01", "Shop", 1000, 42, 100])
})

test("relayed sessions: a feed each, a span once, an update changes the held span", () => {
  const r = rig()
  r.sink.foreignSession("eeeeeeee")
  assert.equal(r.u.feeds[0].id, "eeeeeeee")
  assert.equal(r.u.feeds[0].hello().session.via, "abcdef01")
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

test("rename: a new id for the collector, the channel and the renamed hook; the status said again", () => {
  const r = rig()
  let heard = null
  r.sink.onRename = (id) => (heard = id)
  r.sink.status()
  const id = r.sink.feed.rename()
  assert.match(id, /^[0-9a-f]{8}$/)
  assert.notEqual(id, "abcdef01")
  assert.deepEqual([r.collector.sessionId, r.ch.sessionId, heard], [id, id, id])
  r.sink.status()
  assert.equal(r.sent.filter(([, f]) => f.type === "status").length, 2)
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
