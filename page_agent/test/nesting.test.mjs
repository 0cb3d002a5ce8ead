// depth/parent when a tool calls another tool through executeTool: synchronously, after an await (V8's
// async stack trace names the caller's carrier frame), two levels deep; and what is NOT nesting: page code
// outside any tool calling tools in parallel, and a call made from a timer callback (no async chain to read).
// The last tests pin nesting.js alone, with no agent around it.
import { test } from "node:test"
import assert from "node:assert/strict"
import { setup, settle, fullSpans } from "../test-support/helpers.mjs"
import { agentOf } from "../src/page/index.js"
import { Nesting, placeUnder, MAX_DEPTH } from "../src/page/nesting.js"

const tick = () => new Promise((r) => setTimeout(r, 1))

async function tools(ctx, defs) {
  for (const [name, execute] of Object.entries(defs)) await ctx.host.registerTool({ name, description: name, execute })
  await settle()
}

function byTool(ctx) {
  ctx.env.run()
  return Object.fromEntries(fullSpans(ctx.api).map((s) => [s.tool, s]))
}

test("a tool that awaits, then calls another through executeTool: the inner call is its child", async () => {
  const ctx = setup()
  const mc = ctx.host
  await tools(ctx, {
    inner: async () => {
      await tick()
      return "in"
    },
    outer: async () => {
      await tick()
      const r = await mc.executeTool({ name: "inner" }, {})
      return "out:" + r
    },
  })
  assert.equal(await mc.executeTool({ name: "outer" }, {}), "out:in")
  const s = byTool(ctx)
  assert.equal(s.outer.depth, 0)
  assert.equal(s.outer.parent, null)
  assert.equal(s.inner.depth, 1)
  assert.equal(s.inner.parent, s.outer.seq)
  assert.ok(s.outer.settledAt >= s.inner.settledAt, "the outer span settles last and is still recorded")
})

test("executeTool called synchronously inside execute(), and two levels deep through awaits", async () => {
  const ctx = setup()
  const mc = ctx.host
  await tools(ctx, {
    leaf: () => "leaf",
    mid: async () => {
      await tick()
      return mc.executeTool({ name: "leaf" }, {})
    },
    top: async () => {
      await tick()
      await tick()
      return mc.executeTool({ name: "mid" }, {})
    },
    direct: () => mc.executeTool({ name: "leaf" }, {}),
  })
  await mc.executeTool({ name: "top" }, {})
  ctx.env.run()
  const spans = fullSpans(ctx.api)
  const top = spans.find((x) => x.tool === "top")
  const mid = spans.find((x) => x.tool === "mid")
  const leaf = spans.find((x) => x.tool === "leaf")
  assert.deepEqual([top.depth, mid.depth, leaf.depth], [0, 1, 2])
  assert.deepEqual([mid.parent, leaf.parent], [top.seq, mid.seq])
  await mc.executeTool({ name: "direct" }, {})
  ctx.env.run()
  const direct = fullSpans(ctx.api).find((x) => x.tool === "direct")
  const leaf2 = fullSpans(ctx.api).filter((x) => x.tool === "leaf").at(-1)
  assert.equal(leaf2.parent, direct.seq)
  assert.equal(leaf2.depth, 1)
})

test("page code calling tools in parallel is not nesting, even while other calls are in flight", async () => {
  const ctx = setup()
  const mc = ctx.host
  await tools(ctx, {
    slow: async () => {
      await new Promise((r) => setTimeout(r, 30))
      return "s"
    },
    fast: async () => {
      await tick()
      return "f"
    },
  })
  for (let i = 0; i < 3; i++) await Promise.all([mc.executeTool({ name: "slow" }, {}), mc.executeTool({ name: "fast" }, {})])
  ctx.env.run()
  const spans = fullSpans(ctx.api)
  assert.equal(spans.length, 6)
  for (const s of spans) assert.deepEqual([s.depth, s.parent], [0, null], s.tool)
})

test("a call made from a timer callback inside a tool is not attributed (no async chain to read)", async () => {
  const ctx = setup()
  const mc = ctx.host
  await tools(ctx, {
    inner: () => "in",
    timed: () => new Promise((resolve) => setTimeout(() => resolve(mc.executeTool({ name: "inner" }, {})), 1)),
  })
  await mc.executeTool({ name: "timed" }, {})
  ctx.env.run()
  const inner = fullSpans(ctx.api).find((x) => x.tool === "inner")
  assert.deepEqual([inner.depth, inner.parent], [0, null])
})

test("start frames carry the async parent too", async () => {
  const ctx = setup()
  const mc = ctx.host
  const starts = []
  await tools(ctx, {
    inner: () => "in",
    outer: async () => {
      await tick()
      return mc.executeTool({ name: "inner" }, {})
    },
  })
  const c = agentOf(ctx.api).collector
  const start = c.sink.start
  c.sink.start = (call) => {
    starts.push({ tool: call.tool, seq: call.seq, depth: call.depth, parent: call.parent })
    start.call(c.sink, call)
  }
  await mc.executeTool({ name: "outer" }, {})
  assert.deepEqual(starts, [
    { tool: "outer", seq: 0, depth: 0, parent: null },
    { tool: "inner", seq: 1, depth: 1, parent: 0 },
  ])
})

// ---- nesting.js alone ---------------------------------------------------------------------------------------

test("Nesting: the stack's top is the parent; else the oldest executeTool expecting that tool, taken once", () => {
  const n = new Nesting("abcdef01")
  const outer = { seq: 0, depth: 0 }
  const other = { seq: 5, depth: 2 }
  n.stack.push(outer)
  assert.equal(n.parentOf("anything"), outer)
  n.stack.pop()
  assert.equal(n.parentOf("inner"), null, "no stack, nothing expected")
  n.expected.push({ tool: "inner", parent: other }, { tool: "inner", parent: outer })
  assert.equal(n.parentOf("inner"), other, "oldest first")
  assert.equal(n.parentOf("inner"), outer)
  assert.equal(n.parentOf("inner"), null, "each expectation is taken once")
})

test("Nesting: nestedCall expects a child only from inside a call, and its release withdraws it", () => {
  const n = new Nesting("abcdef01")
  const inFlight = new Map()
  assert.equal(n.nestedCall("inner", inFlight), null, "page code outside any call")
  const outer = { seq: 2, depth: 0 }
  n.stack.push(outer)
  const release = n.nestedCall("inner", inFlight)
  n.stack.pop()
  release()
  assert.equal(n.parentOf("inner"), null, "released before the call entered: not a child")
  n.stack.push(outer)
  for (let i = 0; i < 70; i++) n.nestedCall(`t${i}`, inFlight)
  assert.equal(n.expected.length, 64, "bounded: the oldest expectations go first")
  assert.equal(n.expected[0].tool, "t6")
})

test("Nesting: after an await, the caller is the call whose carrier frame is in the async stack trace", async () => {
  const n = new Nesting("abcdef01")
  const running = { seq: 7, depth: 0 }
  const inFlight = new Map([[7, running]])
  let seen = "unset"
  const body = async () => {
    await null
    seen = n.callerOf(inFlight)
  }
  const name = n.frameName(7)
  assert.equal(name, "__wmcp_abcdef01_7")
  const carrier = { async [name]() { await body() } }[name]
  await carrier()
  assert.equal(seen, running)
  const stranger = new Nesting("0badc0de")
  let other = "unset"
  const carried = { async [name]() { await null; other = stranger.callerOf(inFlight) } }[name]
  await carried()
  assert.equal(other, null, "another session's frame names no call of this one")
  assert.equal(n.callerOf(new Map()), null, "nothing in flight: no stack walk at all")
})

test("placeUnder: depth one below the parent, capped at MAX_DEPTH", () => {
  assert.deepEqual(placeUnder(null), { depth: 0, parent: null })
  assert.deepEqual(placeUnder({ seq: 3, depth: 1 }), { depth: 2, parent: 3 })
  assert.deepEqual(placeUnder({ seq: 9, depth: MAX_DEPTH }), { depth: MAX_DEPTH, parent: 9 })
})
