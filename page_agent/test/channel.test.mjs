// The BroadcastChannel mirror: validation, caps, rate limit, own messages, forwarding to the uplink.
import { test } from "node:test"
import assert from "node:assert/strict"
import { ChannelMirror, validateSpan, MAX_FOREIGN_SESSIONS, MAX_OUTBOX, PROFILER_FIELDS, READ_ONLY, postsSpans, terminalRoute } from "../src/page/channel.js"
import { channelBus, setup, settle, FakeWebSocket, manualEnv, fakeWindow, DraftHost } from "../test-support/helpers.mjs"
import { FLUSH_MS, MAX_FLUSH_MS, BUSY_MS, QUIET_WAIT_MS } from "../src/transport/pacing.js"
import { agentOf, attach } from "../src/page/index.js"

const span = (sessionId, seq, extra = {}) => ({
  sessionId, seq, tool: "search", invokedAt: seq * 10, settledAt: seq * 10 + 2, wallMs: 2, blockingMs: 0,
  inputBytes: 10, resultBytes: 100, contentTypes: { text: 1 }, imageBytes: 0, estInputTokens: 3,
  estTextTokens: 25, estImageTokens: 0, estTokens: 28, isError: false, error: null, gapSincePrevCallMs: null,
  synthetic: false, serializable: true, ...extra,
})

function mirror(opts = {}) {
  let t = 0
  opts = { uplink: true, ...opts }
  const got = { spans: [], updates: [], sessions: [] }
  const m = new ChannelMirror({
    name: "webmcp-perf:http://x",
    sessionId: "aaaaaaaa",
    BroadcastChannel: null,
    clock: () => t,
    onSpan: (s) => got.spans.push(s),
    onUpdate: (u) => got.updates.push(u),
    onSession: (id) => got.sessions.push(id),
    setTimeout: (fn) => fn(), // forward at once unless a test holds the timers
    ...opts,
  })
  return { m, got, tick: (ms) => (t += ms) }
}

test("valid spans and updates from another context are accepted, as clean copies", () => {
  const { m, got } = mirror()
  m.receive({ kind: "span", span: { ...span("bbbbbbbb", 0), extra: "dropped", resultType: "object", overlapped: false } })
  m.receive({ kind: "update", sessionId: "bbbbbbbb", seq: 0, blockingMs: 12 })
  assert.equal(got.spans.length, 1)
  assert.ok(!("extra" in got.spans[0]), "unknown fields never reach the relay")
  assert.equal(got.spans[0].resultType, "object")
  assert.deepEqual(got.updates, [{ sessionId: "bbbbbbbb", seq: 0, blockingMs: 12 }])
  assert.deepEqual(got.sessions, ["bbbbbbbb"])
  assert.equal(m.counters.accepted, 2)
})

test("bad messages are ignored and counted", () => {
  const { m, got } = mirror()
  const bad = [
    null, 42, "span", {}, { kind: "nope" },
    { kind: "span", span: span("BBBBBBBB", 0) },
    { kind: "span", span: span("bbbbbbbb", -1) },
    { kind: "span", span: span("bbbbbbbb", 1.5) },
    { kind: "span", span: span("bbbbbbbb", 0, { tool: "" }) },
    { kind: "span", span: span("bbbbbbbb", 0, { tool: "x".repeat(129) }) },
    { kind: "span", span: span("bbbbbbbb", 0, { wallMs: Infinity }) },
    { kind: "span", span: span("bbbbbbbb", 0, { wallMs: NaN }) },
    { kind: "span", span: span("bbbbbbbb", 0, { resultBytes: -5 }) },
    { kind: "span", span: span("bbbbbbbb", 0, { error: 42 }) },
    { kind: "span", span: span("bbbbbbbb", 0, { isError: "yes" }) },
    { kind: "span", span: span("bbbbbbbb", 0, { contentTypes: [1] }) },
    { kind: "span", span: span("bbbbbbbb", 0, { gapSincePrevCallMs: -1 }) },
    { kind: "span", span: (() => { const s = span("bbbbbbbb", 0); delete s.estTokens; return s })() },
    { kind: "update", sessionId: "bbbbbbbb", seq: 0, blockingMs: -1 },
    { kind: "update", sessionId: "cccccccc", seq: 0, blockingMs: 1 },
  ]
  for (const msg of bad) m.receive(msg)
  assert.equal(got.spans.length, 0)
  assert.equal(got.updates.length, 0)
  assert.equal(m.counters.invalid, bad.length)
  assert.equal(m.counters.received, bad.length)
})

test("a span whose error text is over 200 characters is kept, its text cut to 200 (webmcp-profiler's reader)", () => {
  const { m, got } = mirror()
  m.receive({ kind: "span", span: span("bbbbbbbb", 0, { isError: true, error: "e".repeat(100_000) }) })
  m.receive({ kind: "span", span: span("bbbbbbbb", 1, { isError: true, error: `${"f".repeat(200)}\u2026` }) })
  assert.deepEqual(got.spans.map((s) => s.error), ["e".repeat(200), `${"f".repeat(200)}\u2026`])
  assert.equal(m.counters.invalid, 0)
})

test("its own messages are ignored", () => {
  const { m, got } = mirror()
  m.receive({ kind: "span", span: span("aaaaaaaa", 0) })
  m.receive({ kind: "update", sessionId: "aaaaaaaa", seq: 0, blockingMs: 1 })
  m.receive({ kind: "wmcp-top", sessionId: "aaaaaaaa", uplink: true })
  assert.equal(got.spans.length, 0)
  assert.equal(m.counters.own, 3)
})

test("at most 8 foreign sessions", () => {
  const { m, got } = mirror()
  for (let i = 0; i < MAX_FOREIGN_SESSIONS + 2; i++) m.receive({ kind: "span", span: span(`0000000${i}`.slice(-8).replace(/^0/, "b"), 0) })
  assert.equal(got.sessions.length, 8)
  assert.equal(m.counters.sessionCap, 2)
})

test("rate limited: a flood is cut to the budget and recovers with time", () => {
  const { m, got, tick } = mirror({ rate: 100 })
  for (let i = 0; i < 1000; i++) m.receive({ kind: "span", span: span("bbbbbbbb", i) })
  assert.equal(got.spans.length, 200, "burst of 2x rate")
  assert.equal(m.counters.rateLimited, 800)
  tick(1000)
  for (let i = 1000; i < 1200; i++) m.receive({ kind: "span", span: span("bbbbbbbb", i) })
  assert.equal(got.spans.length, 300, "one second refills `rate` messages")
})

test("a session that announced its own uplink is not forwarded again", () => {
  const { m, got } = mirror()
  m.receive({ kind: "wmcp-top", sessionId: "dddddddd", uplink: true })
  m.receive({ kind: "span", span: span("dddddddd", 0) })
  assert.equal(got.spans.length, 0)
  assert.equal(m.counters.direct, 1)
})

test("a new session is held back until its agent had time to announce its own uplink", () => {
  const timers = []
  const { m, got } = mirror({ setTimeout: (fn, ms) => timers.push({ fn, ms }) })
  m.receive({ kind: "span", span: span("dddddddd", 0) })
  m.receive({ kind: "update", sessionId: "dddddddd", seq: 0, blockingMs: 3 })
  m.receive({ kind: "span", span: span("eeeeeeee", 0) })
  assert.equal(got.spans.length, 0, "nothing forwarded yet")
  assert.deepEqual(timers.map((t) => t.ms), [1000, 1000])
  m.receive({ kind: "wmcp-top", sessionId: "dddddddd", uplink: true }) // d is a wmcp-top agent with its own uplink
  for (const t of timers) t.fn()
  assert.deepEqual(got.sessions, ["eeeeeeee"], "only the silent one is relayed")
  assert.deepEqual(got.spans.map((s) => s.sessionId), ["eeeeeeee"])
  m.receive({ kind: "span", span: span("dddddddd", 1) })
  assert.equal(got.spans.length, 1)
})

test("a new wmcp-top peer is answered with our own announcement, once", () => {
  const bus = channelBus()
  const m = new ChannelMirror({ name: "c", sessionId: "aaaaaaaa", uplink: true, BroadcastChannel: bus.BroadcastChannel })
  const peer = new bus.BroadcastChannel("c")
  const heard = []
  peer.onmessage = (e) => heard.push(e.data)
  peer.postMessage({ kind: "wmcp-top", sessionId: "bbbbbbbb", uplink: true })
  peer.postMessage({ kind: "wmcp-top", sessionId: "bbbbbbbb", uplink: true })
  assert.deepEqual(heard, [{ kind: "wmcp-top", sessionId: "aaaaaaaa", uplink: true }])
  m.close()
  peer.close()
})

test("a fake announcement (00000000, or any lower id) cannot stop this agent forwarding other sessions", () => {
  const { m, got } = mirror({ uplink: true })
  m.receive({ kind: "wmcp-top", sessionId: "00000000", uplink: true }) // any same-origin script can post this
  m.receive({ kind: "wmcp-top", sessionId: "00000001", uplink: true })
  m.receive({ kind: "span", span: span("eeeeeeee", 0) })
  m.receive({ kind: "span", span: span("eeeeeeee", 1) })
  assert.deepEqual(got.sessions, ["eeeeeeee"], "still forwarded: the relay keeps one copy when several agents forward")
  assert.deepEqual(got.spans.map((s) => s.seq), [0, 1])
})

test("validateSpan keeps exactly the wire fields", () => {
  const v = validateSpan(span("bbbbbbbb", 3, { depth: 2, parent: 1, envelope: true, substituted: false, overlapped: true, resultType: "bogus" }))
  assert.equal(v.depth, 2)
  assert.equal(v.parent, 1)
  assert.ok(!("resultType" in v), "an invalid optional fact is dropped, not fatal")
})

test("end to end: spans mirror on the channel with webmcp-profiler's 20 fields; a relayed session is forwarded, 500 spans max", async () => {
  FakeWebSocket.instances = []
  const bus = channelBus()
  const env = manualEnv()
  // The page under test: uplink to the relay.
  const ctx = setup({ env, config: { channelRate: 1000, BroadcastChannel: bus.BroadcastChannel, WebSocket: FakeWebSocket, uplink: "ws://127.0.0.1:1/relay?t=x" } })
  const ws = FakeWebSocket.last()
  ws.accept()
  env.run()
  ws.deliver({ type: "ack", session: ctx.api.sessionId, seq: -1 })
  env.run()
  // Another context (a webmcp-profiler tab, say) posts its spans.
  const other = new bus.BroadcastChannel(`webmcp-perf:${ctx.g.location.origin}`)
  for (let i = 0; i < 520; i++) other.postMessage({ kind: "span", span: span("eeeeeeee", i) })
  env.advance(1000) // nobody announced an uplink for eeeeeeee: forward it
  env.run()
  const hellos = ws.frames("hello")
  const relayed = hellos.find((h) => h.session.id === "eeeeeeee")
  assert.ok(relayed, "the foreign session says hello")
  assert.equal(relayed.session.context, "relayed")
  assert.equal(relayed.session.via, ctx.api.sessionId)
  ws.deliver({ type: "ack", session: "eeeeeeee", seq: -1 })
  env.run()
  const sent = ws.frames("spans").filter((f) => f.session === "eeeeeeee").flatMap((f) => f.spans)
  assert.equal(sent.length, 500, "the newest 500 are held and forwarded")
  assert.equal(sent[0].seq, 20)
  assert.equal(agentOf(ctx.api).sink.foreign.get("eeeeeeee").delivery.lost, 20)
  // Our own spans go out on the channel with exactly 000's fields.
  await ctx.host.registerTool({ name: "t", description: "d", execute: () => "x" })
  await settle()
  await ctx.host.executeTool({ name: "t" }, {})
  env.run()
  const mine = bus.log.filter((e) => e.data.kind === "span" && e.data.span.sessionId === ctx.api.sessionId)
  assert.equal(mine.length, 1)
  assert.equal(Object.keys(mine[0].data.span).length, 20)
  ctx.api.detach()
  other.close()
})

// ---- our own spans leave in batches (pacing.js) ---------------------------------------------------------

/** A mirror posting on a fake bus with manual timers; `heard` is what another context receives. */
function batchedMirror(opts = {}) {
  const bus = channelBus()
  const env = manualEnv()
  const m = new ChannelMirror({ name: "c", sessionId: "aaaaaaaa", uplink: true, BroadcastChannel: bus.BroadcastChannel, clock: env.clock, setTimeout: env.setTimeout, clearTimeout: env.clearTimeout, ...opts })
  const peer = new bus.BroadcastChannel("c")
  const heard = []
  peer.onmessage = (e) => heard.push(e.data)
  return { m, env, heard, kinds: () => heard.map((d) => (d.kind === "span" ? `span ${d.span.seq}` : d.kind === "update" ? `update ${d.seq}` : d.gone ? "gone" : d.kind)) }
}

test("own spans wait for the window and leave together, in order, each its own message", () => {
  const { m, env, heard, kinds } = batchedMirror()
  m.span(span("aaaaaaaa", 0))
  env.advance(10)
  m.span(span("aaaaaaaa", 1))
  m.update("aaaaaaaa", 0, 7)
  assert.deepEqual(heard, [], "nothing posted inside the window")
  env.advance(FLUSH_MS - 10)
  assert.deepEqual(kinds(), ["span 0", "span 1", "update 0"])
  assert.deepEqual(Object.keys(heard[0].span).sort(), [...PROFILER_FIELDS].sort(), "still webmcp-profiler's message")
  assert.deepEqual(heard[2], { kind: "update", sessionId: "aaaaaaaa", seq: 0, blockingMs: 7 })
})

test("the window: FLUSH_MS after a quiet spell, MAX_FLUSH_MS while spans keep coming, FLUSH_MS again after BUSY_MS", () => {
  const { m, env, kinds } = batchedMirror()
  m.span(span("aaaaaaaa", 0))
  env.advance(FLUSH_MS)
  assert.deepEqual(kinds(), ["span 0"])
  m.span(span("aaaaaaaa", 1)) // a batch left just now: busy
  env.advance(MAX_FLUSH_MS - 1)
  assert.deepEqual(kinds(), ["span 0"], "a busy page's window is MAX_FLUSH_MS")
  env.advance(1)
  assert.deepEqual(kinds(), ["span 0", "span 1"])
  env.advance(BUSY_MS)
  m.span(span("aaaaaaaa", 2))
  env.advance(FLUSH_MS)
  assert.deepEqual(kinds(), ["span 0", "span 1", "span 2"], "quiet again: FLUSH_MS")
})

test("an announcement posts what the window held first; close flushes, then says gone, and leaves no timer", () => {
  const { m, env, kinds } = batchedMirror()
  m.span(span("aaaaaaaa", 0))
  m.announce()
  assert.deepEqual(kinds(), ["span 0", "wmcp-top"])
  m.span(span("aaaaaaaa", 1))
  m.close()
  assert.deepEqual(kinds(), ["span 0", "wmcp-top", "span 1", "gone"])
  env.advance(1000)
  assert.equal(kinds().length, 4, "the window's timer posts nothing after close")
})

test("the window holds at most MAX_OUTBOX messages: the oldest go, counted", () => {
  const { m, env, heard } = batchedMirror()
  for (let i = 0; i < MAX_OUTBOX + 5; i++) m.span(span("aaaaaaaa", i))
  env.advance(FLUSH_MS)
  assert.equal(heard.length, MAX_OUTBOX)
  assert.equal(heard[0].span.seq, 5)
  assert.equal(m.counters.outboxDropped, 5)
})

test("flushMs 0 posts each message at once", () => {
  const { m, kinds } = batchedMirror({ flushMs: 0 })
  m.span(span("aaaaaaaa", 0))
  assert.deepEqual(kinds(), ["span 0"])
})

test("pagehide posts the agent's held spans before the page goes, with or without an uplink", async () => {
  const bus = channelBus()
  const host = new DraftHost()
  const g = fakeWindow({ host })
  const listeners = {}
  g.addEventListener = (type, fn) => (listeners[type] ||= []).push(fn)
  const env = manualEnv()
  setup({ env, g, host, config: { flushMs: FLUSH_MS, BroadcastChannel: bus.BroadcastChannel } })
  await host.registerTool({ name: "t", description: "t", inputSchema: { type: "object" }, execute: () => "ok" })
  await settle()
  await host.executeTool({ name: "t" }, {})
  env.run()
  assert.deepEqual(bus.log.filter((e) => e.data.kind === "span"), [], "held by the window")
  for (const fn of listeners.pagehide) fn({ persisted: false })
  assert.deepEqual(bus.log.filter((e) => e.data.kind === "span").map((e) => e.data.span.tool), ["t"])
})

test("alignQuiet: a busy page's batch, its window over during a call, waits for quiet(), QUIET_WAIT_MS at most", () => {
  let calling = true
  const { m, env, kinds } = batchedMirror({ alignQuiet: true, calling: () => calling })
  m.span(span("aaaaaaaa", 0))
  env.advance(FLUSH_MS)
  assert.deepEqual(kinds(), ["span 0"], "after a quiet spell: when the window ends")
  m.span(span("aaaaaaaa", 1))
  env.advance(MAX_FLUSH_MS)
  assert.deepEqual(kinds(), ["span 0"], "busy: waiting for the page's quiet moment")
  m.quiet()
  assert.deepEqual(kinds(), ["span 0", "span 1"])
  m.span(span("aaaaaaaa", 2))
  env.advance(MAX_FLUSH_MS + QUIET_WAIT_MS)
  assert.deepEqual(kinds(), ["span 0", "span 1", "span 2"], "no quiet moment came: out at the deadline")
  m.quiet()
  assert.equal(kinds().length, 3, "quiet() with nothing waiting posts nothing")
  calling = false
  m.span(span("aaaaaaaa", 3))
  env.advance(MAX_FLUSH_MS)
  assert.deepEqual(kinds().at(-1), "span 3", "no call under way: out when the window ends")
})

// ---- which routes post our spans (issue 33, decision 1) ----------------------------------------------------

test("a terminal route reads the channel and posts no span unless the page asks: relay: true, or the overlay", () => {
  assert.equal(terminalRoute({}).relay, READ_ONLY)
  assert.equal(terminalRoute({ relay: "yes", sample: 0.5 }).relay, READ_ONLY)
  assert.deepEqual(terminalRoute({ relay: true, sample: 0.5 }), { relay: true, sample: 0.5 })
  assert.equal(terminalRoute({ relay: false }).relay, false, "the privacy switch stays: no channel at all")
  assert.equal(postsSpans(terminalRoute({}), true), false)
  assert.equal(postsSpans(terminalRoute({ relay: true }), true), true)
  assert.equal(postsSpans({ ...terminalRoute({}), overlay: true }, true), true, "?perf=overlay")
  assert.equal(postsSpans(terminalRoute({}), false), true, "no uplink: the channel is its only way out")
  assert.equal(postsSpans({ relay: true }, true), true, "webmcp-profiler's default (attachProfiler)")
})

async function routed(config, later) {
  FakeWebSocket.instances = []
  const bus = channelBus()
  const env = manualEnv()
  const ctx = setup({ env, config: { BroadcastChannel: bus.BroadcastChannel, WebSocket: FakeWebSocket, uplink: "ws://127.0.0.1:1/relay?t=x", ...config } })
  const ws = FakeWebSocket.last()
  ws.accept()
  env.run()
  ws.deliver({ type: "ack", session: ctx.api.sessionId, seq: -1 })
  env.run()
  if (later) later(ctx)
  const other = new bus.BroadcastChannel(`webmcp-perf:${ctx.g.location.origin}`)
  other.postMessage({ kind: "span", span: span("eeeeeeee", 0) })
  await ctx.host.registerTool({ name: "t", description: "d", execute: () => "x" })
  await settle()
  for (let i = 0; i < 3; i++) await ctx.host.executeTool({ name: "t" }, {})
  env.run()
  const mine = bus.log.filter((e) => (e.data.kind === "span" || e.data.kind === "update") && e.data.sessionId !== "eeeeeeee" && (!e.data.span || e.data.span.sessionId === ctx.api.sessionId))
  const counters = ctx.api.channel()
  const sent = ws.frames("spans").filter((f) => f.session === ctx.api.sessionId).flatMap((f) => f.spans)
  ctx.api.detach()
  other.close()
  return { mine, counters, sent }
}

test("the script tag's agent posts nothing per span, still reads the channel, and sends every span on its uplink", async () => {
  const { mine, counters, sent } = await routed(terminalRoute({ channelRate: 1000 }))
  assert.equal(mine.length, 0, "no span or update of ours on the channel")
  assert.equal(counters.accepted, 1, "the other context's span was read")
  assert.deepEqual(sent.map((s) => s.seq), [0, 1, 2])
})

test("relay: true, the overlay, and page code calling attachProfiler() on a live agent post every span", async () => {
  for (const [name, config, later] of [
    ["relay: true", terminalRoute({ relay: true }), null],
    ["overlay", { ...terminalRoute({}), overlay: true }, null],
    ["attachProfiler()", terminalRoute({}), (ctx) => assert.equal(attach({ global: ctx.g }), ctx.api, "the live agent")],
  ]) {
    const { mine, sent } = await routed(config, later)
    assert.deepEqual(mine.filter((e) => e.data.kind === "span").map((e) => e.data.span.seq), [0, 1, 2], name)
    assert.equal(sent.length, 3, name)
  }
})
