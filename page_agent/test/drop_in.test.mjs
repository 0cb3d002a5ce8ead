// Where a webmcp-profiler user still tripped (issue 34, section 5): each behaviour its users rely on, as its
// published source (src/index.ts, core/interceptor.ts, core/text.ts) has it, held against this agent.
import { test } from "node:test"
import assert from "node:assert/strict"
import { attach, maybeAttach, agentOf, watchLateConfig, LATE_CONFIG_HINT } from "../src/page/index.js"
import { SPAN_FIELDS, splitLine } from "../src/page/console.js"
import { setup, settle, fakeWindow, legacyHost, DraftHost, connectedAgent, manualEnv } from "../test-support/helpers.mjs"

const tool = (name, execute, extra = {}) => ({ name, description: `the ${name} tool`, inputSchema: { type: "object" }, execute, ...extra })

/** A fake window whose console records warn/info lines. */
function loudWindow(opts) {
  const g = fakeWindow(opts)
  g.lines = { warn: [], info: [] }
  g.console = { log() {}, table() {}, info: (m) => g.lines.info.push(String(m)), warn: (m) => g.lines.warn.push(String(m)) }
  return g
}

// ---- no window, no document: the frozen no-op ---------------------------------------------------------

test("server-side (no window, no document): attach() and maybeAttach() give a frozen no-op that patches and dials nothing", () => {
  let dialled = 0
  let timers = 0
  const server = { setInterval: () => timers++, setTimeout: () => timers++, WebSocket: class { constructor() { dialled++ } }, console: { info() {}, warn() {} } }
  for (const fn of [attach, maybeAttach]) {
    const p = fn({ global: server, uplink: "ws://127.0.0.1:1/relay?t=x", defaultOn: true })
    assert.equal(p.active, false)
    assert.ok(Object.isFrozen(p), "frozen, as webmcp-profiler's")
    assert.deepEqual(p.spans(), [])
    assert.deepEqual(p.aggregates(), [])
    assert.equal(p.report().format, "webmcp-perf-report/2")
    assert.deepEqual(p.report().spans, [])
    assert.equal(p.status().phase, "inactive")
    assert.equal(typeof p.onSpan(() => {}), "function", "onSpan still returns an unsubscribe")
    assert.equal(p.instrument({ t: tool("t", () => 1) }), 0)
    assert.doesNotThrow(() => p.detach())
    assert.equal(agentOf(p), null, "no agent behind it")
  }
  assert.equal(dialled, 0, "no socket")
  assert.equal(timers, 0, "no registry poll, no timer")
  assert.equal("__webmcpPerf" in server, false, "no global")
})

test("the real Node global (what an SSR framework's server runs): attach() is the no-op", () => {
  assert.equal(typeof globalThis.document, "undefined")
  const p = attach({ uplink: false, BroadcastChannel: null })
  assert.equal(p.active, false)
  assert.ok(Object.isFrozen(p))
  assert.equal(globalThis.__webmcpPerf, undefined)
})

test("a worker has no document either, and still attaches", () => {
  class WorkerGlobalScope {}
  const w = Object.assign(Object.create(WorkerGlobalScope.prototype), { WorkerGlobalScope, console: { info() {}, warn() {} }, location: { origin: "http://127.0.0.1:8000", pathname: "/w.js", search: "" } })
  const env = manualEnv()
  const p = attach({ global: w, announce: false, uplink: false, BroadcastChannel: null, WebSocket: null, PerformanceObserver: null, ...env })
  assert.equal(p.active, true)
  assert.ok(!Object.isFrozen(p))
  p.detach()
})

// ---- onSpan has fired when `await execute()` resolves --------------------------------------------------

test("onSpan: the span is delivered before the caller's await resumes, through execute() and the host alike", async () => {
  const fromConfig = []
  const ctx = setup({ config: { onSpan: (s) => fromConfig.push(s.tool), flushMs: 50 } })
  const seen = []
  ctx.api.onSpan((s) => seen.push([s.tool, s.resultBytes]))
  const t = tool("t", async () => ({ ok: 1 }))
  await ctx.host.registerTool(t)
  await t.execute({})
  assert.deepEqual(seen, [["t", 8]], "an exporter reading on settle sees the call")
  await ctx.host.executeTool({ name: "t" }, {})
  assert.equal(seen.length, 2, "the browser's path too")
  const s = tool("s", () => "sync")
  await ctx.host.registerTool(s)
  s.execute({})
  assert.equal(seen.length, 3, "a synchronous execute: delivered before it returns")
  assert.deepEqual(fromConfig, ["t", "t", "s"], "the config's onSpan too")
})

test("onSpan: without a listener the call path stays as it was: accounting waits for its batch", async () => {
  const ctx = setup({ config: { flushMs: 50 } })
  const t = tool("t", async () => ({ ok: 1 }))
  await ctx.host.registerTool(t)
  await t.execute({})
  const c = agentOf(ctx.api).collector
  assert.equal(c.pending.length, 1, "not accounted on the call path")
  const off = ctx.api.onSpan(() => {})
  off()
  await t.execute({})
  assert.equal(c.pending.length, 2, "an unsubscribed listener costs nothing either")
})

// ---- a second attach; the start line -------------------------------------------------------------------

test("a second attach returns the running agent and warns once, also under globalName: false", () => {
  for (const globalName of ["__webmcpPerf", false]) {
    const g = loudWindow({ host: new DraftHost() })
    const base = { global: g, announce: false, uplink: false, BroadcastChannel: null, WebSocket: null, PerformanceObserver: null, globalName, ...manualEnv() }
    const first = attach(base)
    assert.equal(g.lines.warn.length, 0)
    const again = attach({ ...base, buffer: 9 })
    assert.equal(again, first, String(globalName))
    assert.equal(g.lines.warn.length, 1, "warned exactly once")
    assert.match(g.lines.warn[0], /already attached/)
    assert.match(g.lines.warn[0], /detach\(\)/)
    first.detach()
    const fresh = attach(base)
    assert.notEqual(fresh, first, "after detach() a new one attaches")
    assert.equal(g.lines.warn.length, 1)
    fresh.detach()
  }
})

test("the start line names the configured global's help() and how to switch off (?param=0)", () => {
  const g = loudWindow({ host: new DraftHost() })
  const env = manualEnv()
  attach({ global: g, globalName: "__p", param: "perf", uplink: false, BroadcastChannel: null, WebSocket: null, PerformanceObserver: null, ...env })
  const [line] = g.lines.info
  assert.match(line, /__p\.help\(\)/)
  assert.ok(!line.includes("__webmcpPerf"), line)
  assert.match(line, /\?perf=0/)
  const h = loudWindow({ host: new DraftHost() })
  attach({ global: h, param: "profile", uplink: false, BroadcastChannel: null, WebSocket: null, PerformanceObserver: null, ...manualEnv() })
  assert.match(h.lines.info[0], /__webmcpPerf\.help\(\) · \?profile=0/)
})

// ---- spans(): webmcp-profiler's 20 keys; the rest in spanFacts() ----------------------------------------

test("spans() entries carry exactly webmcp-profiler's 20 span keys; spanFacts() has the rest", async () => {
  const ctx = setup()
  const inner = tool("inner", () => "i")
  await ctx.host.registerTool(inner)
  await ctx.host.registerTool(tool("outer", () => inner.execute({}) + "o"))
  await ctx.host.executeTool({ name: "outer" }, {})
  const spans = ctx.api.spans()
  assert.equal(SPAN_FIELDS.length, 20)
  for (const s of spans) assert.deepEqual(Object.keys(s), SPAN_FIELDS)
  const facts = ctx.api.spanFacts()
  assert.deepEqual(facts.map((f) => f.seq), spans.map((s) => s.seq))
  const innerFacts = facts.find((f) => f.seq === spans.find((s) => s.tool === "inner").seq)
  assert.equal(innerFacts.depth, 1)
  assert.equal(innerFacts.resultType, "string")
  assert.ok(!Object.keys(innerFacts).some((k) => k !== "seq" && SPAN_FIELDS.includes(k)), "no 20-field duplicates")
  spans[0].contentTypes.x = 1
  assert.equal(ctx.api.spans()[0].contentTypes.x, undefined, "copies")
})

// ---- status messages and help() -------------------------------------------------------------------------

test("status: host-found names where the registry was found; measuring carries the split; the wire's frame does not", async () => {
  for (const location of ["document", "navigator", "window"]) {
    const ctx = setup({ host: legacyHost(), location })
    assert.equal(ctx.api.status().phase, "host-found")
    assert.match(ctx.api.status().message, new RegExp(`^Registry found on ${location}\\.modelContext; `))
  }
  const ctx = await connectedAgent()
  await ctx.host.registerTool(tool("t", () => ({ ok: 1 })))
  await ctx.host.executeTool({ name: "t" }, {})
  const s = ctx.api.status()
  assert.equal(s.phase, "measuring")
  const split = splitLine(agentOf(ctx.api).collector.stats)
  assert.match(split, /^schemas .* · tools .* · payloads .* · host gaps /)
  assert.equal(s.message, `Measuring tool calls: ${split}`)
  ctx.env.run()
  const frames = ctx.ws.frames("status")
  assert.equal(frames.at(-1).phase, "measuring")
  assert.equal(frames.at(-1).message, "Measuring tool calls.", "the frame changes with the phase, not with every call")
})

test("help(): webmcp-profiler's layout and case: the name, the sentence in lower case, arrowed hints, every member", async () => {
  const g = loudWindow({ host: new DraftHost() })
  const api = attach({ global: g, announce: false, uplink: false, BroadcastChannel: null, WebSocket: null, PerformanceObserver: null, ...manualEnv() })
  assert.equal(await api.help(), undefined)
  const text = g.lines.info.at(-1)
  const [first, second] = text.split("\n")
  assert.equal(first, "wmcp-top agent registry found on document.modelContext; the page has not registered any tools on it yet.")
  assert.ok(text.includes("registry found"), "what webmcp-profiler's own help() test looks for")
  assert.match(second, /^ {2}→ /)
  for (const m of ["spans", "spanFacts", "onSpan", "status", "detach"]) assert.match(text, new RegExp(`\\n  ${m} `))
})

// ---- error messages: the cut is marked --------------------------------------------------------------------

test("an error message longer than 200 characters ends in … and fits the wire's 200", async () => {
  const ctx = setup()
  await ctx.host.registerTool(tool("boom", () => {
    throw new Error("x".repeat(500))
  }))
  await assert.rejects(ctx.host.executeTool({ name: "boom" }, {}))
  const [s] = ctx.api.spans()
  assert.equal(s.error.length, 200)
  assert.equal(s.error, "x".repeat(199) + "\u2026")
})

// ---- registrations: unregister restores, aborted is not listed, listed on acceptance --------------------

test("after unregisterTool the tool's execute is the page's own again; a re-registration wraps it again", async () => {
  const host = legacyHost()
  const ctx = setup({ host, location: "navigator" })
  const execute = () => ({ ok: 1 })
  const t = tool("t", execute)
  host.registerTool(t)
  assert.notEqual(t.execute, execute, "wrapped")
  host.unregisterTool("t")
  assert.equal(t.execute, execute, "restored, as webmcp-profiler restores it")
  assert.deepEqual(ctx.api.ledger().registeredTools, [])
  host.registerTool(t)
  assert.notEqual(t.execute, execute)
  host.call("t", {})
  assert.equal(ctx.api.spans().length, 1, "measured again")
})

test("a registration withdrawn through its signal gets its execute back too", async () => {
  const ctx = setup()
  const execute = async () => "x"
  const t = tool("t", execute)
  const ac = new AbortController()
  await ctx.host.registerTool(t, { signal: ac.signal })
  assert.notEqual(t.execute, execute)
  ac.abort()
  await settle()
  assert.equal(t.execute, execute)
  assert.deepEqual(ctx.api.ledger().registeredTools, [])
})

test("a registration whose signal is already aborted is not listed (and keeps nothing of ours)", async () => {
  const ctx = setup() // DraftHost resolves whatever the signal says, as webmcp-profiler's fake host does
  const execute = async () => "x"
  const t = tool("dead", execute)
  const ac = new AbortController()
  ac.abort()
  await ctx.host.registerTool(t, { signal: ac.signal })
  await settle()
  ctx.env.run()
  assert.deepEqual(ctx.api.ledger().registeredTools, [])
  assert.equal(ctx.api.status().phase, "host-found")
  assert.equal(t.execute, execute)
})

test("a tool is listed when the host accepts it, not when getTools() answers; its frame still carries what the host kept", async () => {
  // A host whose getTools() answers only when the test says (Chromium's is a round trip to the browser process).
  class SlowList extends DraftHost {
    constructor() {
      super()
      this.answers = []
    }
    getTools() {
      return new Promise((r) => this.answers.push(() => r(super.getTools())))
    }
  }
  const host = new SlowList()
  const ctx = await connectedAgent({ host })
  const before = ctx.ws.frames("tool").length
  await host.registerTool(tool("t", () => 1, { annotations: { readOnlyHint: true } }))
  assert.deepEqual(ctx.api.ledger().registeredTools, ["t"], "listed at acceptance")
  assert.equal(ctx.api.status().phase, "tools-registered")
  ctx.env.run()
  assert.equal(ctx.ws.frames("tool").length, before, "the relay's frame waits for the annotations")
  for (const answer of host.answers.splice(0)) answer()
  await settle()
  ctx.env.run()
  const frames = ctx.ws.frames("tool").slice(before)
  assert.equal(frames.length, 1, "one frame")
  assert.deepEqual([frames[0].name, frames[0].change, frames[0].annotationsKept.readOnlyHint], ["t", "registered", true])
})

// ---- window.__WMCP_CONFIG__ assigned after the script ran ------------------------------------------------

test("a window.__WMCP_CONFIG__ assigned after the agent ran: one console warning, a status hint, the page keeps its value", () => {
  const g = loudWindow({ host: new DraftHost() })
  const api = attach({ global: g, announce: false, uplink: false, BroadcastChannel: null, WebSocket: null, PerformanceObserver: null, ...manualEnv() })
  watchLateConfig(g, api)
  g.__WMCP_CONFIG__ = { globalName: "__late" }
  g.__WMCP_CONFIG__ = { globalName: "__later" }
  assert.deepEqual(g.__WMCP_CONFIG__, { globalName: "__later" })
  assert.equal(g.lines.warn.length, 1)
  assert.ok(g.lines.warn[0].includes("before") || g.lines.warn[0].includes("above"), g.lines.warn[0])
  assert.equal(api.status().hints[0], LATE_CONFIG_HINT)
  assert.match(LATE_CONFIG_HINT, /above the agent's tag/)
  // and while the gate is closed (the inert object)
  const h = loudWindow({ host: new DraftHost() })
  const inert = maybeAttach({ global: h, defaultOn: false, announce: false })
  watchLateConfig(h, inert)
  h.__WMCP_CONFIG__ = { defaultOn: true }
  assert.equal(h.lines.warn.length, 1)
  assert.equal(inert.status().hints[0], LATE_CONFIG_HINT)
})

// ---- hostile pages -----------------------------------------------------------------------------------------

test("hostile onSpan listeners (one throws, one calls another tool) cannot break the page's call or the relay's spans", async () => {
  const ctx = await connectedAgent()
  const other = tool("other", () => "o")
  await ctx.host.registerTool(other)
  await ctx.host.registerTool(tool("t", async () => ({ ok: 1 })))
  const seen = []
  let nested = 0
  ctx.api.onSpan(() => {
    throw new Error("listener bug")
  })
  ctx.api.onSpan((s) => {
    seen.push(s.tool)
    if (s.tool === "t" && nested++ < 3) other.execute({}) // re-entrant: a call from inside the settle path
  })
  const got = await ctx.host.executeTool({ name: "t" }, {})
  assert.equal(got, '{"ok":1}', "the page's call still answers")
  assert.deepEqual(seen, ["t", "other"])
  await ctx.host.executeTool({ name: "t" }, {})
  ctx.env.run()
  const sent = ctx.ws.frames("spans").flatMap((f) => f.spans).map((s) => s.tool)
  assert.deepEqual(sent, ["t", "other", "t", "other"], "every span reaches the relay once, in order")
})

test("a hostile late config: throwing console, assignment storm, odd values: no throw into the page, one warning, one hint", () => {
  const g = loudWindow({ host: new DraftHost() })
  let warns = 0
  g.console.warn = () => {
    warns++
    throw new Error("console gone")
  }
  const api = attach({ global: g, announce: false, uplink: false, BroadcastChannel: null, WebSocket: null, PerformanceObserver: null, ...manualEnv() })
  watchLateConfig(g, api)
  for (const v of [null, 7, "x", undefined]) g.__WMCP_CONFIG__ = v // not a configuration: no warning
  assert.equal(warns, 0)
  const hostile = {}
  Object.defineProperty(hostile, "globalName", { get() { throw new Error("gotcha") } })
  for (let i = 0; i < 1000; i++) g.__WMCP_CONFIG__ = i % 2 ? hostile : { i }
  assert.equal(warns, 1, "one warning, however often it is assigned")
  const hints = api.status().hints
  assert.equal(hints.filter((h) => h === LATE_CONFIG_HINT).length, 1)
  assert.ok(hints.length <= 8, "within the wire's 8 hints")
  assert.equal(g.__WMCP_CONFIG__, hostile, "the page keeps its last value")
  delete g.__WMCP_CONFIG__ // the page may take the property back
  g.__WMCP_CONFIG__ = { plain: true }
  assert.deepEqual(g.__WMCP_CONFIG__, { plain: true })
})
