// Drop-in compatibility with webmcp-profiler (000): its options, console API, report and report tool, as its
// README and published source define them. Each test names the 000 behaviour it holds this agent to.
import { test } from "node:test"
import assert from "node:assert/strict"
import { setup, settle, channelBus, FakeWebSocket, RELAY, DraftHost } from "../test-support/helpers.mjs"

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

// ---- 2, 3. report(): 000's JSON types; 000's quantile -----------------------------------------------------

test("report(): generatedAt ISO-8601, tools[] only tools with spans (internal excluded), numbers only; p50 is 000's", async () => {
  const ctx = setup({ config: { reportTool: true } })
  const times = [3, 8]
  await oneTool(ctx, "pair", () => {
    ctx.env.tick(times.shift())
    return { ok: 1 }
  })
  await oneTool(ctx, "idle", () => ({}))
  for (let i = 0; i < 2; i++) await ctx.host.executeTool({ name: "pair" }, {})
  await ctx.host.executeTool({ name: "get_perf_report" }, {})
  const r = ctx.api.report()
  assert.equal(typeof r.session.generatedAt, "string")
  assert.ok(!Number.isNaN(Date.parse(r.session.generatedAt)) && r.session.generatedAt.endsWith("Z"))
  assert.deepEqual(r.tools.map((t) => t.tool), ["pair"], "no zero-call row, no internal row")
  for (const [k, v] of Object.entries(r.tools[0])) if (k !== "tool") assert.equal(typeof v, "number", k)
  assert.equal(r.tools[0].p50Ms, 8, "sorted[min(n-1, floor(0.5*2))] = sorted[1]")
  assert.equal(r.tools[0].p95Ms, 8)
  assert.deepEqual(ctx.api.aggregates(), r.tools, "aggregates() is the same rows, as in 000")
  assert.equal(r.ledger.tools.get_perf_report.internal, true, "the report tool is listed in the ledger")
})

// ---- 4. get_perf_report ----------------------------------------------------------------------------------

test("get_perf_report: 000's name, input schema and result shape; spans newest first, limit clamped, truncated", async () => {
  const ctx = setup({ config: { reportTool: true } })
  await oneTool(ctx, "a", () => ({ x: 1 }))
  await oneTool(ctx, "b", () => ({ y: 2 }))
  for (const n of ["a", "b", "a", "a"]) await ctx.host.executeTool({ name: n }, {})
  const [desc] = (await ctx.host.getTools()).filter((t) => t.name === "get_perf_report")
  const props = desc.inputSchema.properties
  assert.deepEqual(props.view.enum, ["summary", "tools", "spans"])
  assert.deepEqual([props.limit.type, props.limit.minimum, props.limit.maximum, props.limit.default], ["integer", 1, 500, 50])
  assert.equal(props.tool.type, "string")
  assert.equal(desc.inputSchema.additionalProperties, false)
  assert.equal(desc.annotations.readOnlyHint, true)
  const call = async (input) => JSON.parse(await ctx.host.executeTool({ name: "get_perf_report" }, input))
  const summary = await call({})
  assert.deepEqual(Object.keys(summary), ["content", "structuredContent", "isError"])
  assert.equal(summary.content[0].type, "text")
  assert.equal(summary.content[0].text, ctx.api.summary())
  const sc = summary.structuredContent
  assert.deepEqual(Object.keys(sc), ["ok", "format", "session", "status", "totals", "split", "meta"])
  assert.equal(sc.ok, true)
  assert.equal(sc.format, "webmcp-perf-report/2")
  assert.equal(sc.session.id, ctx.api.sessionId)
  assert.equal(sc.status.phase, "measuring")
  assert.equal(sc.totals.calls, 4)
  assert.equal(sc.meta.view, "summary")
  assert.equal(sc.meta.estTokens, Math.ceil(sc.meta.resultBytes / 4))
  const tools = (await call({ view: "tools", tool: "a" })).structuredContent
  assert.deepEqual(tools.tools.map((t) => t.tool), ["a"])
  assert.equal(tools.spans, undefined)
  const spans = (await call({ view: "spans", limit: 2 })).structuredContent
  assert.deepEqual(spans.spans.map((s) => s.seq), [3, 2], "newest first")
  assert.equal(spans.truncated, true)
  assert.equal(Object.keys(spans.spans[0]).length, 20, "closed span objects")
  assert.equal((await call({ view: "spans", limit: 0 })).structuredContent.spans.length, 1, "limit clamps to 1..500")
  assert.equal((await call({ view: "spans", limit: 9999, tool: "b" })).structuredContent.spans.length, 1)
  assert.deepEqual((await call({ view: "spans", since: 1 })).structuredContent.spans.map((s) => s.seq), [3, 2])
  assert.equal(ctx.api.spans().length, 4, "the report tool is never measured")
})

test("profilerTool(profiler): the page registers 000's factory itself; listed as internal, never measured", async () => {
  const { profilerTool } = await import("../src/page/index.js")
  const ctx = setup()
  await oneTool(ctx, "a", () => ({ x: 1 }))
  await ctx.host.registerTool(profilerTool(ctx.api))
  await settle()
  await ctx.host.executeTool({ name: "a" }, {})
  const out = JSON.parse(await ctx.host.executeTool({ name: "get_perf_report" }, { view: "tools" }))
  assert.equal(out.structuredContent.ok, true)
  assert.deepEqual(out.structuredContent.tools.map((t) => t.tool), ["a"])
  assert.equal(ctx.api.ledger().tools.get_perf_report.internal, true)
  assert.deepEqual(ctx.api.spans().map((s) => s.tool), ["a"])
  assert.equal(ctx.api.status().coverage, "running", "not counted as a tool the agent failed to wrap")
  assert.equal((await ctx.api.describe()).tool.name, "get_perf_report")
})

// ---- 5. reads complete pending accounting ---------------------------------------------------------------

test("000's quick start: await tool.execute(x); summary() counts the call, with no task in between", async () => {
  for (const read of ["summary", "spans", "aggregates", "ledger", "report", "status", "table"]) {
    const ctx = setup()
    const tool = await oneTool(ctx, "hello", async () => ({ content: [{ type: "text", text: "hello" }] }))
    await tool.execute({})
    assert.ok(ctx.env.pendingTasks() > 0, "the accounting task has not run")
    const out = ctx.api[read]()
    const counted = {
      summary: () => / 1 calls$/m.test(out.split("\n")[0]) && /hello\s+1 calls/.test(out),
      spans: () => out.length === 1,
      aggregates: () => out.length === 1 && out[0].calls === 1,
      ledger: () => out.totals.calls === 1,
      report: () => out.spans.length === 1,
      status: () => out.callCount === 1 && out.phase === "measuring",
      table: () => out.length === 1 && out[0].calls === 1,
    }[read]()
    assert.ok(counted, `${read}() counts the call: ${JSON.stringify(out)}`)
  }
})

// ---- 8. the gate -----------------------------------------------------------------------------------------

async function gated(search, { stored, defaultOn = false } = {}) {
  const { maybeAttach } = await import("../src/page/index.js")
  const { fakeWindow } = await import("../test-support/helpers.mjs")
  const g = fakeWindow({ search })
  const logs = []
  g.console = { log() {}, table() {}, info: (m) => logs.push(["info", m]), warn: (m) => logs.push(["warn", m]) }
  if (stored) g.localStorage.setItem("webmcp-perf:mode", stored)
  const api = maybeAttach({ global: g, announce: false, uplink: false, BroadcastChannel: null, defaultOn, setInterval: () => 1, clearInterval() {} })
  return { api, g, logs, stored: g.localStorage.getItem("webmcp-perf:mode") }
}

test("gate: ?perf=1|on|true and overlay attach and remember; 0|off|false close (even by default on) and forget", async () => {
  for (const v of ["1", "on", "true"]) {
    const r = await gated(`?perf=${v}`)
    assert.equal(r.api.active, true, v)
    assert.equal(r.stored, "1", v)
    r.api.detach()
  }
  const o = await gated("?perf=overlay")
  assert.equal(o.api.active, true)
  assert.equal(o.stored, "overlay")
  assert.equal(o.logs.filter(([k, m]) => k === "info" && /terminal/.test(m)).length, 1, "one line pointing to the terminal")
  o.api.detach()
  for (const v of ["0", "off", "false"]) {
    const r = await gated(`?perf=${v}`, { stored: "1", defaultOn: true })
    assert.equal(r.api.active, false, v)
    assert.equal(r.stored, null, `${v} clears the stored mode`)
  }
})

test("gate: a stored overlay mode is honoured; an unknown value warns once and changes nothing", async () => {
  const s = await gated("", { stored: "overlay" })
  assert.equal(s.api.active, true)
  assert.ok(s.logs.some(([k, m]) => k === "info" && /terminal/.test(m)))
  s.api.detach()
  const u = await gated("?perf=banana", { stored: "1" })
  assert.equal(u.logs.filter(([k]) => k === "warn").length, 1)
  assert.match(u.logs.find(([k]) => k === "warn")[1], /banana/)
  assert.equal(u.api.active, true, "the stored mode still applies")
  assert.equal(u.stored, "1")
  u.api.detach()
})

// ---- 9. options and methods 000 users call ---------------------------------------------------------------

test("overlay: true and overlay() print one console line pointing to the terminal instead of throwing", async () => {
  const { attach } = await import("../src/page/index.js")
  const { fakeWindow } = await import("../test-support/helpers.mjs")
  const g = fakeWindow({ host: new DraftHost() })
  const lines = []
  g.console = { log() {}, info: (m) => lines.push(m), table() {} }
  const api = attach({ global: g, overlay: true, announce: false, uplink: false, BroadcastChannel: null, setInterval: () => 1, clearInterval() {} })
  assert.equal(lines.length, 1)
  assert.match(lines[0], /wmcp-top/)
  assert.doesNotThrow(() => api.overlay())
  assert.equal(lines.length, 2)
  api.detach()
})

test("tokenEstimator is 000's ({kind, bytes}) => number, and counts schema tokens too", async () => {
  const asked = []
  const tokenEstimator = ({ kind, bytes }) => {
    asked.push(kind)
    return kind === "image" ? 1000 : bytes
  }
  const ctx = setup({ config: { tokenEstimator } })
  await oneTool(ctx, "img", () => ({ content: [{ type: "image", data: "A".repeat(400), mimeType: "image/png" }] }))
  await ctx.host.executeTool({ name: "img" }, { q: "x" })
  const [s] = ctx.api.spans()
  assert.equal(s.estInputTokens, s.inputBytes)
  assert.equal(s.estImageTokens, 1000)
  assert.equal(s.estTextTokens, s.resultBytes - s.imageBytes)
  assert.equal(s.estTokens, s.estInputTokens + s.estTextTokens + s.estImageTokens)
  const t = ctx.api.ledger().totals
  assert.equal(t.estSchemaTokens, t.schemaBytes, "schema bytes go through the estimator too")
  assert.ok(asked.includes("input") && asked.includes("text") && asked.includes("image"))
})

test("sample is clamped to 0..1 as in 000: 5 measures every call, -1 none", async () => {
  for (const [sample, spans] of [[5, 2], [-1, 0]]) {
    const ctx = setup({ config: { sample } })
    await oneTool(ctx, "t", () => ({}))
    await ctx.host.executeTool({ name: "t" }, {})
    await ctx.host.executeTool({ name: "t" }, {})
    assert.equal(ctx.api.spans().length, spans, `sample ${sample}`)
    assert.equal(ctx.api.ledger().totals.calls, 2)
  }
})

test("status() carries 000's fields besides phase and coverage", async () => {
  const ctx = setup()
  await oneTool(ctx, "t", () => {
    ctx.env.tick(5)
    return {}
  })
  await ctx.host.executeTool({ name: "t" }, {})
  const s = ctx.api.status()
  for (const k of ["phase", "message", "hostLocation", "hostFoundAt", "toolCount", "callCount", "lastCallAt", "hints", "coverage"]) assert.ok(k in s, k)
  assert.equal(s.hostLocation, "document")
  assert.equal(typeof s.hostFoundAt, "number")
  assert.equal(s.toolCount, 1)
  assert.equal(s.callCount, 1)
  assert.equal(s.lastCallAt, ctx.api.spans()[0].settledAt)
})

test("help() and describe() return what 000's return: a promise of undefined, a promise of the manifest", async () => {
  const ctx = setup()
  const lines = []
  ctx.g.console.info = (m) => lines.push(m)
  const h = ctx.api.help()
  assert.ok(h instanceof Promise)
  assert.equal(await h, undefined)
  assert.equal(lines.length, 1, "one console.info block")
  assert.match(lines[0], /summary/)
  const d = ctx.api.describe()
  assert.ok(d instanceof Promise)
  const m = await d
  for (const k of ["package", "activation", "console", "span", "ledger", "config", "tool", "relay", "privacy"]) assert.ok(k in m, k)
  assert.equal(m.package.format, "webmcp-perf-report/2")
  assert.equal(m.console.global, "__webmcpPerf")
  assert.equal(m.activation.param, "perf")
  assert.equal(m.relay.channel, "webmcp-perf:http://127.0.0.1:8000")
  const quiet = setup({ config: { relay: false } })
  assert.equal((await quiet.api.describe()).relay.channel, false)
})

test("describe().config documents every option the page agent README names, relay and uplink as issue 14 renamed them", async () => {
  const { readFileSync } = await import("node:fs")
  const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8")
  const para = readme.slice(readme.indexOf("Configuration for the script tag goes in"), readme.indexOf("The module form (`/agent.mjs`)"))
  const words = ["false", "input", "text", "image"] // values and tokenEstimator's kinds, not options
  const options = [...new Set([...para.matchAll(/`([a-zA-Z]+)`/g)].map((m) => m[1]))].filter((k) => !words.includes(k))
  const config = (await setup().api.describe()).config
  assert.ok(options.includes("uplink") && options.includes("capturePayloads"), "the README paragraph was found")
  assert.deepEqual(options.filter((k) => !(k in config)), [])
  assert.match(config.relay.doc, /BroadcastChannel/)
  assert.match(config.uplink.doc, /WebSocket/)
})

// ---- 10. channel interop ---------------------------------------------------------------------------------

test("a 000 page's error span (200 characters and an ellipsis) is accepted from the channel", async () => {
  const { validateSpan } = await import("../src/page/channel.js")
  const span = {
    sessionId: "bbbbbbbb", seq: 0, tool: "t", invokedAt: 1, settledAt: 2, wallMs: 1, blockingMs: 0, inputBytes: 2,
    resultBytes: 0, contentTypes: {}, imageBytes: 0, estInputTokens: 1, estTextTokens: 0, estImageTokens: 0,
    estTokens: 1, isError: true, error: "e".repeat(200) + "\u2026", gapSincePrevCallMs: null, synthetic: false, serializable: true,
  }
  assert.equal(validateSpan(span).error.length, 201)
})

// ---- 11. summary() text ----------------------------------------------------------------------------------

test("summary() is laid out as 000's: session line, split, one padded line per tool", async () => {
  const ctx = setup()
  await oneTool(ctx, "search", () => {
    ctx.env.tick(4)
    return { r: "x".repeat(96) }
  })
  await oneTool(ctx, "broken", () => {
    throw new Error("no")
  })
  await ctx.host.executeTool({ name: "search" }, {})
  await ctx.host.executeTool({ name: "broken" }, {}).catch(() => {})
  const lines = ctx.api.summary().split("\n")
  assert.equal(lines[0], `wmcp-top · session ${ctx.api.sessionId} · measuring · 2 tools · 2 calls`)
  assert.match(lines[1], /^schemas \S+ \(~\S+ tok\) · tools \S+ · payloads \S+ \(~\S+ tok\) · host gaps \S+$/)
  assert.equal(lines[2], `  ${"broken".padEnd(22)}   1 calls · p50 0.0ms · p95 0.0ms · last 0B (~1 tok) · \u27171`)
  assert.match(lines[3], /^ {2}search {19}1 calls · p50 4\.0ms · p95 4\.0ms · last 104B \(~\d+ tok\)$/)
})

// ---- privacy: the new surfaces carry no bodies ----------------------------------------------------------

test("the report tool's views, describe(), help() and summary() never carry an input or a result", async () => {
  const { CANARY } = await import("../test-support/helpers.mjs")
  const ctx = setup({ config: { reportTool: true } })
  const said = []
  ctx.g.console.info = (m) => said.push(m)
  await oneTool(ctx, "leaky", (input) => ({ content: [{ type: "text", text: `${CANARY} ${input.q}` }] }))
  await ctx.host.executeTool({ name: "leaky" }, { q: CANARY })
  const views = []
  for (const view of ["summary", "tools", "spans"]) views.push(await ctx.host.executeTool({ name: "get_perf_report" }, { view }))
  await ctx.api.help()
  const everything = JSON.stringify([views, await ctx.api.describe(), said, ctx.api.summary(), ctx.api.status(), ctx.api.table()])
  assert.ok(!everything.includes(CANARY))
})

// ---- issue 47, item 5: what webmcp-profiler's users saw differ ---------------------------------------------

test("table() has numeric columns, as webmcp-profiler's: p50/p95/max/blocking (ms), bytes, tokens, schema bytes", async () => {
  const ctx = setup()
  const printed = []
  ctx.g.console.table = (rows) => printed.push(rows)
  await oneTool(ctx, "search", () => ({ content: [{ type: "text", text: "x".repeat(2000) }] }))
  ctx.env.tick(1)
  await ctx.host.executeTool({ name: "search" }, {})
  await settle()
  ctx.env.run()
  const rows = ctx.api.table()
  assert.deepEqual(printed, [rows])
  assert.deepEqual(Object.keys(rows[0]), ["tool", "calls", "errors", "p50 (ms)", "p95 (ms)", "max (ms)", "blocking (ms)", "bytes", "tokens", "schema bytes"])
  for (const [k, v] of Object.entries(rows[0])) if (k !== "tool") assert.equal(typeof v, "number", k)
  assert.equal(rows[0].bytes, ctx.api.spans()[0].resultBytes)
  ctx.api.detach()
})

test("a throwing onSpan listener is said in the page's console; the other listeners still get the span", async () => {
  const ctx = setup()
  const said = []
  ctx.g.console.error = (...args) => said.push(args)
  const got = []
  ctx.api.onSpan(() => {
    throw new Error("listener bug")
  })
  ctx.api.onSpan((s) => got.push(s.tool))
  await oneTool(ctx, "search", () => "ok")
  await ctx.host.executeTool({ name: "search" }, {})
  await settle()
  ctx.env.run()
  assert.deepEqual(got, ["search"])
  assert.equal(said.length, 1)
  assert.match(String(said[0][0]), /onSpan listener threw/)
  assert.equal(said[0][1].message, "listener bug")
  ctx.api.detach()
})

test("exportTrace() marks each host gap with an instant event and names its source in metadata", async () => {
  const ctx = setup()
  await oneTool(ctx, "search", () => "ok")
  for (let i = 0; i < 2; i++) {
    ctx.env.tick(40) // the host and the model think between calls
    await ctx.host.executeTool({ name: "search" }, {})
    await settle()
    ctx.env.run()
  }
  const t = ctx.api.exportTrace()
  const gap = ctx.api.spans()[1].gapSincePrevCallMs
  assert.ok(gap > 0)
  const instants = t.traceEvents.filter((e) => e.ph === "i")
  assert.equal(instants.length, 1)
  assert.deepEqual({ ...instants[0], ts: Math.round(instants[0].ts) }, { name: "host gap", cat: "gap", ph: "i", s: "t", ts: Math.round((t.traceEvents.find((e) => e.ph === "X" && e.args.seq === 1).ts)), pid: 1, tid: 0, args: { beforeSeq: 1, gapMs: gap } })
  assert.deepEqual(t.metadata, { source: "wmcp-top-agent/0.1.0", sessionId: ctx.api.sessionId, origin: "http://127.0.0.1:8000" })
  ctx.api.detach()
})
