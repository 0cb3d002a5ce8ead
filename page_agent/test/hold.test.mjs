// The accounting stays out of the page's wait. A page that calls its own tool (`executeTool`) waits for the
// browser to carry the result back; a task of ours run meanwhile (serialising a 128 KB result) would be
// counted in the page's call time. So while the page awaits an executeTool, settled calls are accounted right
// after the page has its answer, behind its own continuation, in the same task; a call the browser's agent
// made (no page wait) still gets its own task; and nothing is held for more than HOLD_MS or HOLD_CALLS calls.
import { test } from "node:test"
import assert from "node:assert/strict"
import { setup, settle, watchAccounting } from "../test-support/helpers.mjs"

/** An agent with one tool `t`; `ctx.accounted` lists spans as the accounting emits them (reads of
 * `api.spans()` would finish pending accounting first, and an onSpan listener accounts in the settle path). */
async function withTool(execute) {
  const ctx = setup()
  await ctx.host.registerTool({ name: "t", description: "t", inputSchema: { type: "object" }, execute })
  await settle()
  ctx.env.run()
  ctx.accounted = []
  watchAccounting(ctx.api, (span) => ctx.accounted.push(span))
  return ctx
}

test("the page's own call: accounted after the page's continuation, in the same task", async () => {
  const ctx = await withTool(() => Promise.resolve("x".repeat(1000)))
  await ctx.host.executeTool({ name: "t" }, {})
  assert.equal(ctx.accounted.length, 0, "the page has its answer before the agent measures anything")
  await settle()
  assert.equal(ctx.accounted.length, 1, "then the same task accounts it: no task of its own")
  assert.equal(ctx.accounted[0].resultBytes, 1000)
})

test("a call the browser's agent makes (no page wait) is accounted on a task of its own", async () => {
  const ctx = await withTool(() => Promise.resolve("ok"))
  await ctx.host.registry.get("t").execute({}) // what the browser does: call the registered execute
  await settle()
  assert.equal(ctx.accounted.length, 0, "not inside the call's own microtasks")
  ctx.env.run()
  assert.equal(ctx.accounted.length, 1)
})

test("a page call that never answers holds other calls' accounting HOLD_MS at most", async () => {
  const ctx = await withTool((input) => (input.hang ? new Promise(() => {}) : "ok"))
  ctx.host.executeTool({ name: "t" }, { hang: true }) // the page waits forever
  await settle()
  await ctx.host.registry.get("t").execute({})
  await settle()
  ctx.env.run()
  assert.equal(ctx.accounted.length, 0, "held while the page waits")
  ctx.env.advance(499)
  assert.equal(ctx.accounted.length, 0)
  ctx.env.advance(1)
  await settle()
  ctx.env.run()
  assert.equal(ctx.accounted.length, 1, "accounted at the deadline")
})

test("never more than HOLD_CALLS calls held", async () => {
  const ctx = await withTool((input) => (input.hang ? new Promise(() => {}) : "ok"))
  ctx.host.executeTool({ name: "t" }, { hang: true })
  await settle()
  for (let i = 0; i < 64; i++) await ctx.host.registry.get("t").execute({})
  await settle()
  ctx.env.run()
  assert.equal(ctx.accounted.length, 64, "the 64th settled call lets them all through")
})
