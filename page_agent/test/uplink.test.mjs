// The uplink against a fake WebSocket: hello, acks, batching, replay after reconnect, exact `lost`,
// backoff capped at 5 s, relay errors, and never throwing into the page.
import { test } from "node:test"
import assert from "node:assert/strict"
import { setup, settle, fakeWindow, connectedAgent, DraftHost, FakeWebSocket, manualEnv, CANARY, RELAY } from "../test-support/helpers.mjs"
import { Uplink, LEDGER_EVERY_MS } from "../src/transport/uplink.js"
import { Feed } from "../src/transport/feed.js"
import { agentOf } from "../src/page/index.js"

async function connected(config = {}) {
  FakeWebSocket.instances = []
  const env = manualEnv()
  const ctx = setup({ env, config: { WebSocket: FakeWebSocket, uplink: RELAY, ...config } })
  const ws = FakeWebSocket.last()
  assert.equal(ws.url, RELAY)
  ws.accept()
  env.run()
  return { ...ctx, ws, id: ctx.api.sessionId }
}

async function register(ctx, name, execute) {
  await ctx.host.registerTool({ name, description: `${name} tool`, inputSchema: { type: "object" }, annotations: { readOnlyHint: true }, execute })
  await settle()
  ctx.env.run()
}

async function calls(ctx, name, n, input = {}) {
  for (let i = 0; i < n; i++) {
    ctx.env.tick(5)
    await ctx.host.executeTool({ name }, input)
  }
  ctx.env.run()
}

test("hello first, with session, config and lost; spans wait for the resume ack", async () => {
  const ctx = await connected({ buffer: 50, sample: 1, errorPolicy: "name" })
  const [hello] = ctx.ws.sent
  assert.equal(hello.type, "hello")
  assert.equal(hello.protocol, "wmcp-relay/1")
  assert.match(hello.agent, /^wmcp-top-agent\/\d+\.\d+\.\d+$/)
  assert.deepEqual(Object.keys(hello).sort(), ["agent", "cadence", "config", "lost", "protocol", "session", "type"])
  assert.equal(hello.cadence, true, "it follows the relay's watch frames (pacing.js)")
  assert.deepEqual(Object.keys(hello.session).sort(), ["attachedAt", "context", "id", "origin", "path", "timeOrigin", "title", "userAgent", "visibility"])
  assert.equal(hello.session.id, ctx.id)
  assert.equal(hello.session.context, "top")
  assert.equal(hello.session.origin, "http://127.0.0.1:8000")
  assert.equal(hello.session.path, "/shop")
  assert.deepEqual(hello.config, { sample: 1, buffer: 50, errorPolicy: "name" })
  assert.equal(hello.lost, 0)
  const status = ctx.ws.frames("status")[0]
  assert.equal(status.phase, "host-found")
  assert.deepEqual(Object.keys(status).sort(), ["coverage", "hints", "message", "phase", "reasons", "session", "type"])
  await register(ctx, "t", () => "x")
  await calls(ctx, "t", 2)
  assert.equal(ctx.ws.frames("spans").length, 0, "no spans before the relay says where to resume")
  ctx.ws.deliver({ type: "ack", session: ctx.id, seq: -1 })
  ctx.env.run()
  const frames = ctx.ws.frames("spans")
  assert.equal(frames.length, 1, "batched into one frame")
  assert.deepEqual(frames[0].spans.map((s) => s.seq), [0, 1])
  assert.equal(frames[0].floor, 0)
  assert.equal(frames[0].lost, 0)
  for (const s of frames[0].spans) assert.equal(s.overlapped, false, "overlapped is always sent")
})

test("start frames name the call the moment it is entered; tool frames carry the descriptor and annotations", async () => {
  const ctx = await connected()
  ctx.ws.deliver({ type: "ack", session: ctx.id, seq: -1 })
  let release
  await register(ctx, "hang", () => new Promise((r) => (release = r)))
  const tf = ctx.ws.frames("tool").find((f) => f.name === "hang")
  assert.equal(tf.change, "registered")
  assert.equal(tf.descriptor.name, "hang")
  assert.deepEqual(tf.annotationsSent, { readOnlyHint: true })
  assert.deepEqual(tf.annotationsKept, { consequentialHint: false, debugging: false, readOnlyHint: true, untrustedContentHint: false })
  assert.equal(tf.internal, false)
  const p = ctx.host.executeTool({ name: "hang" }, { q: CANARY })
  await settle()
  ctx.env.run()
  const [start] = ctx.ws.frames("start")
  assert.deepEqual(start.calls, [{ seq: 0, tool: "hang", invokedAt: ctx.env.clock(), depth: 0, parent: null }])
  assert.equal(ctx.ws.frames("spans").length, 0, "in flight: no span yet")
  release("done")
  await p
  await settle() // the accounting runs behind the page's own continuation
  ctx.env.run()
  assert.equal(ctx.ws.frames("spans").length, 1)
  assert.ok(!JSON.stringify(ctx.ws.sent).includes(CANARY), "no body on the socket")
})

test("ledger frames: throttled, rev increasing", async () => {
  const ctx = await connected()
  ctx.ws.deliver({ type: "ack", session: ctx.id, seq: -1 })
  await register(ctx, "t", () => 1)
  await calls(ctx, "t", 3)
  ctx.env.advance(LEDGER_EVERY_MS + 50)
  await calls(ctx, "t", 1)
  ctx.env.advance(LEDGER_EVERY_MS + 50)
  const revs = ctx.ws.frames("ledger").map((f) => f.rev)
  assert.ok(revs.length >= 2)
  for (let i = 1; i < revs.length; i++) assert.ok(revs[i] > revs[i - 1])
  const last = ctx.ws.frames("ledger").at(-1)
  assert.equal(last.ledger.totals.calls, 4)
})

test("reset() sends pending spans, then a reset event; seq keeps counting", async () => {
  const ctx = await connected()
  ctx.ws.deliver({ type: "ack", session: ctx.id, seq: -1 })
  await register(ctx, "t", () => 1)
  await calls(ctx, "t", 2)
  ctx.api.reset()
  ctx.env.run()
  await calls(ctx, "t", 1)
  const order = ctx.ws.sent.filter((f) => f.type === "spans" || (f.type === "event" && f.kind === "reset")).map((f) => (f.type === "spans" ? f.spans.map((s) => s.seq).join(",") : "reset"))
  assert.deepEqual(order, ["0,1", "reset", "2"])
})

test("reconnect: hello again with the same id; replay after the last ack; each span sent until acked", async () => {
  const ctx = await connected({ buffer: 100 })
  ctx.ws.deliver({ type: "ack", session: ctx.id, seq: -1 })
  await register(ctx, "t", () => "ok")
  await calls(ctx, "t", 5) // seq 0..4 sent
  ctx.ws.deliver({ type: "ack", session: ctx.id, seq: 2 }) // relay stored 0..2 only so far
  ctx.ws.drop()
  assert.equal(agentOf(ctx.api).uplink.state, "waiting")
  await calls(ctx, "t", 3) // 5..7 while down
  ctx.env.advance(250)
  const ws2 = FakeWebSocket.last()
  assert.notEqual(ws2, ctx.ws)
  ws2.accept()
  ctx.env.run()
  const hello = ws2.frames("hello")[0]
  assert.equal(hello.session.id, ctx.id)
  assert.deepEqual(ws2.frames("tool").map((f) => f.name), ["t"], "registry restated")
  ws2.deliver({ type: "ack", session: ctx.id, seq: 2 })
  ctx.env.run()
  const resent = ws2.frames("spans").flatMap((f) => f.spans.map((s) => s.seq))
  assert.deepEqual(resent, [3, 4, 5, 6, 7])
})

test("lost is exact: evicted before sent counts; evicted after the ack does not; unsure ones settle on the resume ack", async () => {
  const ctx = await connected({ buffer: 4 })
  ctx.ws.deliver({ type: "ack", session: ctx.id, seq: -1 })
  await register(ctx, "t", () => "ok")
  await calls(ctx, "t", 3) // 0,1,2 written
  ctx.ws.deliver({ type: "ack", session: ctx.id, seq: 0 }) // 0 stored; 1,2 written but unconfirmed
  ctx.ws.drop()
  await calls(ctx, "t", 6) // 3..8 while down; the ring (4) now holds 5..8: 0 stored, 1,2 unsure, 3,4 lost
  const delivery = agentOf(ctx.api).sink.feed.delivery
  assert.equal(delivery.lost, 2)
  assert.deepEqual(delivery.unsure, [1, 2])
  ctx.env.advance(250)
  const ws2 = FakeWebSocket.last()
  ws2.accept()
  ctx.env.run()
  assert.equal(ws2.frames("hello")[0].lost, 2)
  ws2.deliver({ type: "ack", session: ctx.id, seq: 1 }) // the relay did store 1, not 2
  ctx.env.run()
  assert.equal(delivery.lost, 3)
  const [frame] = ws2.frames("spans")
  assert.deepEqual(frame.spans.map((s) => s.seq), [5, 6, 7, 8])
  assert.equal(frame.floor, 5)
  assert.equal(frame.lost, 3)
  assert.equal(ctx.api.status().coverage, "incomplete")
  assert.match(ctx.api.status().reasons.join(" "), /3 span\(s\) evicted/)
})

test("at most 500 spans a frame", async () => {
  const ctx = await connected({ buffer: 1200 })
  await register(ctx, "t", () => 1)
  await calls(ctx, "t", 1100)
  ctx.ws.deliver({ type: "ack", session: ctx.id, seq: -1 })
  ctx.env.run()
  assert.deepEqual(ctx.ws.frames("spans").map((f) => f.spans.length), [500, 500, 100])
})

test("backoff: 250 ms doubling, capped at 5 s; no relay costs one timer; a fatal error stops it", async () => {
  FakeWebSocket.instances = []
  const env = manualEnv()
  const ctx = setup({ env, config: { WebSocket: FakeWebSocket, uplink: RELAY } })
  const gaps = []
  let last = env.clock()
  for (let i = 0; i < 9; i++) {
    const before = FakeWebSocket.instances.length
    FakeWebSocket.last().drop()
    while (FakeWebSocket.instances.length === before) env.advance(1)
    gaps.push(env.clock() - last)
    last = env.clock()
  }
  assert.deepEqual(gaps, [250, 500, 1000, 2000, 4000, 5000, 5000, 5000, 5000])
  assert.ok(env.timerCount() <= 1)
  const ws = FakeWebSocket.last()
  ws.accept()
  ws.deliver({ type: "error", code: "protocol_version", message: "no", fatal: true })
  assert.equal(agentOf(ctx.api).uplink.state, "stopped")
  assert.equal(ws.closedByAgent, true)
  env.advance(60000)
  assert.equal(FakeWebSocket.last(), ws, "no reconnect after a fatal error")
})

test("never throws into the page: a throwing constructor, garbage frames, send failures", async () => {
  let n = 0
  class Broken {
    constructor() {
      n++
      throw new Error("blocked by CSP")
    }
  }
  const env = manualEnv()
  const ctx = setup({ env, config: { WebSocket: Broken, uplink: RELAY } })
  env.advance(1000)
  assert.ok(n >= 2, "keeps retrying quietly")
  await ctx.host.registerTool({ name: "t", description: "d", execute: () => 1 })
  await settle()
  assert.equal(await ctx.host.executeTool({ name: "t" }, {}), "1")
  const u = new Uplink({ relay: { url: RELAY }, agent: "x/1", WebSocket: FakeWebSocket, setTimeout: env.setTimeout, clearTimeout: env.clearTimeout, schedule: env.schedule })
  u.start()
  const ws = FakeWebSocket.last()
  ws.accept()
  for (const junk of ["{", "null", "[]", JSON.stringify({ type: "ack", session: "zzz", seq: "x" }), JSON.stringify({ type: "ack" })]) ws.onmessage({ data: junk })
  ws.send = () => {
    throw new Error("buffer full")
  }
  u.addFeed(new Feed("abcdef01", { session: {}, config: {} }))
  env.run()
})

test("an unknown_session error re-sends hello for that session", async () => {
  const ctx = await connected()
  ctx.ws.deliver({ type: "ack", session: ctx.id, seq: -1 })
  ctx.ws.deliver({ type: "error", code: "unknown_session", message: "who?", fatal: false, session: ctx.id })
  ctx.env.run()
  assert.equal(ctx.ws.frames("hello").length, 2)
})

test("after pagehide's bye nothing more is sent for the session, until a bfcache restore says hello again", async () => {
  // Chromium fires visibilitychange (hidden) after pagehide: that event reached a relay that had ended the
  // session, which refused it as unknown_session (the red `rejected` on a normal close).
  const g = fakeWindow({ host: new DraftHost() })
  const listeners = {}
  const listen = (type, fn) => ((listeners[type] ||= []).push(fn))
  g.addEventListener = listen
  g.document.addEventListener = listen
  const fire = (type, e = {}) => (listeners[type] || []).forEach((fn) => fn(e))
  const { ws, env, id } = await connectedAgent({ g })
  fire("pagehide", { persisted: false })
  const before = ws.sent.length
  assert.deepEqual(ws.sent.at(-1), { type: "bye", session: id, reason: "pagehide" })
  g.document.visibilityState = "hidden"
  fire("visibilitychange")
  env.tick(1000)
  env.run()
  ws.deliver({ type: "error", code: "unknown_session", message: "ended", fatal: false, session: id })
  env.run()
  assert.deepEqual(ws.sent.slice(before), [], "nothing after bye, and no hello that would revive the session")
  fire("pageshow", { persisted: true })
  env.run()
  assert.equal(ws.frames("hello").length, 2, "back from the bfcache: hello again")
})

test("detach sends bye and closes the socket", async () => {
  const ctx = await connected()
  ctx.api.detach()
  const bye = ctx.ws.frames("bye")[0]
  assert.deepEqual(bye, { type: "bye", session: ctx.id, reason: "detach" })
  assert.equal(ctx.ws.frames("status").at(-1).phase, "detached")
  assert.equal(ctx.ws.closedByAgent, true)
  assert.equal(ctx.env.timerCount(), 0)
})

test("rate_limited: frames the relay dropped are sent again after a pause", async () => {
  const ctx = await connected()
  ctx.ws.deliver({ type: "ack", session: ctx.id, seq: -1 })
  await register(ctx, "t", () => 1)
  await calls(ctx, "t", 3)
  assert.deepEqual(ctx.ws.frames("spans").flatMap((f) => f.spans.map((s) => s.seq)), [0, 1, 2])
  ctx.ws.deliver({ type: "ack", session: ctx.id, seq: 0 })
  ctx.ws.deliver({ type: "error", code: "rate_limited", message: "slow down", fatal: false })
  await calls(ctx, "t", 1)
  assert.equal(ctx.ws.frames("spans").length, 1, "nothing while paused")
  ctx.env.advance(500)
  ctx.env.run()
  assert.deepEqual(ctx.ws.frames("spans").at(-1).spans.map((s) => s.seq), [1, 2, 3], "everything after the last ack")
  assert.equal(agentOf(ctx.api).uplink.info().rateLimited, 1)
})

for (const code of ["limit", "log_full"]) {
  test(`spans the relay refused (${code}, never acked) are kept, sent again after a pause, and said`, async () => {
    const ctx = await connected()
    ctx.ws.deliver({ type: "ack", session: ctx.id, seq: -1 })
    await register(ctx, "t", () => 1)
    await calls(ctx, "t", 3)
    ctx.ws.deliver({ type: "error", code, message: "not stored, not acked", fatal: false, session: ctx.id })
    ctx.ws.deliver({ type: "ack", session: ctx.id, seq: -1 })
    const uplink = agentOf(ctx.api).uplink
    assert.equal(uplink.info().refused, 1)
    assert.equal(uplink.info().lastRefusal, code)
    ctx.env.advance(500)
    ctx.env.run()
    assert.deepEqual(ctx.ws.frames("spans").at(-1).spans.map((s) => s.seq), [0, 1, 2], "every unacked span again")
  })
}

test("the resume secret from the hello's ack is presented in every later hello", async () => {
  const ctx = await connected()
  assert.equal(ctx.ws.frames("hello")[0].resume, undefined, "a first hello has no secret")
  const secret = "0123456789abcdef0123456789abcdef"
  ctx.ws.deliver({ type: "ack", session: ctx.id, seq: -1, resume: secret })
  ctx.ws.drop()
  ctx.env.advance(250)
  const ws2 = FakeWebSocket.last()
  assert.notEqual(ws2, ctx.ws)
  ws2.accept()
  ctx.env.run()
  assert.equal(ws2.frames("hello")[0].resume, secret)
  ws2.deliver({ type: "ack", session: ctx.id, seq: -1, resume: "not a secret" })
  ws2.drop()
  ctx.env.advance(250)
  FakeWebSocket.last().accept()
  ctx.env.run()
  assert.equal(FakeWebSocket.last().frames("hello")[0].resume, secret, "only a 32-hex secret replaces it")
})

test("a refused hello is tried again after a backoff, never in a loop, never given up", async () => {
  const ctx = await connected()
  // 64 live sessions: the hello is refused, and the frames sent behind it are unknown to the relay.
  ctx.ws.deliver({ type: "error", code: "session_limit", message: "full", fatal: false, session: ctx.id })
  ctx.ws.deliver({ type: "error", code: "unknown_session", message: "who?", fatal: false, session: ctx.id })
  ctx.env.run()
  assert.equal(ctx.ws.frames("hello").length, 1, "no hello storm on the refusals of the frames behind it")
  ctx.env.advance(250)
  ctx.env.run()
  assert.equal(ctx.ws.frames("hello").length, 2, "tried again after the backoff")
  for (let i = 0; i < 8; i++) {
    ctx.ws.deliver({ type: "error", code: "session_limit", message: "full", fatal: false, session: ctx.id })
    ctx.env.advance(5000)
    ctx.env.run()
  }
  assert.equal(ctx.ws.frames("hello").length, 10, "still trying, at most every 5 s")
  ctx.ws.deliver({ type: "ack", session: ctx.id, seq: -1 })
  await register(ctx, "t", () => 1)
  await calls(ctx, "t", 1)
  assert.deepEqual(ctx.ws.frames("spans").flatMap((f) => f.spans.map((s) => s.seq)), [0], "accepted at last: spans flow")
})

test("a first hello refused as taken goes on under a new id: what it holds, and everything after, under that id", async () => {
  const ctx = await connected()
  const old = ctx.id
  await register(ctx, "t", () => "x")
  await calls(ctx, "t", 2)
  const before = ctx.ws.sent.length
  ctx.ws.deliver({ type: "error", code: "session_taken", message: "another socket owns this session", fatal: false, session: old })
  ctx.env.run()
  const after = ctx.ws.sent.slice(before)
  const [hello] = after.filter((f) => f.type === "hello")
  assert.ok(hello, "said hello again at once, no backoff")
  const id = hello.session.id
  assert.match(id, /^[0-9a-f]{8}$/)
  assert.notEqual(id, old)
  assert.equal(hello.resume, undefined, "no secret: the old id was never ours")
  assert.equal(ctx.api.sessionId, id, "the console handle names the new id")
  assert.equal(agentOf(ctx.api).uplink.counters.renamed, 1)
  ctx.ws.deliver({ type: "ack", session: id, seq: -1, resume: "0123456789abcdef0123456789abcdef" })
  ctx.env.run()
  await calls(ctx, "t", 1)
  ctx.env.advance(5000)
  ctx.env.run()
  const later = ctx.ws.sent.slice(before)
  assert.deepEqual(later.filter((f) => f.session === old || (f.session && f.session.id === old)), [], "nothing more under the taken id")
  const spans = later.filter((f) => f.type === "spans").flatMap((f) => f.spans)
  assert.deepEqual(spans.map((s) => s.seq), [0, 1, 2], "the held spans, and the next, go under the new id")
  assert.deepEqual([...new Set(spans.map((s) => s.sessionId))], [id])
  assert.ok(later.some((f) => f.type === "tool" && f.session === id), "its tools restated under the new id")
  assert.ok(later.some((f) => f.type === "status" && f.session === id))
})

test("once the relay accepted our id, taken means our old socket is still closing: same id, after a backoff", async () => {
  const ctx = await connected()
  ctx.ws.deliver({ type: "ack", session: ctx.id, seq: -1, resume: "0123456789abcdef0123456789abcdef" })
  ctx.ws.drop()
  ctx.env.advance(250)
  const ws2 = FakeWebSocket.last()
  ws2.accept()
  ctx.env.run()
  ws2.deliver({ type: "error", code: "session_taken", message: "taken", fatal: false, session: ctx.id })
  ctx.env.run()
  assert.equal(ws2.frames("hello").length, 1, "no hello at once")
  ctx.env.advance(250)
  ctx.env.run()
  const hellos = ws2.frames("hello")
  assert.equal(hellos.length, 2, "tried again after the backoff")
  assert.equal(hellos[1].session.id, ctx.id, "the same id, with its secret")
  assert.equal(hellos[1].resume, "0123456789abcdef0123456789abcdef")
  assert.equal(agentOf(ctx.api).uplink.counters.renamed, 0)
})

test("a status frame leaves only when it says something new: after what was sent, or what a reconnect restated", async () => {
  const ctx = await connected()
  const agent = agentOf(ctx.api)
  const statuses = (ws) => ws.frames("status").map((f) => f.phase + (f.reasons.length ? ` (${f.reasons.join("; ")})` : ""))
  agent.sink.status()
  ctx.env.run()
  assert.deepEqual(statuses(ctx.ws), ["host-found"], "the same status again: not sent")
  await register(ctx, "t", () => "x")
  agent.sink.status()
  ctx.env.run()
  assert.deepEqual(statuses(ctx.ws), ["host-found", "tools-registered"])
  // A status that changes while no socket is there (a loss the feed reports) is restated by the next hello.
  ctx.ws.drop()
  agent.collector.lost = 1
  agent.sink.restateStatus()
  ctx.env.advance(250)
  const ws2 = FakeWebSocket.last()
  ws2.accept()
  ctx.env.run()
  assert.deepEqual(statuses(ws2), ["tools-registered (1 span(s) evicted before the relay stored them)"])
  agent.sink.status()
  ctx.env.run()
  assert.equal(ws2.frames("status").length, 1, "what the replay said is not said again")
})
