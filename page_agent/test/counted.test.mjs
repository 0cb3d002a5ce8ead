// Tools registered before the agent loaded: their calls are counted from `toolactivated` (no span, no timing,
// no bytes) and the ledger marks them "counted, not measured"; a tool the agent wraps is never counted twice.
import { test } from "node:test"
import assert from "node:assert/strict"
import { DraftHost, setup, settle, connectedAgent, CANARY } from "../test-support/helpers.mjs"
import { LEDGER_EVERY_MS } from "../src/uplink.js"

async function earlyHost() {
  const host = new DraftHost()
  await host.registerTool({ name: "early", description: "registered before the agent", execute: (i) => ({ echo: i.q }) })
  return host
}

test("calls of a tool registered before the agent are counted per tool, not measured", async () => {
  const host = await earlyHost()
  const ctx = setup({ host })
  await settle()
  await host.registerTool({ name: "late", description: "registered after", execute: () => "ok" })
  await settle()
  for (let i = 0; i < 3; i++) await host.executeTool({ name: "early" }, { q: CANARY })
  await host.executeTool({ name: "late" }, {})
  ctx.env.run()
  const ledger = ctx.api.ledger()
  assert.equal(ledger.tools.early.counted, 3)
  assert.equal(ledger.tools.early.measured, false)
  assert.equal(ledger.tools.late.counted, undefined, "a wrapped tool's call is its span, not a count")
  assert.equal(ledger.tools.late.measured, undefined)
  assert.deepEqual(ctx.api.spans().map((s) => s.tool), ["late"])
  assert.equal(ledger.totals.calls, 1, "totals count measured calls only")
  const status = ctx.api.status()
  assert.equal(status.coverage, "incomplete")
  assert.match(status.reasons.join(" "), /1 tool\(s\) registered before the agent loaded are counted, not measured \(3 call\(s\) counted/)
  assert.match(status.hints[0], /only counted: load the agent first .*wmcp-top open URL.*attach --cdp/)
  assert.ok(!JSON.stringify(ledger).includes(CANARY))
})

test("each counted call goes to the relay as a toolactivated event with its time; the ledger frame carries the count", async () => {
  const host = await earlyHost()
  const ctx = await connectedAgent({ host })
  await settle()
  ctx.env.run()
  for (let i = 0; i < 2; i++) {
    ctx.env.tick(10)
    await host.executeTool({ name: "early" }, { q: CANARY })
  }
  ctx.env.advance(LEDGER_EVERY_MS + 50)
  ctx.env.run()
  const events = ctx.ws.frames("event").filter((f) => f.kind === "toolactivated")
  assert.deepEqual(events.map((e) => e.detail), [{ tool: "early", counted: true }, { tool: "early", counted: true }])
  assert.ok(events[1].at > events[0].at)
  const ledger = ctx.ws.frames("ledger").at(-1).ledger
  assert.deepEqual([ledger.tools.early.counted, ledger.tools.early.measured], [2, false])
  assert.equal(ctx.ws.frames("spans").length, 0)
  assert.ok(!JSON.stringify(ctx.ws.sent).includes(CANARY), "no body on the socket")
})

test("reset clears the counts", async () => {
  const host = await earlyHost()
  const ctx = setup({ host })
  await settle()
  await host.executeTool({ name: "early" }, {})
  ctx.api.reset()
  ctx.env.run()
  assert.equal(ctx.api.ledger().tools.early.counted, undefined)
  assert.equal(ctx.api.ledger().tools.early.measured, false)
})
