// Tools registered before the agent loaded: their calls are counted from `toolactivated` (no span, no timing,
// no bytes) and the ledger marks them "counted, not measured"; a tool the agent wraps is never counted twice.
import { test } from "node:test"
import assert from "node:assert/strict"
import { DraftHost, setup, settle, connectedAgent, CANARY } from "../test-support/helpers.mjs"
import { LEDGER_EVERY_MS } from "../src/transport/uplink.js"

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

/** The `toolactivated` listeners on `host`, counted as the agent adds and removes them. */
function watchListeners(host) {
  const live = new Set()
  const add = host.addEventListener.bind(host)
  const remove = host.removeEventListener.bind(host)
  host.addEventListener = (type, fn, ...rest) => {
    if (type === "toolactivated") live.add(fn)
    return add(type, fn, ...rest)
  }
  host.removeEventListener = (type, fn, ...rest) => {
    if (type === "toolactivated") live.delete(fn)
    return remove(type, fn, ...rest)
  }
  return () => live.size
}

test("toolactivated is listened to only while a tool is counted rather than measured", async () => {
  const early = await earlyHost()
  const listeners = watchListeners(early)
  const ctx = setup({ host: early })
  assert.equal(listeners(), 1, "until getTools() answers, every call is heard")
  await settle()
  assert.equal(listeners(), 1, "a tool registered before the agent is counted")
  // instrument() measures the page's own calls; the host keeps the execute it captured, so its calls are counted.
  ctx.api.instrument({ early: { name: "early", execute: () => "ok" } })
  assert.equal(listeners(), 1)
  await early.executeTool({ name: "early" }, {})
  ctx.env.run()
  assert.equal(ctx.api.ledger().tools.early.counted, 1)

  const host = new DraftHost()
  const none = watchListeners(host)
  const agent = setup({ host })
  await settle()
  assert.equal(none(), 0, "every tool wrapped: each call's span says it all")
  await host.registerTool({ name: "late", description: "registered after", execute: () => "ok" })
  await settle()
  await host.executeTool({ name: "late" }, {})
  assert.equal(none(), 0)
  // A page script that kept the host's own registerTool from before the agent: toolchange, then counted.
  const withdraw = new AbortController()
  await DraftHost.prototype.registerTool.call(host, { name: "sneaked", description: "past the agent", execute: () => "ok" }, { signal: withdraw.signal })
  await settle()
  assert.equal(none(), 1)
  await host.executeTool({ name: "sneaked" }, {})
  agent.env.run()
  assert.equal(agent.api.ledger().tools.sneaked.counted, 1)
  // Once no tool would be counted, the listener goes.
  withdraw.abort()
  await settle()
  assert.equal(none(), 0, "nothing left to count")
  agent.api.detach()
  ctx.api.detach()
  assert.equal(listeners(), 0, "detach removes it")
})

test("once counted calls arrived the phase moves on: never 'waiting for the first call'", async () => {
  const host = await earlyHost()
  const ctx = setup({ host })
  await settle()
  assert.equal(ctx.api.status().phase, "tools-registered")
  for (let i = 0; i < 2; i++) await host.executeTool({ name: "early" }, { q: "x" })
  ctx.env.run()
  const status = ctx.api.status()
  assert.equal(status.phase, "measuring")
  assert.doesNotMatch(status.message, /waiting for the first call/)
  assert.match(status.message, /counted, not measured: these tools were registered before the agent loaded/)
  assert.match(status.hints[0], /only counted: load the agent first/)
  assert.equal(status.coverage, "incomplete")
})
