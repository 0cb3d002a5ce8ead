// attach(): compose the agent for this context and expose the console API. maybeAttach(): the same behind the
// ?perf= gate. Nothing here throws into the page. A span travels one way through what is composed here:
// page -> wrapper (wrap.js, interceptor.js) -> collector (collector.js) -> sink (sink.js: frames) -> the uplink's
// feed (transport/feed.js), which the uplink (transport/uplink.js) sends from, and the channel mirror; one pacer
// (transport/pacing.js) says when.

import { Collector } from "./collector.js"
import { Sink } from "./sink.js"
import { runCommand } from "./commands.js"
import { leaveNote, linkNavigation } from "./navigation.js"
import { noop, inert } from "./inert.js"
import { Interceptor, toolName } from "./interceptor.js"
import { watchLateConfig as watchLate, LATE_CONFIG_HINT } from "./eager.js"
import { reconcile } from "./listing.js"
import { ChannelMirror, postsSpans } from "./channel.js"
import { Uplink } from "../transport/uplink.js"
import { unwatchedMark, Pacer } from "../transport/pacing.js"
import { PromptWatcher } from "./prompt.js"
import { FormTools } from "./forms.js"
import { FactsTaker } from "./facts.js"
import { TransportObserver } from "./transport_observer.js"
import { gate, searchOf } from "./gate.js"
import { makeApi, reportView, reportToolDescriptor, overlayNotice } from "./console.js"
import { markInternal, NATIVE_THEN } from "./wrap.js"
import { normalise, resolveUplink, contextOf, serverSide } from "./options.js"
import { Schemas } from "./schemas.js"
import { ReportHost } from "./report_host.js"
import { watchPage } from "./page_events.js"
import { takeOver } from "./handover.js"
import { DEFAULTS, BAKED_UPLINK, AGENT, VERSION } from "../shared/config.js"
import { newSessionId, cap, safely, now } from "../shared/util.js"
import { pageTime } from "./replay.js"
import { makeTaskScheduler } from "../shared/tasks.js"
import { tokenSocketClass } from "../transport/token_socket.js"

export { VERSION, gate }
export { SessionStats, summaryLine, fmtBytes, fmtCount, fmtDuration, fmtMs, traceEvents } from "./stats.js"

const AGENTS = new WeakMap() // api -> Agent, for tests and tooling
const LIVE = new WeakMap() // global -> the attached api (also under globalName: false): one agent a window
const NOTES = new WeakMap() // api -> adds a hint of the agent's own to its status (watchLateConfig)
// What profilerTool needs of an API, under a registered symbol, so a second copy of the agent (the /agent.mjs
// module imported next to the classic script) can make the report tool of the global API. Only the report's
// view: the Agent itself (its uplink address, with the token) stays out of the page's reach.
const REPORT_KEY = Symbol.for("wmcp-top/report-tool")
// A microtask through the engine's own promise machinery: a reaction on a promise already resolved is queued at
// once, exactly where queueMicrotask would queue it, without Blink's binding (about 9 µs a call in Chromium 156
// on these machines, measured in a CPU profile of back-to-back calls). Captured (wrap.js, at load): a page
// replacing Promise.prototype.then later does not reach us.
const RESOLVED = Promise.resolve()
const enqueueMicrotask = (fn) => NATIVE_THEN.call(RESOLVED, fn)

/** The Agent behind a console API object (tests and tooling; not a page-facing member). */
export function agentOf(api) {
  return AGENTS.get(api) || null
}

class Agent {
  constructor(config) {
    const g = (this.g = config.global || globalThis)
    this.config = config
    const loc = safely(() => g.location, null)
    const nav = safely(() => g.navigator, null)
    this.env = {
      origin: cap(safely(() => loc.origin, "") || "null", 512),
      path: cap(safely(() => loc.pathname, "") || "", 512),
      userAgent: cap(safely(() => nav.userAgent, "") || "", 512),
      context: config.context || contextOf(g),
    }
    // An agent whose hooks ran at load (eager.js) carries on their session, hooks and buffer.
    const early = (this.early = config.early || null)
    const sessionId = early ? early.sessionId : newSessionId()
    this.schedule = config.schedule || makeTaskScheduler(g)
    // One pair of timer functions for the pacer, the uplink and the channel (tests pass manual ones).
    const timers = {
      setTimeout: config.setTimeout || ((f, ms) => g.setTimeout(f, ms)),
      clearTimeout: config.clearTimeout || ((t) => g.clearTimeout(t)),
    }
    this.relay = resolveUplink(config, g)
    /** @type {(() => void)[]} removers of the page's listeners (page_events.js) */
    this.listeners = []
    // Everything the collector says leaves through the sink, one way: frames to the uplink, messages to the channel.
    const sink = (this.sink = new Sink({ g, env: this.env, microtask: enqueueMicrotask }))
    // The one pacer: calls are accounted in the batch window they leave in (flushMs 0: none), and the uplink's and
    // the channel's batches leave right after (its outlets, below).
    this.pacer = new Pacer({ windowMs: config.flushMs, clock: () => this.collector.clock(), schedule: this.schedule, ...timers, microtask: enqueueMicrotask })
    this.collector = new Collector({
      sessionId,
      config,
      clock: config.clock,
      random: config.random,
      schedule: this.schedule,
      pacer: this.pacer,
      perf: config.performance !== undefined ? config.performance : g.performance,
      sink,
    })
    sink.collector = this.collector
    // Diagnosis facts (facts.js): computed in idle callbacks, sent to the relay only (never the channel).
    if (config.facts !== false) {
      this.collector.facts = new FactsTaker({
        global: g,
        send: (seq, facts) => sink.facts(seq, facts),
        schemaOf: (tool) => this.schemas.of(tool),
        setTimeout: timers.setTimeout,
        clock: config.clock,
      })
    }
    this.schemas = new Schemas(this.collector.registry)
    if (early) {
      this.collector.registry.attachedAt = early.log.attachedAt
      this.interceptor = early.interceptor
      this.interceptor.c = this.collector
    } else {
      this.interceptor = new Interceptor(this.collector, {
        global: g,
        pollMs: config.pollMs,
        setInterval: config.setInterval || ((f, ms) => g.setInterval(f, ms)),
        clearInterval: config.clearInterval || ((t) => g.clearInterval(t)),
      })
    }
    const ic = this.interceptor
    ic.lister = (host) => reconcile(ic, host)
    this.report = new ReportHost({ g, interceptor: ic, collector: this.collector, view: (input) => reportView(this, input) })
    // MCP tools/call over the MCP-B postMessage transports, whatever server runs the tool (a window's only).
    if (this.env.context !== "worker") {
      this.collector.wire = new TransportObserver(this.collector, { global: g, name: toolName, setTimeout: timers.setTimeout })
    }
    this.forms = new FormTools(this.collector, { global: g, schedule: this.schedule, onNavigated: (entry) => this.onNavigated(entry) })
    this.interceptor.forms = this.forms
    this.forms.wrapped = (name) => this.interceptor.pendingNames.has(name) || !!(this.interceptor.live.get(name) || {}).wrapper
    this.interceptor.onFound = (host, location) => {
      this.report.found()
      // Declarative tools live on the document's registry (Chromium's, or a polyfill's).
      if (!this.forms.host && (location === "document" || location === "navigator")) {
        this.forms.attach(host, () => this.interceptor.reconcile(host))
        this.interceptor.reconcile(host)
      }
    }
    this.prompts =
      config.prompts === false
        ? null
        : new PromptWatcher({
            global: g,
            clock: config.clock || now,
            sessionId,
            errorPolicy: config.errorPolicy,
            send: (step) => sink.prompt(step),
            // Opt-in (capturePayloads) and only to a relay that wants payloads: the prompt's and the answer's text.
            payload: config.capturePayloads === true ? (p) => sink.promptPayload(p) : null,
            maxPayload: config.maxPayloadLength,
          })
    if (this.prompts) this.interceptor.onSweep = () => this.prompts.sweep()
    if (this.relay) {
      this.uplink = new Uplink({
        relay: this.relay,
        agent: typeof config.agent === "string" && config.agent ? config.agent : AGENT,
        WebSocket: typeof config.relayToken === "function" ? safely(() => tokenSocketClass(g.WebSocket, config.relayToken), null) : (config.WebSocket !== undefined ? config.WebSocket : g.WebSocket) || null,
        ...timers,
        schedule: this.schedule,
        flushMs: config.flushMs,
        clock: config.clock,
        alignQuiet: config.alignFlush !== false,
        calling: () => this.pacer.calling(),
        mark: unwatchedMark(config.buffer),
      })
      // Commands come from the relay's socket only: nothing a page posts (channel, window message) reaches this.
      this.uplink.onCommand = (msg) => safely(() => runCommand(this, msg))
    } else this.uplink = null
    this.channelName = typeof config.channel === "string" ? config.channel : `webmcp-perf:${this.env.origin}`
    // 000's `relay: false` is its privacy switch: nothing goes onto the BroadcastChannel, nothing is read there.
    this.channel =
      config.relay === false || config.channel === false
        ? null
        : new ChannelMirror({
            name: this.channelName,
            sessionId,
            uplink: !!this.uplink,
            rate: config.channelRate,
            ...timers,
            flushMs: config.flushMs,
            alignQuiet: config.alignFlush !== false,
            calling: () => this.pacer.calling(),
            posts: postsSpans(config, !!this.uplink),
            BroadcastChannel: (config.BroadcastChannel !== undefined ? config.BroadcastChannel : g.BroadcastChannel) || null,
            onSession: (id) => sink.foreignSession(id),
            onSpan: (span) => sink.foreignSpan(span),
            onUpdate: (u) => sink.foreignUpdate(u),
          })
    sink.connect(this.uplink, this.channel)
    sink.onRename = (id) => {
      if (this.prompts) this.prompts.sessionId = id
    }
    for (const outlet of [this.channel, this.uplink]) if (outlet) this.pacer.outlets.push(outlet)
    this.api = makeApi(this)
  }

  start() {
    const c = this.collector
    const g = this.g
    if (c.wire) c.wire.start()
    if (this.early) this.interceptor.resume()
    else this.interceptor.start()
    if (this.prompts) safely(() => this.prompts.sweep())
    c.observeLongTasks(this.config.PerformanceObserver || g.PerformanceObserver)
    if (this.uplink) {
      this.uplink.addFeed(this.sink.feed)
      this.uplink.start()
    }
    this.listeners = watchPage(g, c, {
      leaving: (persisted) => {
        // A form submission that is taking the page away: its span leaves before the bye, and so does
        // whatever the uplink's batch window still holds.
        if (this.forms.pagehide() || this.uplink || this.channel) this.deliverNow()
        if (this.uplink) this.uplink.bye(persisted ? "bfcache" : "pagehide")
        if (this.channel && this.uplink) this.channel.announce(true)
      },
      restored: () => {
        if (this.uplink) this.uplink.resume()
      },
    })
    // How this document began is said at the time the agent attached: for an agent whose hooks ran at load
    // (eager.js), before what the page did until the rest arrived.
    const clock = c.clock
    if (this.early) c.clock = () => pageTime(this.early.log.startedAt)
    try {
      linkNavigation(g, c)
      const nav = safely(() => g.performance.getEntriesByType("navigation")[0], null)
      if (nav && nav.type === "reload") c.event("reload", {})
    } finally {
      c.clock = clock
    }
    if (this.config.reportTool) this.report.register()
    if (typeof this.config.onSpan === "function") c.spanListeners.add(this.config.onSpan)
    this.sink.status()
    if (this.config.overlay === true) overlayNotice(this.config, g)
    if (this.early) takeOver(this.early, this)
    const ann = this.config.announce
    if (typeof ann === "function") safely(() => ann(this.api))
    else if (ann && g.console) safely(() => g.console.info(startLine(this)))
  }

  // ---- calls that navigate (navigation.js) ------------------------------------------------------------

  /** A form call's submission is leaving the document: it leaves now (the next task may never run), noted. */
  onNavigated(entry) {
    this.deliverNow()
    if (entry.call) leaveNote(this.g, this.collector.sessionId, entry.call, this.uplink)
  }

  deliverNow() {
    safely(() => this.collector.flush())
    if (this.channel) safely(() => this.channel.flush())
    safely(() => this.sink.deliver())
  }

  detach() {
    const c = this.collector
    if (!c.active) return false
    safely(() => c.flush()) // calls still waiting for their window are accounted, and leave below
    safely(() => this.report.unregister())
    this.forms.restore()
    this.interceptor.restore()
    if (c.wire) c.wire.stop()
    if (this.prompts) safely(() => this.prompts.restore())
    c.stop()
    if (this.uplink) {
      safely(() => this.sink.status())
      safely(() => this.sink.deliver())
      for (const id of Array.from(this.uplink.feeds.keys())) this.uplink.removeFeed(id, "detach")
      this.uplink.stop()
    }
    if (this.channel) this.channel.close()
    for (const off of this.listeners) safely(off)
    this.listeners = []
    if (this.schedule.close) safely(() => this.schedule.close())
    const name = this.config.globalName
    if (name && this.g[name] === this.api) safely(() => delete this.g[name])
    if (LIVE.get(this.g) === this.api) LIVE.delete(this.g)
    return true
  }
}

/**
 * Attach unconditionally. Returns the console API (also exposed as globalThis[globalName] unless
 * globalName is false). A second attach returns the live one.
 */
export function attach(config = {}) {
  const cfg = normalise(config)
  const g = cfg.global || globalThis
  if (serverSide(g)) return noop(cfg)
  const name = cfg.globalName
  const named = name ? safely(() => g[name], null) : null
  const existing = named && named.active ? named : LIVE.get(g)
  if (existing && existing.active) {
    const live = AGENTS.get(existing)
    if (live && live.channel && !live.channel.posts && postsSpans(cfg, true)) {
      // Page code calling attachProfiler() after a terminal route attached asks for the channel's reader.
      live.channel.posts = true
    } else {
      // webmcp-profiler's rule: one profiler a window, and a second attach says so once, in its console.
      safely(() => g.console.warn("[wmcp-top] already attached: detach() it first to attach with another configuration"))
    }
    return existing
  }
  return launch(new Agent(cfg), cfg)
}

/**
 * Compose the rest of an agent whose hooks ran at load (eager.js): its console API becomes whole (the same
 * object the page may already hold), and its buffer replays.
 * @param {any} p  the early agent (eager.js)
 */
export function attachEarly(p) {
  const cfg = normalise({ ...p.config, early: p })
  // The gate at load left storage unread (eager.js): a remembered overlay takes effect now.
  if (cfg.storedMode && safely(() => (cfg.global || globalThis).localStorage.getItem(cfg.storageKey), null) === "overlay") cfg.overlay = true
  const agent = new Agent(cfg)
  Object.defineProperties(p.api, Object.getOwnPropertyDescriptors(agent.api))
  agent.api = p.api
  return launch(agent, cfg)
}

/** Add a hint of the agent's own to an API's status (eager.js's late __WMCP_CONFIG__). */
export function addNote(api, hint) {
  const note = NOTES.get(api)
  if (note) safely(() => note(hint))
}

function launch(agent, cfg) {
  const g = agent.g
  const name = cfg.globalName
  AGENTS.set(agent.api, agent)
  LIVE.set(g, agent.api)
  NOTES.set(agent.api, (hint) => {
    agent.collector.notes.push(hint)
    agent.collector.statusChanged()
  })
  const hook = Object.freeze({
    view: (input) => reportView(agent, input),
    named: (name) => {
      agent.collector.reportToolName = name
    },
  })
  safely(() => Object.defineProperty(agent.api, REPORT_KEY, { value: hook, enumerable: false }))
  if (name) safely(() => Object.defineProperty(g, name, { value: agent.api, configurable: true, writable: true, enumerable: false }))
  agent.start()
  return agent.api
}

/**
 * The console line on attach, laid out as webmcp-profiler's: the handle to call help() on, how to switch off,
 * and the status sentence; then where the numbers go.
 */
function startLine(agent) {
  const cfg = agent.config
  const handle = cfg.globalName || "api"
  const to = agent.relay ? `relay ${agent.uplink.info().url}` : "no relay"
  return `[wmcp-top] profiling on — ${handle}.help() · ?${cfg.param}=0 to disable · ${agent.collector.status().message} (session ${agent.collector.sessionId}, ${to})`
}

export { LATE_CONFIG_HINT }

/** eager.js's watch for a late window.__WMCP_CONFIG__, its hint added to this agent's status (console and dashboard). */
export function watchLateConfig(g, api) {
  watchLate(g, api, (a, hint) => {
    const note = NOTES.get(a)
    if (note) note(hint)
  })
}

/**
 * The ?perf= gate (webmcp-profiler's values), then attach. `defaultOn` defaults to true when an uplink address
 * was baked in by the relay (the user pasted its tag on purpose) and false otherwise. An unknown value is
 * warned about once and otherwise ignored; `?perf=overlay` (given or remembered) also prints the terminal pointer.
 */
export function maybeAttach(config = {}) {
  const cfg = normalise(config)
  const g = cfg.global || globalThis
  if (serverSide(g)) return noop(cfg)
  const defaultOn = cfg.defaultOn !== undefined ? !!cfg.defaultOn : !!resolveUplink({ uplink: BAKED_UPLINK || undefined }, {})
  const decision = gate({
    search: safely(() => searchOf(g), ""),
    storage: safely(() => g.localStorage, null),
    param: cfg.param,
    storageKey: cfg.storageKey,
    allow: cfg.allow,
    defaultOn,
  })
  if (decision.rejected !== null) safely(() => g.console.warn(`[wmcp-top] ignoring ?${cfg.param}=${cap(decision.rejected, 64)}: use 1, on, true, overlay, 0, off or false`))
  if (decision.on) return attach(decision.mode === "overlay" ? { ...cfg, overlay: true } : cfg)
  const { api, note } = inert(cfg, decision)
  NOTES.set(api, note)
  if (cfg.globalName && !safely(() => g[cfg.globalName], null)) safely(() => Object.defineProperty(g, cfg.globalName, { value: api, configurable: true, writable: true, enumerable: false }))
  return api
}

/**
 * webmcp-profiler's report-tool factory (`profilerTool(profiler)` from "webmcp-profiler/tool"): a descriptor
 * the page registers itself; the agent lists it as internal and never measures it.
 * @param {object} api  the console API attach() returned
 * @param {{name?:string, title?:string}} [options]
 */
export function profilerTool(api, options = {}) {
  const hookOf = () => (api && typeof api === "object" && safely(() => api[REPORT_KEY], null)) || null
  const hook = hookOf()
  const name = typeof options.name === "string" && options.name ? options.name : "get_perf_report"
  // Asked at each call: an API whose agent is still loading the rest of itself (eager.js) has its hook later.
  const execute = (input) => {
    const h = hookOf()
    return h ? h.view(input) : { content: [{ type: "text", text: api && typeof api.status === "function" ? api.status().message : "wmcp-top agent not attached" }], isError: false }
  }
  if (hook) hook.named(name)
  return markInternal(reportToolDescriptor(execute, { name, title: typeof options.title === "string" ? options.title : undefined }))
}

/** webmcp-profiler's entry names: `attachProfiler(config)` and the gate `maybeAttachProfiler(config)`. */
export { attach as attachProfiler, maybeAttach as maybeAttachProfiler }

/** Detach the agent exposed under globalName, if any. */
export function detach(globalName = DEFAULTS.globalName, g = globalThis) {
  const api = safely(() => g[globalName], null)
  return api && typeof api.detach === "function" ? api.detach() : false
}
