// Test doubles: a draft-shaped host that behaves like Chromium 156's (measured), a legacy navigator host,
// a fake WebSocket, an in-process BroadcastChannel, manual clocks, timers and task queues.

import { attach, agentOf } from "../src/page/index.js"

/** Serialise a tool's return value the way Chromium's executeTool does (see page_agent/README.md). */
export function chromiumText(value) {
  if (typeof value === "string") return value === "" ? "Operation succeeded" : value
  if (value === undefined || typeof value === "function") return "undefined"
  if (value === null || typeof value === "number" || typeof value === "boolean" || typeof value === "bigint") return String(value)
  const text = JSON.stringify(value) // throws on cycles: the host reports UnknownError
  return text === undefined ? "undefined" : text
}

export const utf8 = (s) => Buffer.byteLength(s, "utf8")

/** Chromium keeps readOnlyHint/untrustedContentHint (as booleans) and adds consequentialHint/debugging. */
function normaliseAnnotations(a) {
  if (!a) return null
  return { consequentialHint: false, debugging: false, readOnlyHint: !!a.readOnlyHint, untrustedContentHint: !!a.untrustedContentHint }
}

export class DraftHost extends EventTarget {
  constructor() {
    super()
    this.registry = new Map()
  }
  registerTool(tool, options = {}) {
    if (!tool.description) return Promise.reject(Object.assign(new Error("Description is required"), { name: "InvalidStateError" }))
    if (this.registry.has(tool.name)) return Promise.reject(Object.assign(new Error("Duplicate tool name"), { name: "InvalidStateError" }))
    const entry = { name: tool.name, title: tool.title || "", description: tool.description, inputSchema: tool.inputSchema || null, annotations: normaliseAnnotations(tool.annotations), execute: tool.execute }
    this.registry.set(tool.name, entry)
    if (options.signal) {
      options.signal.addEventListener("abort", () => {
        if (this.registry.get(tool.name) === entry) {
          this.registry.delete(tool.name)
          this.dispatchEvent(new Event("toolchange"))
        }
      })
    }
    this.dispatchEvent(new Event("toolchange"))
    return Promise.resolve(undefined)
  }
  async getTools() {
    return Array.from(this.registry.values()).map(({ execute, ...rest }) => ({ ...rest }))
  }
  /** What the browser's agent reads: a string, or an UnknownError. */
  async executeTool(tool, input) {
    const entry = this.registry.get(tool.name)
    if (!entry) throw Object.assign(new Error("no such tool"), { name: "NotFoundError" })
    // Chromium 156 fires toolactivated {toolName} before every call, form and imperative tools alike.
    const activated = new Event("toolactivated")
    activated.toolName = tool.name
    this.dispatchEvent(activated)
    try {
      const v = await entry.execute(input, {})
      return chromiumText(v)
    } catch {
      throw Object.assign(new Error("Tool was executed but the invocation failed."), { name: "UnknownError" })
    }
  }
  cancel(name) {
    const e = new Event("toolcancel")
    e.toolName = name
    this.dispatchEvent(e)
  }
}

/** A legacy host: synchronous registerTool, unregisterTool, provideContext, clearContext as own properties. */
export function legacyHost() {
  const tools = new Map()
  const host = {
    tools,
    registerTool(tool) {
      if (tools.has(tool.name)) throw new Error("duplicate")
      tools.set(tool.name, tool)
      return { unregister: () => tools.delete(tool.name) }
    },
    unregisterTool(name) {
      tools.delete(name)
    },
    provideContext(ctx) {
      tools.clear()
      for (const t of ctx.tools || []) tools.set(t.name, t)
    },
    clearContext() {
      tools.clear()
    },
    /** The legacy host reads tool.execute at call time. */
    call(name, input) {
      return tools.get(name).execute(input)
    },
  }
  return host
}

export class FakeWebSocket {
  static instances = []
  constructor(url, protocols) {
    this.url = url
    this.protocols = protocols
    this.sent = []
    this.readyState = 0
    this.closedByAgent = false
    FakeWebSocket.instances.push(this)
  }
  send(data) {
    if (this.readyState !== 1) throw new Error("not open")
    this.sent.push(JSON.parse(data))
  }
  close() {
    this.closedByAgent = true
    this.readyState = 3
  }
  // driven by the test
  accept(welcome = {}) {
    this.readyState = 1
    this.onopen && this.onopen({})
    // A relay that takes payload frames (--otlp or --show-payloads), unless the test says otherwise.
    this.deliver({ type: "welcome", protocol: "wmcp-relay/1", relay: "test", limits: {}, payloads: true, ...welcome })
  }
  deliver(msg) {
    this.onmessage && this.onmessage({ data: typeof msg === "string" ? msg : JSON.stringify(msg) })
  }
  drop() {
    this.readyState = 3
    this.onclose && this.onclose({ code: 1006 })
  }
  frames(type) {
    return this.sent.filter((f) => !type || f.type === type)
  }
  static last() {
    return FakeWebSocket.instances[FakeWebSocket.instances.length - 1]
  }
}

/** BroadcastChannel within one process: a message reaches every other instance with the same name. */
export function channelBus() {
  const byName = new Map()
  const log = []
  class BC {
    constructor(name) {
      this.name = name
      this.onmessage = null
      if (!byName.has(name)) byName.set(name, new Set())
      byName.get(name).add(this)
    }
    postMessage(data) {
      const copy = structuredClone(data)
      log.push({ name: this.name, data: copy })
      for (const other of byName.get(this.name)) if (other !== this && other.onmessage) other.onmessage({ data: structuredClone(data) })
    }
    close() {
      byName.get(this.name).delete(this)
    }
  }
  return { BroadcastChannel: BC, log }
}

/** Manual time: clock(), setTimeout/setInterval driven by advance(ms), a task queue driven by run(). */
export function manualEnv() {
  let t = 1000
  const timers = new Map()
  let nextId = 1
  const tasks = []
  const env = {
    clock: () => t,
    tick(ms) {
      t += ms
    },
    setTimeout(fn, ms) {
      const id = nextId++
      timers.set(id, { at: t + ms, fn, every: 0 })
      return id
    },
    clearTimeout(id) {
      timers.delete(id)
    },
    setInterval(fn, ms) {
      const id = nextId++
      timers.set(id, { at: t + ms, fn, every: ms })
      return id
    },
    clearInterval(id) {
      timers.delete(id)
    },
    advance(ms) {
      const end = t + ms
      for (;;) {
        let next = null
        for (const [id, tm] of timers) if (tm.at <= end && (!next || tm.at < next[1].at)) next = [id, tm]
        if (!next) break
        const [id, tm] = next
        t = Math.max(t, tm.at)
        if (tm.every) tm.at += tm.every
        else timers.delete(id)
        tm.fn()
      }
      t = end
    },
    timerCount: () => timers.size,
    schedule: (fn) => tasks.push(fn),
    /** Run queued tasks (and the ones they queue) until none is left. */
    run() {
      let n = 0
      while (tasks.length) {
        tasks.shift()()
        if (++n > 10000) throw new Error("task storm")
      }
    },
    pendingTasks: () => tasks.length,
    perf: {
      names: new Set(),
      measure(name) {
        this.names.add(name)
      },
      clearMeasures(name) {
        this.names.delete(name)
      },
    },
  }
  return env
}

/** Let promise reactions settle (several microtask turns). */
export const settle = async () => {
  for (let i = 0; i < 10; i++) await Promise.resolve()
}

/** A fake window with `host` at `location` ("document" | "navigator" | "window" | null). */
export function fakeWindow({ host = null, location = "document", search = "" } = {}) {
  const storage = new Map()
  const g = {
    document: { title: "Test page", URL: `http://127.0.0.1:8000/shop${search}#top`, visibilityState: "visible", addEventListener() {}, removeEventListener() {} },
    navigator: { userAgent: "FakeAgent/1.0" },
    location: { origin: "http://127.0.0.1:8000", pathname: "/shop", search },
    console: { log() {}, info() {}, table() {} },
    localStorage: {
      getItem: (k) => (storage.has(k) ? storage.get(k) : null),
      setItem: (k, v) => storage.set(k, String(v)),
      removeItem: (k) => storage.delete(k),
    },
    addEventListener() {},
    removeEventListener() {},
    AbortController,
  }
  g.top = g
  if (host) {
    if (location === "window") g.modelContext = host
    else g[location].modelContext = host
  }
  return g
}

/** Attach an agent to a fake window with manual time; returns {api, env, g, host}. */
export function setup({ host = new DraftHost(), location = "document", config = {}, env = manualEnv(), g } = {}) {
  g = g || fakeWindow({ host, location })
  const api = attach({
    global: g,
    clock: env.clock,
    schedule: env.schedule,
    setTimeout: env.setTimeout,
    clearTimeout: env.clearTimeout,
    setInterval: env.setInterval,
    clearInterval: env.clearInterval,
    performance: env.perf,
    PerformanceObserver: null,
    BroadcastChannel: null,
    WebSocket: null,
    announce: false,
    uplink: false,
    // Frames flush on the next task (env.run()), as the tests drive them; the batch window has its own tests.
    flushMs: 0,
    ...config,
  })
  return { api, env, g, host }
}

export const CANARY = "CANARY-7f3a9c-do-not-leak"

/** The uplink address the tests bake in (the token is a fixed test value). */
export const RELAY = "ws://127.0.0.1:7420/relay?t=0123456789abcdef0123456789abcdef"

/** An attached agent whose uplink is open and has had the relay's resume ack (-1): ready to send spans. `welcome`:
 * what the relay's welcome says beyond the test's defaults. */
export async function connectedAgent({ host = new DraftHost(), location = "document", config = {}, g, welcome } = {}) {
  FakeWebSocket.instances = []
  const env = manualEnv()
  const ctx = setup({ env, host, location, g, config: { WebSocket: FakeWebSocket, uplink: RELAY, ...config } })
  const ws = FakeWebSocket.last()
  ws.accept(welcome)
  env.run()
  ws.deliver({ type: "ack", session: ctx.api.sessionId, seq: -1 })
  env.run()
  return { ...ctx, ws, id: ctx.api.sessionId }
}

/**
 * An unwatched session (its spans wait for the relay's 1 s interval, time enough for the idle callback's facts)
 * that made `calls` calls of a tool answering "plain", its facts taken: {ctx, before} (`before`: the frames sent
 * until the first call).
 */
export async function unwatchedCalls({ welcome, calls = 3 } = {}) {
  const ctx = await connectedAgent({ welcome })
  ctx.ws.deliver({ type: "watch", session: ctx.id, watched: false, intervalMs: 1000 })
  ctx.env.run()
  await ctx.host.registerTool({ name: "t", description: "t", inputSchema: { type: "object" }, execute: () => "plain" })
  await settle()
  ctx.env.run()
  const before = ctx.ws.sent.length
  for (let i = 0; i < calls; i++) {
    await ctx.host.executeTool({ name: "t" }, { i })
    await settle()
    ctx.env.run()
  }
  ctx.env.advance(60) // the facts are taken
  ctx.env.run()
  return { ctx, before }
}

/** Each span with what the agent knows beyond webmcp-profiler's 20 fields (spans() keeps to those; spanFacts()). */
export function fullSpans(api) {
  const facts = api.spanFacts()
  return api.spans().map((s, i) => ({ ...s, ...facts[i] }))
}

/**
 * Watch spans as the accounting emits them, without subscribing onSpan (a listener makes the accounting run in
 * the settle path, collector.js): for tests of when the deferred accounting runs.
 */
export function watchAccounting(api, fn) {
  const sink = agentOf(api).collector.sink
  const span = sink.span
  sink.span = (s) => {
    fn(s)
    span.call(sink, s)
  }
}
