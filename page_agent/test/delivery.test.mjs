// Delivery under every settle order: calls that overlap and settle out of seq order, evictions, dropped
// sockets, a restarted relay and rate limiting, against a fake relay that stores each seq once, acks its
// contiguous prefix (plus the ranges above it, as relay_bridge/core/received.py does) and honours `floor`.
// Invariants: every span is stored exactly once or counted lost (never both, never neither); the agent's
// `lost` equals what the relay is missing; the relay never stops waiting (floor) for a call still running;
// no span goes twice to a relay that already holds it. Each runs on both cadences (pacing.js): watched, and
// unwatched (the relay's watch frame after the hello's ack; a batch leaves when its interval ends, here at each
// pump, or when the unsent spans reach the mark).
import { test } from "node:test"
import assert from "node:assert/strict"
import { setup, settle, FakeWebSocket, manualEnv, RELAY } from "../test-support/helpers.mjs"
import { Delivery } from "../src/transport/delivery.js"
import { agentOf } from "../src/page/index.js"

/** What relay_bridge/core/store.py does with hello and spans frames, reduced to seqs. */
class FakeRelay {
  constructor() {
    this.stored = new Set()
    this.acked = -1
    this.lost = 0
    this.duplicates = 0
    this.skipped = new Set() // seqs a floor let it pass without storing
    this.violations = []
  }
  has(seq) {
    return seq <= this.acked || this.stored.has(seq)
  }
  above() {
    const out = []
    for (const s of Array.from(this.stored).filter((x) => x > this.acked).sort((a, b) => a - b)) {
      const last = out[out.length - 1]
      if (last && last[1] === s - 1) last[1] = s
      else out.push([s, s])
    }
    return out.slice(0, 64)
  }
  ack(id) {
    const above = this.above()
    return above.length ? { type: "ack", session: id, seq: this.acked, above } : { type: "ack", session: id, seq: this.acked }
  }
  /** One frame from the agent; returns the reply (or null). */
  take(f) {
    if (f.type === "hello") {
      this.lost = Math.max(this.lost, f.lost)
      return this.ack(f.session.id)
    }
    if (f.type !== "spans") return null
    this.lost = Math.max(this.lost, f.lost)
    if (f.floor !== undefined && f.floor - 1 > this.acked) {
      for (let s = this.acked + 1; s < f.floor; s++) if (!this.stored.has(s)) this.skipped.add(s)
      this.acked = f.floor - 1
    }
    for (const span of f.spans) {
      if (this.skipped.has(span.seq)) this.violations.push(`seq ${span.seq} arrived after a floor skipped it`)
      if (this.has(span.seq)) {
        this.duplicates++
        continue
      }
      this.stored.add(span.seq)
    }
    while (this.stored.has(this.acked + 1)) this.acked++
    return this.ack(f.session)
  }
}

function mulberry32(seed) {
  return () => {
    seed |= 0
    seed = (seed + 0x6d2b79f5) | 0
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** An agent on a fake socket, a fake relay behind it, and calls whose settling the test orders. */
async function harness(buffer, cadence = "watched") {
  FakeWebSocket.instances = []
  const env = manualEnv()
  const ctx = setup({ env, config: { WebSocket: FakeWebSocket, uplink: RELAY, buffer } })
  const agent = agentOf(ctx.api)
  const h = {
    env,
    ctx,
    agent,
    relay: new FakeRelay(),
    ws: FakeWebSocket.last(),
    done: 0, // frames of the current socket the relay has taken
    resolvers: new Map(),
    started: 0,
    rateLimitNext: false,
    refused: new Set(), // frames the relay dropped over its rate cap: sent again by design
    async start() {
      const i = h.started++
      ctx.host.executeTool({ name: "t" }, { i })
      await settle()
      env.run()
      return i
    },
    async finish(i) {
      h.resolvers.get(i)("r" + i)
      h.resolvers.delete(i)
      await settle()
      env.run()
    },
    /** The relay takes `n` queued frames (all by default) and answers each; unwatched, the interval ends first. */
    pump(n = Infinity) {
      const ws = h.ws
      if (cadence === "unwatched" && agent.uplink.pace.lane.armed) agent.uplink.flush()
      while (n-- > 0 && ws.readyState === 1 && h.done < ws.sent.length) {
        const f = ws.sent[h.done++]
        if (f.type === "spans" && h.rateLimitNext) {
          h.rateLimitNext = false
          h.refused.add(f)
          ws.deliver({ type: "error", code: "rate_limited", message: "slow down", fatal: false })
          continue
        }
        const reply = h.relay.take(f)
        if (reply) ws.deliver(reply)
        if (f.type === "hello" && cadence === "unwatched") ws.deliver({ type: "watch", session: f.session.id, watched: false, intervalMs: 1000 })
        env.run()
      }
    },
    /** The socket dies with what the relay has not taken yet; the agent reconnects. */
    reconnect() {
      h.ws.drop()
      env.advance(5000)
      h.ws = FakeWebSocket.last()
      h.done = 0
      h.ws.accept()
      env.run()
    },
    restartRelay() {
      h.relay = new FakeRelay()
      h.reconnect()
    },
    sentOn(ws) {
      return ws.frames("spans").filter((f) => !h.refused.has(f)).flatMap((f) => f.spans.map((s) => s.seq))
    },
  }
  await ctx.host.registerTool({ name: "t", description: "t", execute: () => new Promise((r) => h.resolvers.set(h.started - 1, r)) })
  await settle()
  env.run()
  h.ws.accept()
  env.run()
  h.pump()
  return h
}

/** Settle everything, reconnect once more (that resume ack settles every unsure eviction), and check. */
async function quiesceAndCheck(h, n, label) {
  for (const i of Array.from(h.resolvers.keys())) await h.finish(i)
  h.pump()
  h.env.advance(1000) // any rate-limit pause ends
  h.pump()
  h.reconnect()
  h.pump()
  h.env.advance(1000)
  h.pump()
  const d = h.agent.sink.feed.delivery
  const missing = n - h.relay.stored.size
  assert.deepEqual(h.relay.violations, [], label)
  assert.equal(d.lost, missing, `${label}: the agent's lost is what the relay lacks`)
  assert.equal(h.relay.lost, missing, `${label}: the relay was told it`)
  assert.equal(h.relay.duplicates, 0, `${label}: nothing went twice to a relay that held it`)
  assert.deepEqual(d.unsure, [], label)
  for (const s of h.relay.stored) assert.ok(s >= 0 && s < n, label)
  for (const ws of FakeWebSocket.instances) {
    const seqs = h.sentOn(ws)
    assert.equal(new Set(seqs).size, seqs.length, `${label}: each span at most once a connection`)
  }
}

function permutations(xs) {
  if (xs.length <= 1) return [xs]
  return xs.flatMap((x, i) => permutations([...xs.slice(0, i), ...xs.slice(i + 1)]).map((p) => [x, ...p]))
}

/** A test on both cadences: watched (today's windows) and unwatched (the relay's `watch` frame says so). */
function bothCadences(name, fn) {
  for (const cadence of ["watched", "unwatched"]) test(`${name} (${cadence})`, () => fn(cadence))
}

bothCadences("every settle order of 5 overlapping calls: each span stored exactly once, nothing lost", async (cadence) => {
  for (const order of permutations([0, 1, 2, 3, 4])) {
    const h = await harness(50, cadence)
    for (let i = 0; i < 5; i++) await h.start()
    for (const i of order) {
      await h.finish(i)
      h.pump()
    }
    await quiesceAndCheck(h, 5, `order ${order}`)
    assert.equal(h.relay.stored.size, 5, `order ${order}: all five stored`)
    assert.equal(h.relay.acked, 4)
  }
})

bothCadences("every settle order with the socket dropped midway and a ring of 2: lost is exact", async (cadence) => {
  for (const order of permutations([0, 1, 2, 3, 4])) {
    for (const cut of [1, 3]) {
      const h = await harness(2, cadence)
      for (let i = 0; i < 5; i++) await h.start()
      for (const [k, i] of order.entries()) {
        await h.finish(i)
        if (k === cut) h.ws.drop()
        else if (h.ws.readyState === 1) h.pump(k % 2 ? 1 : Infinity)
      }
      await quiesceAndCheck(h, 5, `order ${order} cut ${cut}`)
    }
  }
})

bothCadences("a slow call that settles last is not skipped by floor while faster calls pass it", async (cadence) => {
  const h = await harness(50, cadence)
  const slow = await h.start()
  for (let k = 0; k < 4; k++) {
    const fast = await h.start()
    await h.finish(fast)
    h.pump()
  }
  const floors = h.ws.frames("spans").map((f) => f.floor)
  assert.ok(floors.every((f) => f === slow), `floor stays at the running call: ${floors}`)
  assert.equal(h.relay.acked, -1, "the relay still waits for seq 0")
  await h.finish(slow)
  h.pump()
  assert.deepEqual(h.sentOn(h.ws).slice(-1), [slow], "the slow span is sent when it settles")
  assert.equal(h.relay.acked, 4)
  await quiesceAndCheck(h, 5, "slow-last")
})

bothCadences("a span evicted after the relay stored it out of order is not lost; one evicted unsent is", async (cadence) => {
  const h = await harness(2, cadence)
  await h.start() // 0: keeps running
  for (let k = 0; k < 3; k++) await h.finish(await h.start()) // 1, 2, 3
  h.pump() // relay holds 1..3 above a hole at 0
  for (let k = 0; k < 2; k++) await h.finish(await h.start()) // 4, 5 evict 1, 2 (held by the relay)
  const d = h.agent.sink.feed.delivery
  assert.equal(d.lost, 0)
  assert.deepEqual(d.unsure, [])
  h.ws.drop()
  for (let k = 0; k < 3; k++) await h.finish(await h.start()) // 6, 7, 8 while down: 3 held by the relay; 4, 5 unsure, 6 lost
  assert.equal(d.lost, 1)
  await quiesceAndCheck(h, 9, "evictions above a running call")
})

bothCadences("a relay restart while calls overlap: every held span reaches the new relay once", async (cadence) => {
  const h = await harness(100, cadence)
  for (let i = 0; i < 6; i++) await h.start()
  await h.finish(5)
  await h.finish(2)
  h.pump()
  h.restartRelay()
  h.pump()
  assert.deepEqual(h.sentOn(h.ws).sort(), [2, 5], "what the old relay held is sent to the new one")
  for (const i of [4, 0, 3, 1]) await h.finish(i)
  h.pump()
  assert.equal(h.relay.stored.size, 6)
  await quiesceAndCheck(h, 6, "restart")
})

bothCadences("rate limited: the dropped frame's spans are sent again after the pause, the taken ones are not", async (cadence) => {
  const h = await harness(100, cadence)
  for (let i = 0; i < 4; i++) await h.start()
  await h.finish(3)
  h.pump()
  h.rateLimitNext = true
  await h.finish(1)
  h.pump()
  await h.finish(2)
  h.pump()
  assert.ok(!h.relay.stored.has(1), "1 was refused")
  h.env.advance(500)
  h.pump()
  assert.ok(h.relay.stored.has(1), "and sent again after the pause")
  await quiesceAndCheck(h, 4, "rate limited")
})

bothCadences("property: random interleavings of starts, settles, pumps, drops, restarts and rate limits", async (cadence) => {
  const rnd = mulberry32(12)
  for (let run = 0; run < 300; run++) {
    const n = 3 + Math.floor(rnd() * 10)
    const buffer = 1 + Math.floor(rnd() * 6)
    const restarts = rnd() < 0.2
    const h = await harness(restarts ? 1000 : buffer, cadence)
    const label = `run ${run} (n ${n}, buffer ${restarts ? 1000 : buffer})`
    while (h.started < n || h.resolvers.size) {
      const r = rnd()
      if (h.started < n && (r < 0.35 || !h.resolvers.size)) await h.start()
      else if (r < 0.7 && h.resolvers.size) {
        const open = Array.from(h.resolvers.keys())
        await h.finish(open[Math.floor(rnd() * open.length)])
      } else if (r < 0.85) h.pump(1 + Math.floor(rnd() * 3))
      else if (r < 0.9) h.ws.readyState === 1 ? h.ws.drop() : h.reconnect()
      else if (r < 0.93 && restarts) h.restartRelay()
      else if (r < 0.96) h.rateLimitNext = true
      else {
        // A rate-limit pause ends (500 ms): a relay answers the frames it took well within that.
        h.pump()
        h.env.advance(600)
      }
    }
    await quiesceAndCheck(h, n, label)
    if (restarts) assert.equal(h.relay.stored.size, n, `${label}: a ring that evicts nothing loses nothing`)
  }
})

test("Delivery by itself: held ranges, unsure evictions, resume", () => {
  const d = new Delivery()
  d.written(3)
  d.written(5)
  d.evicted(0) // never written
  assert.equal(d.lost, 1)
  d.ack(-1, [[3, 3]], false)
  assert.ok(d.has(3) && !d.has(4) && !d.has(5))
  d.evicted(3) // the relay holds it
  d.evicted(5) // written, no word yet
  assert.deepEqual(d.unsure, [5])
  assert.equal(d.lowestUnsure(), 5)
  d.ack(-1, [[3, 3]], true) // a new connection: the relay never got 5
  assert.equal(d.lost, 2)
  assert.deepEqual(d.unsure, [])
  d.ack(7, [[9, 12], [11, 20], "x"], false) // overlapping and junk ranges are cut off
  assert.deepEqual(d.above, [[9, 12]])
})
