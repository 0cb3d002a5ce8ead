// transport/feed.js alone, then the one-way path through a whole agent: spans are handed to the uplink's feed as
// they are made, and the uplink never reads the collector's ring back.
import { test } from "node:test"
import assert from "node:assert/strict"
import { Feed } from "../src/transport/feed.js"
import { connectedAgent, settle } from "../test-support/helpers.mjs"
import { agentOf } from "../src/page/index.js"

const span = (seq) => ({ sessionId: "abcdef01", seq, tool: "t" })
const hello = () => ({ session: { id: "abcdef01" }, config: {} })

test("a feed holds what it is handed, once per seq, oldest first, until evicted", () => {
  const f = new Feed("abcdef01", { hello })
  assert.equal(f.span(span(2)), true)
  assert.equal(f.span(span(0)), true)
  assert.equal(f.span(span(2)), false, "a seq held already is not held twice")
  assert.deepEqual(Array.from(f.spans(), (s) => s.seq), [2, 0])
  f.evicted(2)
  assert.deepEqual(Array.from(f.spans(), (s) => s.seq), [0])
  assert.equal(f.delivery.lost, 1, "evicted before any socket carried it: lost")
  f.delivery.ack(0, [], true)
  f.evicted(0)
  assert.equal(f.delivery.lost, 1, "evicted after the relay acked it: not lost")
  assert.deepEqual(f.replay(), [], "no replay hook: nothing to restate")
  assert.equal(f.seqs, undefined, "no seqs hook: the uplink sends no floor")
})

test("a capped feed (a relayed session) evicts its oldest past the cap, and counts it lost", () => {
  const f = new Feed("eeeeeeee", { hello }, 3)
  for (let i = 0; i < 5; i++) f.span(span(i))
  assert.deepEqual(Array.from(f.spans(), (s) => s.seq), [2, 3, 4])
  assert.equal(f.delivery.lost, 2)
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
