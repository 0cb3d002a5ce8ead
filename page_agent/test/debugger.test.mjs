// Issue 8 on the page side: terminal commands (invoke) answered over the relay socket only, timeline events
// for every registration change (provideContext, clearContext, reload), and registrations the host refused.
import { test } from "node:test"
import assert from "node:assert/strict"
import { setup, settle, FakeWebSocket, manualEnv, DraftHost, legacyHost, fakeWindow, channelBus, CANARY, utf8, RELAY, connectedAgent, fullSpans } from "../test-support/helpers.mjs"

const tool = (name, execute, extra = {}) => ({ name, description: `${name} tool`, inputSchema: { type: "object" }, execute, ...extra })

/** Deliver a command and wait until the agent answered it. */
async function command(ctx, msg) {
  const before = ctx.ws.frames("result").length
  ctx.ws.deliver({ type: "command", session: ctx.id, ...msg })
  for (let i = 0; i < 50 && ctx.ws.frames("result").length === before; i++) {
    await settle()
    ctx.env.run()
  }
  ctx.env.run()
  return ctx.ws.frames("result").slice(before)
}

test("invoke: through the host's executeTool; the answer is the text the agent reads; the call is a span", async () => {
  const ctx = await connectedAgent()
  await ctx.host.registerTool(tool("find", (input) => ({ hit: input.q + CANARY })))
  await settle()
  let viaExecuteTool = 0
  const real = ctx.host.executeTool.bind(ctx.host)
  ctx.host.executeTool = (t, input) => {
    viaExecuteTool++
    return real(t, input)
  }
  const [r] = await command(ctx, { id: "c1", name: "invoke", args: { tool: "find", input: { q: "tea" } } })
  assert.equal(viaExecuteTool, 1)
  const text = JSON.stringify({ hit: "tea" + CANARY })
  assert.deepEqual(Object.keys(r).sort(), ["id", "ok", "resultBytes", "session", "text", "type", "wallMs"])
  assert.equal(r.id, "c1")
  assert.equal(r.session, ctx.id)
  assert.equal(r.ok, true)
  assert.equal(r.text, text)
  assert.equal(r.resultBytes, utf8(text))
  assert.ok(r.wallMs >= 0)
  const spans = ctx.api.spans()
  assert.equal(spans.length, 1)
  assert.equal(spans[0].tool, "find")
  assert.equal(spans[0].resultBytes, utf8(text))
  // The text is in the result frame and nowhere else.
  const others = ctx.ws.sent.filter((f) => f.type !== "result")
  assert.ok(!JSON.stringify(others).includes(CANARY))
  assert.ok(!JSON.stringify(ctx.api.report()).includes(CANARY))
  assert.ok(!JSON.stringify(ctx.api.spans()).includes(CANARY))
})

test("invoke: unknown tool, unknown command, a failing tool, a foreign session, a bad id", async () => {
  const ctx = await connectedAgent()
  await ctx.host.registerTool(tool("boom", () => { throw new TypeError("card declined") }))
  await settle()
  let [r] = await command(ctx, { id: "c1", name: "invoke", args: { tool: "nope", input: {} } })
  assert.deepEqual({ ok: r.ok, error: r.error }, { ok: false, error: "unknown tool: nope" })
  ;[r] = await command(ctx, { id: "c2", name: "reboot", args: {} })
  assert.deepEqual({ ok: r.ok, error: r.error }, { ok: false, error: "unknown command: reboot" })
  ;[r] = await command(ctx, { id: "c3", name: "invoke", args: { tool: "boom", input: {} } })
  assert.equal(r.ok, false)
  assert.match(r.error, /^UnknownError: /, "what the browser's agent sees")
  assert.equal(ctx.api.spans()[0].isError, true, "measured like any call")
  assert.equal(ctx.api.spans()[0].error, "card declined")
  // Not ours, or malformed: no answer at all.
  const before = ctx.ws.frames("result").length
  ctx.ws.deliver({ type: "command", id: "c4", session: "ffffffff", name: "invoke", args: { tool: "boom" } })
  ctx.ws.deliver({ type: "command", id: "", session: ctx.id, name: "invoke", args: { tool: "boom" } })
  ctx.ws.deliver({ type: "command", id: "x".repeat(33), session: ctx.id, name: "invoke", args: { tool: "boom" } })
  for (let i = 0; i < 5; i++) await settle()
  ctx.env.run()
  assert.equal(ctx.ws.frames("result").length, before)
  assert.equal(ctx.api.spans().length, 1)
})

test("invoke: a legacy host without executeTool is called through the registered execute", async () => {
  const host = legacyHost()
  const ctx = await connectedAgent({ host, location: "navigator" })
  host.registerTool(tool("num", () => NaN))
  host.registerTool(tool("empty", () => ""))
  host.registerTool(tool("cyc", () => { const o = {}; o.o = o; return o }))
  let [r] = await command(ctx, { id: "a", name: "invoke", args: { tool: "num", input: { x: 1 } } })
  assert.deepEqual({ ok: r.ok, text: r.text, resultBytes: r.resultBytes }, { ok: true, text: "NaN", resultBytes: 3 })
  ;[r] = await command(ctx, { id: "b", name: "invoke", args: { tool: "empty" } })
  assert.equal(r.text, "Operation succeeded")
  ;[r] = await command(ctx, { id: "c", name: "invoke", args: { tool: "cyc" } })
  assert.equal(r.ok, false)
  assert.deepEqual(ctx.api.spans().map((s) => s.tool), ["num", "empty", "cyc"])
})

test("invoke: the text is capped at 256 KiB characters; resultBytes counts all of it", async () => {
  const ctx = await connectedAgent()
  await ctx.host.registerTool(tool("big", () => "é".repeat(300000)))
  await settle()
  const [r] = await command(ctx, { id: "big", name: "invoke", args: { tool: "big" } })
  assert.equal(r.ok, true)
  assert.equal(r.text.length, 256 * 1024)
  assert.equal(r.resultBytes, 600000)
})

test("a command posted on the BroadcastChannel or as a window message does nothing", async () => {
  const bus = channelBus()
  FakeWebSocket.instances = []
  const env = manualEnv()
  const ctx = setup({ env, config: { WebSocket: FakeWebSocket, uplink: RELAY, BroadcastChannel: bus.BroadcastChannel } })
  const ws = FakeWebSocket.last()
  ws.accept()
  env.run()
  await ctx.host.registerTool(tool("t", () => "x"))
  await settle()
  const page = new bus.BroadcastChannel(`webmcp-perf:http://127.0.0.1:8000`)
  page.postMessage({ type: "command", id: "c1", session: ctx.api.sessionId, name: "invoke", args: { tool: "t" } })
  page.postMessage({ kind: "command", id: "c1", session: ctx.api.sessionId, name: "invoke", args: { tool: "t" } })
  for (let i = 0; i < 5; i++) await settle()
  env.run()
  assert.equal(ws.frames("result").length, 0)
  assert.equal(ctx.api.spans().length, 0)
})

test("timeline: provideContext is one event, then the withdrawals and registrations it stands for", async () => {
  const host = legacyHost()
  const ctx = await connectedAgent({ host, location: "navigator" })
  host.registerTool(tool("a", () => 1))
  host.provideContext({ tools: [tool("b", () => 2), tool("c", () => 3)] })
  host.clearContext()
  ctx.env.run()
  const frames = ctx.ws.sent.filter((f) => f.type === "tool" || f.type === "event").map((f) => (f.type === "tool" ? `${f.change}:${f.name}` : `${f.kind}:${JSON.stringify(f.detail)}`))
  assert.deepEqual(frames, [
    "registered:a",
    'context-provide:{"tools":2,"withdrawn":1,"host":"navigator"}',
    "unregistered:a",
    "registered:b",
    "registered:c",
    'context-clear:{"withdrawn":2,"host":"navigator"}',
    "unregistered:b",
    "unregistered:c",
  ])
  assert.deepEqual(ctx.api.ledger().registeredTools, [])
  // Times never go backwards along the frames.
  const at = ctx.ws.sent.filter((f) => f.type === "tool" || f.type === "event").map((f) => f.at)
  assert.deepEqual(at, at.slice().sort((x, y) => x - y))
})

test("timeline: a provideContext or clearContext the host refuses says nothing", async () => {
  const host = legacyHost()
  host.provideContext = () => {
    throw new TypeError("bad context")
  }
  const ctx = await connectedAgent({ host, location: "navigator" })
  host.registerTool(tool("a", () => 1))
  assert.throws(() => host.provideContext({ tools: [tool("b", () => 2)] }), /bad context/)
  ctx.env.run()
  assert.equal(ctx.ws.frames("event").filter((e) => e.kind.startsWith("context-")).length, 0)
  assert.deepEqual(ctx.api.ledger().registeredTools, ["a"])
})

class StrictHost extends DraftHost {
  registerTool(t, o) {
    if (t.inputSchema !== undefined && (typeof t.inputSchema !== "object" || t.inputSchema === null)) {
      return Promise.reject(new TypeError("Failed to execute 'registerTool' on 'ModelContext': Failed to read the 'inputSchema' property"))
    }
    try {
      JSON.stringify(t.inputSchema)
    } catch (e) {
      return Promise.reject(new TypeError(e.message))
    }
    return super.registerTool(t, o)
  }
}

test("rejected registrations (duplicate name, invalid schema) are tool frames with `rejected`, never tools", async () => {
  const ctx = await connectedAgent({ host: new StrictHost() })
  await ctx.host.registerTool(tool("a", () => 1))
  await settle()
  await assert.rejects(ctx.host.registerTool(tool("a", () => 2, { description: "again" })), /Duplicate tool name/)
  await assert.rejects(ctx.host.registerTool(tool("s", () => 3, { inputSchema: "nope" })), TypeError)
  const cyc = { type: "object" }
  cyc.self = cyc
  await assert.rejects(ctx.host.registerTool(tool("c", () => 4, { inputSchema: cyc })), TypeError)
  await settle()
  ctx.env.run()
  const rejected = ctx.ws.frames("tool").filter((f) => f.rejected)
  assert.deepEqual(rejected.map((f) => [f.name, f.change]), [["a", "registered"], ["s", "registered"], ["c", "registered"]])
  assert.equal(rejected[0].rejected, "Duplicate tool name")
  assert.match(rejected[1].rejected, /inputSchema/)
  assert.ok(rejected.every((f) => f.rejected.length <= 200))
  assert.deepEqual(ctx.api.ledger().registeredTools, ["a"])
  assert.equal(ctx.api.status().phase, "tools-registered")
})

test("a reload is an event at attach; a navigation later is one too", async () => {
  const g = fakeWindow({ host: new DraftHost() })
  const listeners = {}
  g.addEventListener = (type, fn) => (listeners[type] = fn)
  g.performance = { getEntriesByType: (t) => (t === "navigation" ? [{ type: "reload" }] : []), timeOrigin: 1700000000000 }
  const ctx = await connectedAgent({ g, host: g.document.modelContext })
  listeners.popstate({})
  ctx.env.run()
  const kinds = ctx.ws.frames("event").map((e) => [e.kind, e.detail])
  assert.deepEqual(kinds, [["reload", {}], ["navigation", { kind: "popstate" }]])
})

test("a tool withdrawn before the host's getTools() answers is still registered, then unregistered (no ghost)", async () => {
  class SlowList extends DraftHost {
    getTools() {
      const list = super.getTools()
      return new Promise((resolve) => (this.release = this.release || []).push(() => resolve(list)))
    }
  }
  const host = new SlowList()
  const ctx = await connectedAgent({ host })
  const ac = new AbortController()
  await host.registerTool(tool("b", () => 1), { signal: ac.signal })
  await settle()
  ac.abort()
  for (const r of host.release.splice(0)) r() // every getTools() answer arrives late, b listed in the first
  await settle()
  ctx.env.run()
  const frames = ctx.ws.frames("tool").map((f) => `${f.change}:${f.name}`)
  assert.deepEqual(frames, ["registered:b", "unregistered:b"])
  assert.deepEqual(ctx.api.ledger().registeredTools, [])
  assert.equal(ctx.api.status().coverage, "none-observed", "not mistaken for a tool registered before the agent")
})

test("invoke: the terminal's call is marked, stays out of the host-gap chain and the agent's totals", async () => {
  const ctx = await connectedAgent()
  await ctx.host.registerTool(tool("find", (input) => "hit " + input.q))
  await settle()
  const run = async (q) => {
    const [t] = await ctx.host.getTools()
    await ctx.host.executeTool(t, { q })
    await settle()
    ctx.env.run()
  }
  await run("agent-1")
  const [r] = await command(ctx, { id: "c1", name: "invoke", args: { tool: "find", input: { q: "terminal" } } })
  assert.equal(r.ok, true)
  await run("agent-2")
  const [a1, term, a2] = fullSpans(ctx.api)
  assert.deepEqual([a1.invokedBy, term.invokedBy, a2.invokedBy], [undefined, "terminal", undefined])
  assert.equal(term.synthetic, true)
  assert.equal(term.gapSincePrevCallMs, null, "a terminal call has no host gap")
  assert.ok(a2.invokedAt - a1.settledAt >= a2.gapSincePrevCallMs - 1e-9 && a2.gapSincePrevCallMs === a2.invokedAt - a1.settledAt,
    "the next agent call's gap runs from the last agent call, not from the terminal's")
  const totals = ctx.api.ledger().totals
  assert.equal(totals.calls, 2, "the agent's totals leave the terminal call out")
  assert.equal(ctx.api.aggregates()[0].calls, 2)
  const sent = ctx.ws.frames("spans").flatMap((f) => f.spans)
  assert.deepEqual(sent.map((c) => c.invokedBy ?? null), [null, "terminal", null], "the spans the relay gets say so too")
})
