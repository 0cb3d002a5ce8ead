// The uplink's cadence follows what is watched (pacing.js, issue 33): the relay's `watch` frame says whether a
// viewer shows the session. Unwatched: at most one flush per interval, sooner only at the buffer's mark, nothing
// while idle; a session that becomes watched sends what it holds at once. Never told: watched (today's windows).
import { test } from "node:test"
import assert from "node:assert/strict"
import { connectedAgent, settle } from "../test-support/helpers.mjs"
import { agentOf } from "../src/page/index.js"
import { FLUSH_MS, MAX_FLUSH_MS, BUSY_MS } from "../src/transport/uplink.js"
import { QUIET_WAIT_MS, UNWATCHED_MS, UNWATCHED_LEDGER_MS, readWatch, unwatchedMark } from "../src/transport/pacing.js"

async function agent(config = {}, watch = { watched: false, intervalMs: UNWATCHED_MS }) {
  const ctx = await connectedAgent({ config: { flushMs: FLUSH_MS, ...config } })
  await ctx.host.registerTool({ name: "t", description: "t", inputSchema: { type: "object" }, execute: () => "x".repeat(1024) })
  await settle()
  ctx.env.run()
  if (watch) ctx.ws.deliver({ type: "watch", session: ctx.id, ...watch })
  ctx.env.advance(BUSY_MS + MAX_FLUSH_MS) // what registering sent has left; a quiet spell
  return ctx
}

async function call(ctx) {
  ctx.env.tick(2)
  await ctx.host.executeTool({ name: "t" }, {})
  ctx.env.run()
}

const spansFrames = (ctx, from) => ctx.ws.sent.slice(from).filter((f) => f.type === "spans")

test("unwatched: 100 calls over a second leave in at most two frames, every span once, in order", async () => {
  const ctx = await agent()
  const before = ctx.ws.sent.length
  for (let i = 0; i < 100; i++) {
    await call(ctx)
    ctx.env.advance(8)
  }
  ctx.env.advance(UNWATCHED_MS + QUIET_WAIT_MS)
  const spans = spansFrames(ctx, before)
  assert.deepEqual(spans.flatMap((f) => f.spans.map((s) => s.seq)), Array.from({ length: 100 }, (_, i) => i))
  assert.ok(spans.length <= 2, `${spans.length} spans frames in a second unwatched (watched: about 5)`)
  const frames = ctx.ws.sent.slice(before).length
  assert.ok(frames <= 6, `${frames} frames in all (spans, ledger, status) in a second`)
})

test("watched (or never told): the windows stay as they were", async () => {
  for (const watch of [null, { watched: true, intervalMs: 250 }]) {
    const ctx = await agent({}, watch)
    const before = ctx.ws.sent.length
    await call(ctx)
    ctx.env.advance(FLUSH_MS)
    assert.equal(spansFrames(ctx, before).length, 1, `out within FLUSH_MS (${JSON.stringify(watch)})`)
  }
})

test("unwatched and idle: nothing is sent and no timer is left running", async () => {
  const ctx = await agent()
  await call(ctx)
  ctx.env.advance(UNWATCHED_MS + QUIET_WAIT_MS)
  ctx.env.advance(UNWATCHED_LEDGER_MS + UNWATCHED_MS) // the ledger it owes, with the batch after its wait
  const before = ctx.ws.sent.length
  const timers = ctx.env.timerCount()
  ctx.env.advance(30_000)
  assert.deepEqual(ctx.ws.sent.slice(before), [], "an idle session sends nothing")
  assert.ok(ctx.env.timerCount() <= timers, "and arms nothing")
})

test("unwatched: the unsent spans reaching the mark leave at once, before the interval ends", async () => {
  const ctx = await agent({ buffer: 20 })
  assert.equal(unwatchedMark(20), 10)
  const before = ctx.ws.sent.length
  for (let i = 0; i < 9; i++) await call(ctx)
  ctx.env.advance(FLUSH_MS) // accounted (the agent's window): nine spans ready
  assert.equal(spansFrames(ctx, before).length, 0, "under the mark: the interval holds")
  await call(ctx) // the 10th: the mark, once accounted (the agent's window, busy now: MAX_FLUSH_MS)
  ctx.env.advance(MAX_FLUSH_MS)
  ctx.env.run()
  const spans = spansFrames(ctx, before)
  assert.equal(spans.length, 1, "at the mark: on the next task, not at the interval's end")
  assert.equal(spans[0].spans.length, 10)
  assert.equal(agentOf(ctx.api).sink.feed.delivery.lost, 0, "the ring of 20 evicted nothing unsent")
})

test("a session that becomes watched sends what it holds at once; the relay's acks follow its frames", async () => {
  const ctx = await agent()
  const before = ctx.ws.sent.length
  for (let i = 0; i < 5; i++) await call(ctx)
  ctx.env.advance(100)
  assert.equal(spansFrames(ctx, before).length, 0)
  ctx.ws.deliver({ type: "watch", session: ctx.id, watched: true, intervalMs: 250 })
  const spans = spansFrames(ctx, before)
  assert.equal(spans.length, 1, "flushed as the watch frame arrived, no timer waited for")
  assert.deepEqual(spans[0].spans.map((s) => s.seq), [0, 1, 2, 3, 4])
  ctx.ws.deliver({ type: "ack", session: ctx.id, seq: 4 })
  await call(ctx)
  ctx.env.advance(MAX_FLUSH_MS + QUIET_WAIT_MS)
  assert.equal(spansFrames(ctx, before).length, 2, "watched now: the next call out within its (busy) window")
})

test("the watched window a hello's ack opened carries nothing the page does after the relay said unwatched", async () => {
  // The ack opens a watched window (never told: watched), the watch frame follows it at once; calls made before
  // that window would have ended wait for the unwatched interval.
  const ctx = await connectedAgent({ config: { flushMs: FLUSH_MS } })
  await ctx.host.registerTool({ name: "t", description: "t", inputSchema: { type: "object" }, execute: () => "x" })
  await settle()
  ctx.env.run()
  ctx.env.tick(1)
  ctx.ws.deliver({ type: "watch", session: ctx.id, watched: false, intervalMs: 10_000 })
  ctx.env.run()
  const before = ctx.ws.sent.length
  for (let i = 0; i < 5; i++) await call(ctx)
  ctx.api.spans() // the accounting done, as a read does
  ctx.env.advance(MAX_FLUSH_MS + QUIET_WAIT_MS)
  ctx.env.run()
  assert.equal(spansFrames(ctx, before).length, 0, "no spans at the watched rate once unwatched")
  ctx.env.advance(10_000)
  ctx.env.run()
  const spans = spansFrames(ctx, before)
  assert.deepEqual(spans.map((f) => f.spans.length), [5], "all five at the interval's end, in one frame")
})

test("a shorter unwatched interval re-times the batch waiting; a longer one leaves it as it was", async () => {
  for (const [next, by] of [[1000, 1000], [10_000, UNWATCHED_MS]]) {
    const ctx = await agent({}, { watched: false, intervalMs: next === 1000 ? 10_000 : UNWATCHED_MS })
    const before = ctx.ws.sent.length
    await call(ctx)
    ctx.env.advance(FLUSH_MS)
    ctx.ws.deliver({ type: "watch", session: ctx.id, watched: false, intervalMs: next })
    ctx.env.run()
    ctx.env.advance(by - FLUSH_MS - 1)
    ctx.env.run()
    assert.equal(spansFrames(ctx, before).length, 0, `${next}: not before`)
    ctx.env.advance(FLUSH_MS + QUIET_WAIT_MS + 1)
    ctx.env.run()
    assert.equal(spansFrames(ctx, before).length, 1, `${next}: out within ${by} ms of the call, not ${next === 1000 ? 10_000 : next}`)
  }
})

test("a watch frame is checked: junk and other sessions' are ignored, intervals are clamped", async () => {
  assert.equal(readWatch({ watched: "no", intervalMs: 1000 }), null)
  assert.equal(readWatch({ watched: false, intervalMs: 1.5 }), null)
  assert.equal(readWatch({ watched: false, intervalMs: -1 }), null)
  assert.deepEqual(readWatch({ watched: false, intervalMs: 1e12 }), { watched: false, intervalMs: 10000 })
  assert.deepEqual(readWatch({ watched: false, intervalMs: 0 }), { watched: false, intervalMs: MAX_FLUSH_MS })
  assert.deepEqual(readWatch({ watched: true, intervalMs: 60000 }), { watched: true, intervalMs: MAX_FLUSH_MS })
  const ctx = await agent({}, null)
  ctx.ws.deliver({ type: "watch", session: "00000000", watched: false, intervalMs: 5000 })
  ctx.ws.deliver({ type: "watch", session: ctx.id, watched: 0, intervalMs: 5000 })
  const before = ctx.ws.sent.length
  await call(ctx)
  ctx.env.advance(FLUSH_MS)
  assert.equal(spansFrames(ctx, before).length, 1, "still watched: neither frame counted")
})

test("unwatched: the ledger goes with a batch every UNWATCHED_LEDGER_MS, not every second; watched again, every second", async () => {
  const ctx = await agent()
  const before = ctx.ws.sent.length
  for (let i = 0; i < 500; i++) {
    await call(ctx)
    ctx.env.advance(8) // 100 calls a second for 5 s
  }
  ctx.env.advance(UNWATCHED_MS + QUIET_WAIT_MS)
  const sent = ctx.ws.sent.slice(before)
  const ledgers = sent.filter((f) => f.type === "ledger").length
  assert.ok(ledgers <= Math.ceil(5000 / UNWATCHED_LEDGER_MS) + 1, `${ledgers} ledgers in 5 s unwatched`)
  assert.ok(sent.filter((f) => f.type === "spans").length <= 6, "a batch a second")
  assert.equal(sent.filter((f) => f.type === "spans").flatMap((f) => f.spans).length, 500, "every span once")
  ctx.ws.deliver({ type: "watch", session: ctx.id, watched: true, intervalMs: 250 })
  const mark = ctx.ws.sent.length
  for (let i = 0; i < 200; i++) {
    await call(ctx)
    ctx.env.advance(8)
  }
  ctx.env.advance(MAX_FLUSH_MS + QUIET_WAIT_MS)
  const watchedLedgers = ctx.ws.sent.slice(mark).filter((f) => f.type === "ledger").length
  assert.ok(watchedLedgers >= 2, `${watchedLedgers} ledgers in 2 s watched`)
})
