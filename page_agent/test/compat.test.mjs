// Drop-in compatibility with webmcp-profiler (000): its options, console API, report and report tool, as its
// README and published source define them. Each test names the 000 behaviour it holds this agent to.
import { test } from "node:test"
import assert from "node:assert/strict"
import { setup, settle, manualEnv, channelBus, FakeWebSocket, RELAY, DraftHost } from "../test-support/helpers.mjs"

async function oneTool(ctx, name, fn, extra = {}) {
  const tool = { name, description: `the ${name} tool`, inputSchema: { type: "object" }, execute: fn, ...extra }
  await ctx.host.registerTool(tool)
  await settle()
  return tool
}

// ---- 1. relay: false is the privacy switch for the BroadcastChannel ------------------------------------

test("relay: false opens no BroadcastChannel and posts nothing, while the uplink option still dials", async () => {
  const bus = channelBus()
  FakeWebSocket.instances = []
  let opened = 0
  class Counting extends bus.BroadcastChannel {
    constructor(name) {
      super(name)
      opened++
    }
  }
  const ctx = setup({ config: { relay: false, BroadcastChannel: Counting, WebSocket: FakeWebSocket, uplink: RELAY } })
  await oneTool(ctx, "search", () => ({ ok: 1 }))
  await ctx.host.executeTool({ name: "search" }, {})
  ctx.env.run()
  assert.equal(ctx.api.spans().length, 1)
  assert.equal(opened, 0, "no channel constructed")
  assert.equal(bus.log.length, 0, "nothing broadcast to other tabs")
  assert.equal(FakeWebSocket.instances.length, 1, "the uplink is its own option")
  assert.equal(FakeWebSocket.last().url, RELAY)
})

test("by default (relay: true) spans mirror onto webmcp-perf:<origin>; uplink: false opens no socket", async () => {
  const bus = channelBus()
  FakeWebSocket.instances = []
  const ctx = setup({ config: { BroadcastChannel: bus.BroadcastChannel, WebSocket: FakeWebSocket, uplink: false } })
  await oneTool(ctx, "search", () => ({ ok: 1 }))
  await ctx.host.executeTool({ name: "search" }, {})
  ctx.env.run()
  const spans = bus.log.filter((m) => m.data && m.data.kind === "span")
  assert.equal(spans.length, 1)
  assert.ok(spans[0].name.startsWith("webmcp-perf:"))
  assert.equal(FakeWebSocket.instances.length, 0)
})
