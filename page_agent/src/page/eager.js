// The eager part of the agent: the least that must run before the page's own scripts. The ?perf= gate, the
// registry hooks and the wrapper (interceptor.js, wrap.js), and the early buffer (early.js) they report to.
// No socket, no collector, no accounting at load: the rest of the agent (index.js and everything it composes)
// arrives off the critical path, at the first idle moment after the load event, on the first call, or on the
// first use of the console API, whichever comes first, and replays the buffer (early.js). Where the rest comes
// from is the route's (restFrom): compiled into the same file (dist/agent.js, open.js), a script beside this
// one's own URL (the relay's /agent.js, whose rest is /agent-rest.js: rest_script.js), or handed over by a second
// content script (the extension's rest.js, at document_idle).

import { Interceptor } from "./interceptor.js"
import { EarlyLog } from "./early.js"
import { gate, queryParam, searchOf } from "./gate.js"
import { markInternal } from "./wrap.js"
import { reportToolDescriptor } from "./report_tool.js"
import { DEFAULTS, BAKED_UPLINK, VERSION } from "../shared/config.js"
import { safely, read, tryDefine, cap, newSessionId } from "../shared/util.js"

/** The rest compiled into this file (the build fills it: a function returning rest_main.js's exports), or null. */
const INLINE_REST = /*@WMCP_REST@*/ null
/** This build's module table, which the rest's modules join (the build fills it). */
const MODULES = /*@WMCP_MODULES@*/ null
/** The rest script hands itself over through this global (a registered symbol: the rest is another script). */
const HAND = Symbol.for("wmcp-top/rest")
const REPORT_KEY = Symbol.for("wmcp-top/report-tool")
const IDLE_MS = 1000
const AFTER_LOAD_MS = 1000
const LOAD_POLL_MS = 250
const LOADING = "The agent's rest is loading; calls made meanwhile are measured once it is here."

/** @type {any} rest_main.js's exports, once here */
let rest = null
/** @type {any} the early agent waiting for the rest (one a window), or null */
let pending = null
/** where the rest comes from: {load, g} (rest_script.js `restLoader`) | {handoff: true, g} | null */
let source = null
let fetching = false
/** @type {any} the script element this agent inserted: the only one whose hand-over counts */
let expected = null

/**
 * Say where this route's rest comes from (its entry, before attaching): the script tag's route, `load`, inserts
 * the rest's script (rest_script.js); the extension's, `handoff` (its rest is a content script of its own).
 * @param {any} g
 * @param {{load?: (() => any) | null, handoff?: boolean}} o
 */
export function restFrom(g, { load = null, handoff = false } = {}) {
  if (INLINE_REST) return
  if (load) source = { load, g }
  else if (handoff) source = { handoff: true, g }
  if (!source) return
  tryDefine(g, HAND, { value: receive, configurable: true })
}

/** The rest script's hand-over: only the one this agent inserted (or, on the extension's route, the first). */
function receive(factory) {
  if (rest || typeof factory !== "function" || !source) return
  if (!source.handoff && safely(() => source.g.document.currentScript, null) !== expected) return
  rest = factory(MODULES)
  safely(() => delete source.g[HAND])
  need()
}

/** The rest is wanted now: compose it if it is here (or compiled in), else ask for it. */
function need() {
  if (!rest && INLINE_REST) rest = INLINE_REST()
  if (!rest) return void fetchRest()
  const p = pending
  if (!p) return
  pending = null
  p.api = rest.compose(p) || p.api
}

function fetchRest() {
  if (fetching || !source || !source.load) return
  fetching = true
  expected = source.load()
}

/**
 * At the first idle moment once the load event is AFTER_LOAD_MS behind (at most IDLE_MS later; with no document,
 * counted from now). The wait lets a page's other frames finish loading first: ten same-origin frames share one
 * main thread, and the parent's load event waits for the last of them. The document's readyState is looked at
 * every LOAD_POLL_MS rather than listened for: a `load` listener's Event builds that interface in a page that has
 * none, about 5 KB of its heap at load.
 */
function whenIdle(g, fn) {
  const rest = () => safely(() => (typeof g.requestIdleCallback === "function" ? g.requestIdleCallback(() => safely(fn), { timeout: IDLE_MS }) : fn()))
  const untilLoaded = () => {
    const loaded = read(read(g, "document"), "readyState", "complete") === "complete"
    safely((() => g.setTimeout(loaded ? rest : untilLoaded, loaded ? AFTER_LOAD_MS : LOAD_POLL_MS)))
  }
  untilLoaded()
}

const isWindow = (g) => !!read(g, "document") || !!read(g, "window")

/**
 * Attach: the hooks now, the rest off the critical path. Returns the console API (whole once the rest is here).
 * @param {any} [config]
 */
export function attach(config = {}) {
  const cfg = { ...DEFAULTS, ...config }
  const g = cfg.global || globalThis
  // One agent a window, whichever copy of the script attached it (the /agent.mjs module beside the classic tag).
  const named = cfg.globalName ? read(g, cfg.globalName) : null
  const live = pending && !pending.closed ? pending.api : named && named.active ? named : null
  if (live) {
    safely(() => g.console.warn("[wmcp-top] already attached: detach() it first to attach with another configuration"))
    return live
  }
  if (rest || (INLINE_REST && !isWindow(g))) return (rest || (rest = INLINE_REST())).attach(config)
  // The session id is made when first wanted (a call's async frame name, the rest's composing), not at load:
  // the engine's crypto costs a cold page about 0.1 ms the first time.
  let sessionId = null
  const p = { config, get sessionId() { return (sessionId ||= newSessionId()) }, done: false, closed: false, api: null, log: null, interceptor: null, spanListeners: [], updateListeners: [], notes: [], instrumentLater: [], reportName: null, reportTool: false, collector: null }
  p.log = new EarlyLog({ sessionId: () => p.sessionId, config: cfg, clock: cfg.clock, onCall: need, setTimeout: (f, ms) => g.setTimeout(f, ms) })
  const pollMs = Number.isFinite(cfg.pollMs) && cfg.pollMs > 0 ? cfg.pollMs : 250
  p.interceptor = new Interceptor(p.log, {
    global: g,
    pollMs,
    setInterval: cfg.setInterval || ((f, ms) => g.setInterval(f, ms)),
    clearInterval: cfg.clearInterval || ((t) => g.clearInterval(t)),
  })
  p.interceptor.early = true
  if (isWindow(g)) p.log.watchTransport(g)
  p.api = facade(p, g)
  pending = p
  p.interceptor.start()
  const name = cfg.globalName
  if (name) tryDefine(g, name, { value: p.api, configurable: true, writable: true, enumerable: false })
  // ?perf=overlay asks for the console's pointer to the terminal at load: the rest is wanted now.
  if (cfg.overlay === true) need()
  else whenIdle(g, need)
  return p.api
}

/**
 * The ?perf= gate (index.js's maybeAttach says the same), then attach. Closed, nothing is hooked; the rest still
 * comes at idle for the inert console API (status() says why and how to switch on).
 * @param {any} [config]
 */
export function maybeAttach(config = {}) {
  const cfg = { ...DEFAULTS, ...config }
  const g = cfg.global || globalThis
  if (rest || !isWindow(g)) return rest || INLINE_REST ? (rest || (rest = INLINE_REST())).maybeAttach(config) : null
  const defaultOn = cfg.defaultOn !== undefined ? !!cfg.defaultOn : String(BAKED_UPLINK).startsWith("ws") // ws:// or wss://, as the relay bakes it
  const search = searchOf(g)
  // Storage remembers only a mode that switches on (gate.js): where the agent is on by default and the URL says
  // nothing, it cannot change whether to attach, and opening a page's localStorage is the dearest thing the agent
  // would do at load (about 3 ms of a cold page's main thread). A remembered overlay is read with the rest.
  const later = defaultOn && typeof cfg.allow !== "function" && queryParam(search, cfg.param) === null
  const decision = gate({ search, storage: later ? null : safely(() => g.localStorage, null), param: cfg.param, storageKey: cfg.storageKey, allow: cfg.allow, defaultOn })
  if (decision.rejected !== null) safely(() => g.console.warn(`[wmcp-top] ignoring ?${cfg.param}=${cap(decision.rejected, 64)}: use 1, on, true, overlay, 0, off or false`))
  if (decision.on) return attach(decision.mode === "overlay" ? { ...config, overlay: true } : later ? { ...config, storedMode: true } : config)
  if (pending) return pending.api
  return closed(g, cfg, config, defaultOn, decision)
}

/** The gate is closed: nothing hooked, the inert console API (index.js's) coming with the rest. */
function closed(g, cfg, config, defaultOn, decision) {
  const p = (pending = { config: { ...config, defaultOn }, closed: true, done: false, notes: [], waiting: [], api: null })
  // Until the rest is here the API's members ask for it, and say why.
  const status = () => ({ phase: "inactive", active: false, message: LOADING, hints: [], reasons: [], reason: decision.reason, toolCount: 0, callCount: 0 })
  const api = (p.api = { active: false, sessionId: null })
  const ready = (name) => () => new Promise((resolve) => p.waiting.push(() => resolve(api[name]())))
  /** @type {Record<string, (...args: any[]) => any>} */
  const early = { status, help: ready("help"), describe: ready("describe"), overlay: () => undefined, recordConsent: () => false, prompts: () => [] }
  for (const [name, fn] of Object.entries(early)) api[name] = (...args) => (need(), p.done ? api[name](...args) : fn(...args))
  if (cfg.globalName && !read(g, cfg.globalName)) tryDefine(g, cfg.globalName, { value: api, configurable: true, writable: true, enumerable: false })
  whenIdle(g, need)
  return api
}

/** webmcp-profiler's report-tool factory (index.js's profilerTool once the rest is here). */
export function profilerTool(api, options = {}) {
  need()
  if (rest) return rest.profilerTool(api, options)
  const name = typeof options.name === "string" && options.name ? options.name : "get_perf_report"
  if (pending && pending.api === api) pending.reportName = name
  const execute = (input) => {
    const hook = safely(() => api[REPORT_KEY], null)
    return hook ? hook.view(input) : { content: [{ type: "text", text: LOADING }], isError: false }
  }
  return markInternal(reportToolDescriptor(execute, { name, title: typeof options.title === "string" ? options.title : undefined }))
}

/** Detach the agent exposed under globalName, if any. */
export function detach(globalName = DEFAULTS.globalName, g = globalThis) {
  const api = safely(() => g[globalName], null)
  return api && typeof api.detach === "function" ? api.detach() : false
}

export const LATE_CONFIG_HINT = "window.__WMCP_CONFIG__ was set after the agent's script ran, so it was ignored: set it in a <script> above the agent's tag"

/**
 * The script tag read no window.__WMCP_CONFIG__: one set later would be silently ignored. Catch that assignment:
 * the page keeps its value, the console gets one warning, and the status a hint naming the fix.
 * @param {any} g
 * @param {any} api  the console API the tag attached (or null: the gate is closed)
 * @param {(api: any, hint: string) => void} [note]  adds the hint to the API's status (index.js's, once composed)
 */
export function watchLateConfig(g, api, note) {
  const p = pending
  let value
  let told = false
  tryDefine(g, "__WMCP_CONFIG__", {
    configurable: true,
    get: () => value,
    set: (v) => {
      value = v
      if (told || !v || typeof v !== "object") return
      told = true
      safely(() => g.console.warn(`[wmcp-top] ${LATE_CONFIG_HINT}`))
      if (note) safely(() => note(api, LATE_CONFIG_HINT))
      else if (p && !p.done) p.notes.push(LATE_CONFIG_HINT)
      else if (rest && p) safely(() => rest.note(p.api, LATE_CONFIG_HINT))
    },
  })
}

// The console API's members, in the order the whole API has them.
const MEMBERS = ["spans", "spanFacts", "aggregates", "prompts", "ledger", "status", "summary", "help", "describe", "onSpan", "onSpanUpdate", "recordConsent", "instrument", "registerReportTool", "detach", "relay", "overhead", "table", "report", "export", "exportTrace", "overlay", "reset", "channel", "synthetic"]

/**
 * The console API before the rest is here: every member, each asking for the rest first. Where the rest is
 * compiled in, that composes it at once and the member answers in full; where it is fetched, the member answers
 * as an agent with nothing accounted yet (lists empty, status "loading") and the buffer keeps every call.
 * compose() then puts the whole API's members on this same object. One function answers for every member
 * (earlyAnswer), compiled when first called: a function a member would cost every page at load (about 9 KB of
 * heap for the 25 of them), most of which never call one before the rest is here.
 */
function facade(p, g) {
  /** @type {any} */
  const api = {}
  Object.defineProperty(api, "active", { get: () => p.log.active, configurable: true, enumerable: true })
  Object.defineProperty(api, "sessionId", { get: () => p.sessionId, configurable: true, enumerable: true })
  p.waiting = []
  for (const name of MEMBERS) {
    api[name] = function (...args) {
      need()
      return p.done ? api[name](...args) : earlyAnswer(p, g, api, name, args)
    }
  }
  return api
}

/** What console member `name` answers before the rest is here. */
function earlyAnswer(p, g, api, name, args) {
  switch (name) {
    case "spans":
    case "spanFacts":
    case "aggregates":
    case "prompts":
      return []
    case "ledger":
      return { sessionId: p.sessionId, attachedAt: p.log.attachedAt, hostFoundAt: null, hostLocation: null, registeredTools: [], tools: {}, totals: { calls: 0, errors: 0 } }
    case "status":
      return { phase: "loading", active: p.log.active, message: LOADING, hints: [], reasons: [], toolCount: 0, callCount: 0 }
    case "summary":
      return LOADING
    case "help":
    case "describe":
      return new Promise((resolve) => p.waiting.push(() => resolve(api[name]())))
    case "onSpan":
    case "onSpanUpdate": {
      const [list, set] = name === "onSpan" ? [p.spanListeners, "spanListeners"] : [p.updateListeners, "updateListeners"]
      const fn = args[0]
      if (typeof fn !== "function") return () => {}
      list.push(fn)
      return () => {
        if (p.collector) p.collector[set].delete(fn)
        const i = list.indexOf(fn)
        if (i >= 0) list.splice(i, 1)
      }
    }
    case "recordConsent":
      return p.log.recordConsent(args[0], args[1], args[2])
    // Retrofitting tools needs the rest (listing.js): done once it is here.
    case "instrument":
      p.instrumentLater.push(args[0])
      return 0
    case "registerReportTool":
      p.reportTool = true
      return false
    case "detach": {
      if (!p.log.on) return false
      p.log.on = false
      p.log.stopWatching()
      p.interceptor.restore()
      if (pending === p) pending = null
      const global = p.config.globalName === undefined ? DEFAULTS.globalName : p.config.globalName
      if (global && read(g, global) === api) safely(() => delete g[global])
      return true
    }
    case "relay":
      return { state: "loading", url: null, lastError: null }
    case "overhead":
      return { accounted: 0, ms: 0, perSpanMs: 0 }
    default:
      return undefined
  }
}

export { VERSION }
