// The uplink's batch window: calls made within one window leave as one `spans` frame (one WebSocket send, one
// relay ack), not two frames per call; calls that settled within the window need no `start`; a call still
// running shows within the window; the window is 50 ms after a quiet spell and stretches to 250 ms while the
// page keeps calling; pagehide sends what the window holds before the bye. Each call runs on its own task.
import { test } from "node:test"
import assert from "node:assert/strict"
import { connectedAgent, settle, fakeWindow, DraftHost, watchAccounting } from "../test-support/helpers.mjs"
import { agentOf } from "../src/page/index.js"
import { FLUSH_MS, MAX_FLUSH_MS, BUSY_MS } from "../src/transport/uplink.js"
import { QUIET_WAIT_MS } from "../src/transport/pacing.js"

async function batched(g, host) {
  const ctx = await connectedAgent({ g, host, config: { flushMs: FLUSH_MS } })
  await ctx.host.registerTool({ name: "t", description: "t", inputSchema: { type: "object" }, execute: () => "x".repeat(1024) })
  await settle()
  ctx.env.run()
  ctx.env.advance(FLUSH_MS)
  ctx.env.advance(BUSY_MS) // a quiet spell: the next window is FLUSH_MS
  return ctx
}

/** One call on its own task (its accounting and any flush the agent schedules run before the next). */
async function call(ctx, name = "t") {
  ctx.env.tick(2)
  await ctx.host.executeTool({ name }, {})
  ctx.env.run()
}

test("the agent batches by default: the window is FLUSH_MS, at most 50 ms", () => {
  assert.ok(FLUSH_MS > 0 && FLUSH_MS <= 50)
})

test("calls within one window: one spans frame when the window ends, no start for calls already settled", async () => {
  const ctx = await batched()
  const before = ctx.ws.sent.length
  for (let i = 0; i < 10; i++) await call(ctx) // 20 ms of calls, inside one window
  assert.deepEqual(ctx.ws.sent.slice(before), [], "nothing written until the window ends")
  ctx.env.advance(FLUSH_MS)
  // (the status the first call changes, and the ledger, ride in the same flush)
  const sent = ctx.ws.sent.slice(before).filter((f) => f.type !== "status" && f.type !== "ledger")
  assert.deepEqual(sent.map((f) => f.type), ["spans"], "one frame: every call settled before the window ended")
  assert.deepEqual(sent[0].spans.map((s) => s.seq), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
  // The relay's one ack covers the batch.
  ctx.ws.deliver({ type: "ack", session: ctx.id, seq: 9 })
  assert.equal(agentOf(ctx.api).sink.feed.delivery.acked, 9)
  ctx.env.advance(1000)
  assert.equal(ctx.ws.frames("spans").length, 1, "nothing sent twice")
})

test("100 calls over a second: frames follow the windows, not the calls", async () => {
  const ctx = await batched()
  const before = ctx.ws.sent.length
  for (let i = 0; i < 100; i++) {
    await call(ctx)
    ctx.env.advance(8) // 10 ms a call with call()'s 2 ms
  }
  ctx.env.advance(MAX_FLUSH_MS + QUIET_WAIT_MS)
  const sent = ctx.ws.sent.slice(before)
  const spans = sent.filter((f) => f.type === "spans")
  assert.deepEqual(spans.flatMap((f) => f.spans.map((s) => s.seq)), Array.from({ length: 100 }, (_, i) => i), "every span once, in order")
  // the first window after the quiet spell is FLUSH_MS, then the page is busy: MAX_FLUSH_MS windows
  assert.ok(spans.length <= Math.ceil(1000 / MAX_FLUSH_MS) + 2, `${spans.length} spans frames for 100 calls`)
  assert.equal(sent.filter((f) => f.type === "start").length, 0, "every call settled within its window")
})

test("the window: FLUSH_MS after a quiet spell, MAX_FLUSH_MS while the page keeps calling, FLUSH_MS again after BUSY_MS", async () => {
  const ctx = await batched()
  const spansAfter = async (ms) => {
    const before = ctx.ws.frames("spans").length
    await call(ctx) // the window opens as the call starts
    ctx.env.advance(ms)
    return ctx.ws.frames("spans").length - before
  }
  assert.equal(await spansAfter(FLUSH_MS), 1, "quiet: out within FLUSH_MS")
  assert.equal(await spansAfter(FLUSH_MS), 0, "busy: not yet at FLUSH_MS")
  ctx.env.advance(MAX_FLUSH_MS - FLUSH_MS)
  assert.equal(ctx.ws.frames("spans").length, 2, "busy, no call under way: out at MAX_FLUSH_MS")
  ctx.env.advance(BUSY_MS)
  assert.equal(await spansAfter(FLUSH_MS), 1, "quiet again: FLUSH_MS")
})

test("a busy page's window ending during a call: the batch leaves right after that call is accounted", async () => {
  const ctx = await batched()
  let release = null
  await busyAfter(ctx, { name: "slow", execute: () => new Promise((r) => (release = r)) })
  const p = ctx.host.executeTool({ name: "slow" }, {}) // under way when the busy window ends
  await settle()
  ctx.env.run()
  ctx.env.advance(MAX_FLUSH_MS)
  assert.equal(ctx.ws.frames("spans").length, 1, "waiting for the call under way")
  release("done")
  await p
  await settle() // accounted behind the page's continuation: the quiet moment
  assert.deepEqual(ctx.ws.frames("spans").map((f) => f.spans.map((s) => s.tool)), [["t"], ["t", "slow"]], "both calls, in one frame")
  ctx.env.advance(QUIET_WAIT_MS)
  assert.equal(ctx.ws.frames("spans").length, 2, "the deadline timer was cleared")
})

/** Two calls after a quiet spell (the first batch leaves, the page is busy); `extra` registered beforehand. */
async function busyAfter(ctx, extra) {
  await ctx.host.registerTool({ description: extra.name, inputSchema: { type: "object" }, ...extra })
  await settle()
  ctx.env.run()
  ctx.env.advance(FLUSH_MS + BUSY_MS)
  await call(ctx)
  ctx.env.advance(FLUSH_MS) // the first batch, after a quiet spell
  await call(ctx)
}

test("a call under way that outlasts QUIET_WAIT_MS: the batch leaves at the deadline", async () => {
  const ctx = await batched()
  await busyAfter(ctx, { name: "hang", execute: () => new Promise(() => {}) })
  ctx.host.executeTool({ name: "hang" }, {})
  await settle()
  ctx.env.run()
  ctx.env.advance(MAX_FLUSH_MS)
  assert.equal(ctx.ws.frames("spans").length, 1)
  ctx.env.advance(QUIET_WAIT_MS)
  assert.equal(ctx.ws.frames("spans").length, 2)
})

test("alignFlush: false sends a busy page's batch when its window ends", async () => {
  const ctx = await connectedAgent({ config: { flushMs: FLUSH_MS, alignFlush: false } })
  await busyAfter(ctx, { name: "t", execute: () => "x" })
  ctx.env.advance(MAX_FLUSH_MS)
  assert.equal(ctx.ws.frames("spans").length, 2)
})

test("a call still running shows within the window (its start frame), its span when it settles", async () => {
  const ctx = await batched()
  let release
  await ctx.host.registerTool({ name: "hang", description: "h", inputSchema: { type: "object" }, execute: () => new Promise((r) => (release = r)) })
  await settle()
  ctx.env.run()
  ctx.env.advance(FLUSH_MS)
  const p = ctx.host.executeTool({ name: "hang" }, {})
  await settle()
  ctx.env.run()
  assert.equal(ctx.ws.frames("start").length, 0)
  ctx.env.advance(FLUSH_MS)
  assert.deepEqual(ctx.ws.frames("start").flatMap((f) => f.calls.map((c) => c.tool)), ["hang"])
  assert.equal(ctx.ws.frames("spans").length, 0)
  release("done")
  await p
  await settle()
  ctx.env.run()
  ctx.env.advance(FLUSH_MS)
  assert.deepEqual(ctx.ws.frames("spans").flatMap((f) => f.spans.map((s) => s.tool)), ["hang"])
})

test("pagehide inside a window: the held spans leave before the bye", async () => {
  const host = new DraftHost()
  const g = fakeWindow({ host })
  const listeners = {}
  const listen = (type, fn) => ((listeners[type] ||= []).push(fn))
  g.addEventListener = listen
  g.document.addEventListener = listen
  const ctx = await batched(g, host)
  const before = ctx.ws.sent.length
  await call(ctx)
  await call(ctx)
  assert.deepEqual(ctx.ws.sent.slice(before), [])
  for (const fn of listeners.pagehide) fn({ persisted: false })
  const sent = ctx.ws.sent.slice(before).filter((f) => f.type !== "status" && f.type !== "ledger")
  assert.deepEqual(sent.map((f) => f.type), ["spans", "bye"])
  assert.deepEqual(sent[0].spans.map((s) => s.seq), [0, 1])
  const after = ctx.ws.sent.length
  ctx.env.advance(1000)
  assert.equal(ctx.ws.sent.length, after, "the window's timer sends nothing after the bye")
})

test("detach inside a window sends what it holds, then bye, and leaves no timer behind", async () => {
  const ctx = await batched()
  const before = ctx.ws.sent.length
  await call(ctx)
  ctx.api.detach()
  assert.deepEqual(ctx.ws.sent.slice(before).map((f) => f.type).filter((t) => t !== "status" && t !== "ledger"), ["spans", "bye"])
  ctx.env.advance(1000)
  assert.equal(ctx.ws.frames("spans").length, 1)
})

test("flushMs: the default window, 0 for every task, capped at 250 ms, junk gets the default", async () => {
  for (const [given, used] of [[undefined, FLUSH_MS], [0, 0], [20, 20], [10 ** 6, 250], ["soon", FLUSH_MS], [-5, FLUSH_MS]]) {
    const ctx = await connectedAgent({ config: { flushMs: given } })
    assert.equal(agentOf(ctx.api).uplink.pace.flushMs, used, String(given))
    ctx.api.detach()
  }
})

test("calls are accounted in the window they leave in: a busy page's all together, in one task, when it runs out", async () => {
  const ctx = await batched()
  const accounted = []
  watchAccounting(ctx.api, (span) => accounted.push([span.seq, ctx.env.clock()]))
  await call(ctx)
  assert.deepEqual(accounted, [], "after a quiet spell the call waits for the FLUSH_MS window too")
  ctx.env.advance(FLUSH_MS)
  assert.deepEqual(accounted.map(([seq]) => seq), [0])
  for (let i = 0; i < 10; i++) {
    await call(ctx)
    ctx.env.advance(8)
  }
  assert.equal(accounted.length, 1, "the busy page's calls wait for their window: none accounted call by call")
  ctx.env.advance(MAX_FLUSH_MS)
  assert.deepEqual(accounted.map(([seq]) => seq), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
  assert.equal(new Set(accounted.slice(1).map(([, at]) => at)).size, 1, "the ten accounted in one go")
  const spans = ctx.ws.frames("spans")
  assert.deepEqual(spans.at(-1).spans.map((s) => s.seq), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], "and out in the same task, one frame")
  await call(ctx)
  assert.equal(ctx.api.spans().length, 12, "a read completes the accounting a window holds")
  assert.equal(accounted.length, 12)
  await call(ctx)
  assert.equal(ctx.api.overhead().accounted, 13, "overhead() too: its count covers every call made")
})

test("a window holds 64 calls at most: the 64th has them accounted without waiting for its end", async () => {
  const ctx = await batched()
  const accounted = []
  watchAccounting(ctx.api, (span) => accounted.push(span.seq))
  await call(ctx)
  ctx.env.advance(FLUSH_MS) // the first call's window: the page is busy from here
  for (let i = 0; i < 63; i++) await call(ctx)
  assert.equal(accounted.length, 1, "63 calls wait for the window")
  await call(ctx)
  assert.equal(accounted.length, 65, "the 64th lets them all through, within the window (no results held past 64)")
})
