// window.__webmcpPerf: the console API, the report document, and the get_perf_report tool's views.

import { fmtBytes, fmtCount, fmtMs, traceEvents } from "./stats.js"
import { VERSION, AGENT } from "../shared/config.js"
import { safely, utf8Length } from "../shared/util.js"
import { PROFILER_FIELDS } from "./channel.js"
import { REPORT_VIEWS, reportToolDescriptor } from "./report_tool.js"
import { instrument } from "./listing.js"

/** The 000 span fields, in order: report v2 spans carry exactly these (the objects are closed). */
export { REPORT_VIEWS, reportToolDescriptor }
export const SPAN_FIELDS = PROFILER_FIELDS
export const SPAN_FACTS = ["resultType", "envelope", "substituted", "depth", "parent", "overlapped", "errorType", "refusal", "consent", "consentMismatch", "invokedBy"]

const pick = (o, keys) => {
  const out = {}
  for (const k of keys) out[k] = o[k]
  return out
}

export const MEMBERS = {
  active: "true until detach() has run (false for the inert object left when the gate is closed)",
  sessionId: "this session's 8-hex id, stamped on every span",
  spans: "the raw span ring buffer, oldest first (copies with webmcp-profiler's 20 span fields exactly)",
  spanFacts: "what wmcp-top knows beyond those 20 fields, one entry per buffered span: seq plus resultType, envelope, substituted, depth, parent, overlapped, errorType, refusal, consent, consentMismatch (invokedBy, waitedMs, outcome where they apply)",
  aggregates: "per-tool rows over the buffered spans: calls, errors, min/p50/p95/max, blocking, bytes, tokens, schema bytes",
  ledger: "the session ledger: host timeline, registered tools, running totals",
  onSpan: "subscribe to spans as they settle; returns an unsubscribe function",
  onSpanUpdate: "subscribe to late corrections (Long-Task blocking); returns an unsubscribe function",
  status: "phase, one sentence, next steps, host location, tool and call counts, coverage and its reasons",
  help: "print the status line and this member list to the console",
  summary: "a few lines of text: the session line, the split, then one line per tool",
  describe: "the machine-readable manifest of this API, its fields and configuration (a promise)",
  table: "console.table of the per-tool rows: numeric columns (p50/p95/max/blocking in ms to 0.1, bytes, tokens, schema bytes)",
  report: "the webmcp-perf-report/2 document; {spans:false} omits spans, {spans:50} keeps the newest 50, {tool} filters",
  export: "download report() as a .json file",
  exportTrace: "download the spans as Chrome trace-event JSON (Perfetto, chrome://tracing)",
  overlay: "there is no in-page panel: prints where the numbers are shown (the wmcp-top terminal)",
  instrument: "retrofit tools registered before the agent: a {name: tool} map, an array or one tool; returns how many",
  synthetic: "mark spans recorded from now on as synthetic (synthetic(false) stops)",
  reset: "clear spans and totals; keeps the tool registry",
  detach: "restore every original execute and registry method, stop observing, close the uplink, drop the global",
  registerReportTool: "register get_perf_report (internal, never measured) on the host",
  relay: "the uplink's state: connection, counters, acked seq and lost per session (no token)",
  overhead: "the agent's own deferred accounting cost: spans accounted, total ms, ms per span",
  channel: "the BroadcastChannel mirror's counters (received, accepted, invalid, own, rateLimited, sessionCap)",
  recordConsent: "report the host's consent dialogue: recordConsent({shown, resolved, granted}); an event now, and consent on the next span of that tool",
  prompts: "Prompt API sessions seen (LanguageModel): per-step timings and character counts, never text",
}

/**
 * webmcp-profiler's trace marks each host gap with an instant event where the next call arrived: added beside the
 * gap slices on lane 0 (which show its length), so its readers find the gaps where they look for them.
 * @param {{traceEvents: any[]}} trace
 */
function withGapMarks(trace) {
  const marks = []
  for (const e of trace.traceEvents) {
    if (e.cat !== "gap" || e.ph !== "X") continue
    marks.push({ name: "host gap", cat: "gap", ph: "i", s: "t", ts: e.ts + e.dur, pid: e.pid, tid: 0, args: { beforeSeq: e.args.beforeSeq, gapMs: e.dur / 1000 } })
  }
  trace.traceEvents = trace.traceEvents.concat(marks)
  return trace
}

/** One line per span field (describe().span). */
export const SPAN_DOCS = {
  sessionId: "the session that measured the call; with seq it names the span",
  seq: "the call's number in its session, counting from 0",
  tool: "the name the tool was registered under",
  invokedAt: "page clock (performance.now(), ms) when execute() was entered",
  settledAt: "page clock when execute() returned, resolved, threw or rejected",
  wallMs: "settledAt - invokedAt",
  blockingMs: "Long-Task time inside the call (Chromium; may arrive after the span as a correction)",
  inputBytes: "UTF-8 bytes of the input as JSON text",
  resultBytes: "UTF-8 bytes of what the agent receives (objects as JSON, a string as itself)",
  contentTypes: "how many content items of each type an MCP-shaped result carried",
  imageBytes: "base64 characters of image content",
  estInputTokens: "estimated tokens the model wrote for the input",
  estTextTokens: "estimated tokens of the result's non-image part",
  estImageTokens: "estimated tokens of the result's images, at decoded size",
  estTokens: "the three estimates added up: the call's cost to the model",
  isError: "the tool threw, rejected, or answered isError: true",
  error: "per errorPolicy: the message (200 characters at most), the error's name, or null",
  gapSincePrevCallMs: "time from the previous call settling to this one starting (host + model); null for the first call and for overlapping calls",
  synthetic: "recorded while synthetic() was on (the bench)",
  serializable: "false when the result could not be turned into JSON (its bytes then count 0)",
}

/** One line per ledger field (describe().ledger). */
export const LEDGER_DOCS = {
  sessionId: "the session's id",
  attachedAt: "wall clock (epoch ms) of attach",
  hostFoundAt: "page clock when a modelContext registry was first seen",
  hostLocation: "where that registry lives: document, navigator or window",
  firstRegistrationAt: "page clock of the page's first tool registration",
  registeredTools: "the names registered now",
  tools: "per tool ever registered: schemaBytes, registeredAt, unregisteredAt, internal",
  firstCallAt: "page clock of the first measured call",
  lastSettledAt: "page clock of the latest call to settle",
  "totals.calls": "calls since attach or reset, sampled out or not",
  "totals.unsampledCalls": "calls sample let through unmeasured",
  "totals.overlappingCalls": "calls that began before the previous one settled",
  "totals.errors": "calls that failed",
  "totals.wallMs": "wall time of every measured call, added up",
  "totals.blockingMs": "Long-Task time inside calls, each millisecond counted once",
  "totals.resultBytes": "result bytes, added up",
  "totals.estTokens": "estimated tokens (input and result), added up",
  "totals.estInputTokens": "estimated input tokens, added up",
  "totals.hostGapMs": "host gaps added up: time spent waiting on the host and the model",
  "totals.schemaBytes": "descriptor bytes of the tools registered now, sent in every conversation",
  "totals.estSchemaTokens": "those bytes as estimated tokens",
}

/** One entry per configuration key of attach() and maybeAttach() (describe().config), defaults as text. */
export const CONFIG_DOCS = {
  buffer: { doc: "spans kept in the ring buffer", default: "500" },
  relay: { doc: "mirror spans onto the same-origin BroadcastChannel (false: no channel, nothing read from it; \"read\": read it, post nothing per span)", default: "true from attachProfiler(); \"read\" from the relay's script tag, the extension and wmcp-top open" },
  uplink: { doc: "the wmcp-top relay's WebSocket URL; false: no socket", default: "the address the relay baked in, else __WMCP_UPLINK__" },
  overlay: { doc: "accepted for webmcp-profiler configs: prints one line pointing to the terminal", default: "false" },
  globalName: { doc: "global property the console API is exposed on; false exposes none", default: '"__webmcpPerf"' },
  channel: { doc: "the BroadcastChannel's name", default: '"webmcp-perf:" + location.origin' },
  pollMs: { doc: "how often to look for a registry until one is found", default: "250" },
  flushMs: { doc: "the batch window of the uplink and the channel: what gathers within it leaves together (0: on the next task; at most 250)", default: "50" },
  alignFlush: { doc: "a busy page's batch whose window ends during a call leaves right after that call is accounted (within 250 ms); false: when the window ends", default: "true" },
  tokenEstimator: { doc: "({kind, bytes}) => tokens for kind input, text, image; schema tokens too", default: "ceil(bytes/4); images at decoded size" },
  onSpan: { doc: "a span listener subscribed at attach", default: "none" },
  sample: { doc: "share of calls measured, clamped to 0..1; the rest run unmeasured", default: "1" },
  errorPolicy: { doc: 'what an error span keeps: "message" (200 characters at most), "name" or "none"', default: '"message"' },
  param: { doc: "the query parameter the gate reads", default: '"perf"' },
  storageKey: { doc: "localStorage key of the remembered mode", default: '"webmcp-perf:mode"' },
  announce: { doc: "console line on attach; false: none; a function replaces it", default: "true" },
  allow: { doc: "the page's veto over the gate; false also forgets a remembered mode", default: "() => true" },
  reportTool: { doc: "register get_perf_report on the host once one is found", default: "false" },
  isErrorResult: { doc: "(value) => truthy marks a returned value as a failure (errorType tool_error)", default: "none" },
  isRefusal: { doc: '(value) => "confirm", "unavailable", a short label of the page\'s own, or undefined', default: "the built-in English match" },
  fingerprintHandler: { doc: "fold the handler's source into the descriptor fingerprint", default: "false" },
  capturePayloads: { doc: "send argument and result text on payload frames, only to a relay that asks (OpenTelemetry, --show-payloads)", default: "false" },
  maxPayloadLength: { doc: "characters kept of each captured text (at most 65536)", default: "2048" },
  prompts: { doc: "false leaves the Prompt API (LanguageModel) alone", default: "true" },
}

/** The gate's accepted values (describe().activation.modes). */
export const GATE_MODES = {
  1: "on, remembered for this origin (also on, true)",
  overlay: "on and remembered, with the pointer to the terminal",
  0: "off for this load; forgets the remembered mode (also off, false)",
}

/** The get_perf_report tool's views and what each costs to read. */

const PRIVACY = [
  "spans hold sizes, shapes, timings, tool names and (per errorPolicy) error messages; never inputs or results",
  "spans leave the page only to same-origin tabs (BroadcastChannel; relay: false stops it) and to the loopback wmcp-top relay (uplink: false stops it)",
  "same-origin scripts can read the global and the channel: use globalName: false and relay: false for production telemetry through onSpan",
]

/** describe(): webmcp-profiler's manifest shape, for this agent. */
export function manifest(cfg, { toolName = null, uplink = null, settings = null } = {}) {
  const origin = safely(() => (cfg.global || globalThis).location.origin, "") || "<origin>"
  return {
    package: { name: "wmcp-top-agent", version: VERSION, format: FORMAT },
    activation: {
      param: cfg.param,
      storageKey: cfg.storageKey,
      modes: { ...GATE_MODES },
      cost: "closed: one query parse and one storage read; open: two clock reads and a push per call, the rest of the accounting off the call path",
    },
    console: { global: cfg.globalName, methods: { ...MEMBERS } },
    span: { ...SPAN_DOCS },
    ledger: { ...LEDGER_DOCS },
    config: Object.fromEntries(Object.entries(CONFIG_DOCS).map(([k, v]) => [k, { ...v }])),
    tool: toolName ? { name: toolName, views: { ...REPORT_VIEWS } } : null,
    relay: {
      channel: cfg.relay === false || cfg.channel === false ? false : typeof cfg.channel === "string" ? cfg.channel : `webmcp-perf:${origin}`,
      scope: "same-origin tabs and frames of this browser",
    },
    privacy: PRIVACY.slice(),
    spanFacts: SPAN_FACTS.slice(),
    uplink,
    settings,
  }
}

const FORMAT = "webmcp-perf-report/2"

/** report(): webmcp-perf-report/2 for one session. */
export function buildReport(agent, opts = {}) {
  const c = agent.collector.current()
  let spans = c.stats.spans()
  let tools = c.stats.reportRows()
  if (opts.tool) {
    spans = spans.filter((s) => s.tool === opts.tool)
    tools = tools.filter((t) => t.tool === opts.tool)
  }
  if (opts.spans === false) spans = []
  else if (typeof opts.spans === "number" && opts.spans >= 0) spans = opts.spans ? spans.slice(-opts.spans) : []
  return {
    format: FORMAT,
    session: {
      id: c.sessionId,
      origin: agent.env.origin,
      userAgent: agent.env.userAgent,
      generatedAt: new Date().toISOString(),
      version: VERSION,
    },
    ledger: c.ledger(),
    tools,
    spans: spans.map((s) => pick(s, SPAN_FIELDS)),
  }
}

/** The split line as webmcp-profiler prints it: the summary line, without the schemas part while there are none. */
export function splitLine(stats) {
  const full = stats.summary()
  return stats.schemaBytes ? full : full.slice(full.indexOf(" · ") + 3)
}

/** One per-tool line of summary(), laid out as webmcp-profiler lays it out. */
function toolLine(r) {
  return (
    `  ${r.tool.padEnd(22)} ${String(r.calls).padStart(3)} calls · p50 ${fmtMs(r.p50Ms)} · p95 ${fmtMs(r.p95Ms)}` +
    ` · last ${fmtBytes(r.lastResultBytes)} (~${fmtCount(r.estTokens)} tok)${r.errors ? ` · \u2717${r.errors}` : ""}`
  )
}

/**
 * summary(): webmcp-profiler's layout. A session line (`wmcp-top · session ID · PHASE · N tools · N calls`), the
 * split, then one line per tool with spans. Sizes and times only.
 */
export function buildSummary(agent) {
  const c = agent.collector.current()
  const s = c.status()
  const lines = [`wmcp-top · session ${c.sessionId} · ${s.phase} · ${s.toolCount} tools · ${s.callCount} calls`, splitLine(c.stats)]
  for (const r of c.stats.reportRows()) lines.push(toolLine(r))
  return lines.join("\n")
}

/**
 * The get_perf_report tool's answer, in webmcp-profiler's shape: `content` (the summary text) and
 * `structuredContent {ok, format, session, status, totals, split, tools?, spans?, truncated?, meta}`.
 */
export function reportView(agent, input) {
  const args = input && typeof input === "object" ? input : {}
  const view = typeof args.view === "string" && Object.prototype.hasOwnProperty.call(REPORT_VIEWS, args.view) ? args.view : "summary"
  const only = typeof args.tool === "string" && args.tool ? args.tool : null
  const c = agent.collector.current()
  const summary = buildSummary(agent)
  const totals = c.stats.totalsObject()
  const sc = {
    ok: true,
    format: FORMAT,
    session: { id: c.sessionId, version: VERSION },
    status: c.status(),
    totals,
    split: splitLine(c.stats),
  }
  if (view !== "summary") sc.tools = c.stats.reportRows().filter((r) => !only || r.tool === only)
  if (view === "spans") {
    const limit = Number.isFinite(args.limit) ? Math.min(500, Math.max(1, Math.floor(args.limit))) : 50
    const since = Number.isFinite(args.since) ? args.since : null
    const spans = c.stats.spans().filter((s) => (!only || s.tool === only) && (since === null || s.seq > since))
    sc.truncated = spans.length > limit
    sc.spans = spans.slice(-limit).reverse().map((s) => pick(s, SPAN_FIELDS))
  }
  sc.meta = { view, resultBytes: 0, estTokens: 0 }
  const text = view === "summary" ? summary : `${summary}\n(the ${view} view is in structuredContent)`
  const out = { content: [{ type: "text", text }], structuredContent: sc, isError: false }
  const bytes = utf8Length(JSON.stringify(out))
  sc.meta.resultBytes = bytes
  sc.meta.estTokens = Math.ceil(bytes / 4)
  return out
}


function download(g, name, obj) {
  safely(() => {
    const doc = g.document
    const blob = new g.Blob([JSON.stringify(obj, null, 2)], { type: "application/json" })
    const url = g.URL.createObjectURL(blob)
    const a = doc.createElement("a")
    a.href = url
    a.download = name
    a.style.display = "none"
    doc.body.appendChild(a)
    a.click()
    a.remove()
    g.setTimeout(() => g.URL.revokeObjectURL(url), 1000)
  })
}

/** The facts of a span beyond the 20 fields (spanFacts()): those it has, after its seq. */
const EXTRA_FACTS = [...SPAN_FACTS, "waitedMs", "outcome"]
function factsOf(s) {
  const out = { seq: s.seq }
  for (const k of EXTRA_FACTS) if (s[k] !== undefined) out[k] = s[k]
  return out
}

/** help()'s text as webmcp-profiler lays it out: the name and the status sentence, its hints, then every member. */
export function helpText(s) {
  const lines = [`wmcp-top agent ${s.message.charAt(0).toLowerCase()}${s.message.slice(1)}`, ...s.hints.map((h) => `  \u2192 ${h}`), ""]
  for (const [k, v] of Object.entries(MEMBERS)) lines.push(`  ${k.padEnd(18)} ${v}`)
  return lines.join("\n")
}

/**
 * webmcp-profiler's `overlay` option and `overlay()` open an in-page panel. Here the panel is the terminal: one
 * console line says so (and how to start it), instead of a TypeError or silence.
 */
export function overlayNotice(cfg, g) {
  const name = cfg.globalName || "__webmcpPerf"
  safely(() => g.console.info(`[wmcp-top] no in-page overlay: the numbers are shown in the terminal (run \`wmcp-top\`); in this console: ${name}.summary()`))
}

/** Build the console API over an attached agent (see index.js). */
export function makeApi(agent) {
  const c = agent.collector
  const g = agent.g
  const api = {
    get active() {
      return c.active
    },
    get sessionId() {
      return c.sessionId
    },
    // Every read completes pending accounting first (c.current()): `await tool.execute(x)` then a read counts it.
    // webmcp-profiler's span exactly (its users compare keys); the rest of what is known is in spanFacts().
    spans: () => c.current().stats.spans().map((s) => ({ ...pick(s, SPAN_FIELDS), contentTypes: { ...s.contentTypes } })),
    spanFacts: () => c.current().stats.spans().map(factsOf),
    aggregates: () => c.current().stats.reportRows(),
    ledger: () => c.current().ledger(),
    onSpan(fn) {
      if (typeof fn !== "function") return () => {}
      c.spanListeners.add(fn)
      return () => c.spanListeners.delete(fn)
    },
    onSpanUpdate(fn) {
      if (typeof fn !== "function") return () => {}
      c.updateListeners.add(fn)
      return () => c.updateListeners.delete(fn)
    },
    status: () => c.current().status(),
    /** webmcp-profiler's help(): one console.info block (status, hints, members); resolves to undefined. */
    help() {
      const s = c.current().status()
      safely(() => g.console.info(helpText(s)))
      return Promise.resolve(undefined)
    },
    summary: () => buildSummary(agent),
    describe: () =>
      Promise.resolve(
        manifest(agent.config, {
          toolName: c.reportToolName,
          uplink: agent.uplink ? agent.uplink.info() : null,
          settings: {
            buffer: agent.config.buffer,
            sample: agent.config.sample,
            errorPolicy: agent.config.errorPolicy,
            pollMs: agent.config.pollMs,
            channel: agent.channel ? agent.channelName : false,
            capturePayloads: agent.config.capturePayloads,
            maxPayloadLength: agent.config.maxPayloadLength,
            fingerprintHandler: agent.config.fingerprintHandler,
            isErrorResult: typeof agent.config.isErrorResult === "function",
            isRefusal: typeof agent.config.isRefusal === "function" ? "page" : "built-in English",
            prompts: !!agent.prompts,
          },
        }),
      ),
    overlay: () => overlayNotice(agent.config, g),
    table() {
      // Numbers, as webmcp-profiler's table has them (its users sort and copy the columns): milliseconds to 0.1.
      const ms = (v) => (Number.isFinite(v) ? Math.round(v * 10) / 10 : null)
      const rows = c.current().stats.reportRows().map((r) => ({
        tool: r.tool,
        calls: r.calls,
        errors: r.errors,
        "p50 (ms)": ms(r.p50Ms),
        "p95 (ms)": ms(r.p95Ms),
        "max (ms)": ms(r.maxMs),
        "blocking (ms)": ms(r.blockingMs),
        bytes: r.totalBytes,
        tokens: r.estTokens,
        "schema bytes": r.schemaBytes,
      }))
      if (g.console && typeof g.console.table === "function") g.console.table(rows)
      return rows
    },
    report: (opts) => buildReport(agent, opts || {}),
    export(opts) {
      const r = buildReport(agent, opts || {})
      download(g, `webmcp-perf-${c.sessionId}.json`, r)
      return r
    },
    exportTrace() {
      const t = /** @type {any} */ (withGapMarks(traceEvents(c.current().stats.spans(), { sessionId: c.sessionId, origin: agent.env.origin, timeOrigin: safely(() => g.performance.timeOrigin, 0) || 0 })))
      t.metadata = { source: AGENT, sessionId: c.sessionId, origin: agent.env.origin }
      download(g, `webmcp-perf-${c.sessionId}.trace.json`, t)
      return t
    },
    instrument: (target) => (c.active ? instrument(agent.interceptor, target) : 0),
    synthetic(on = true) {
      c.synthetic = !!on
      return c.synthetic
    },
    reset() {
      c.reset()
    },
    detach: () => agent.detach(),
    registerReportTool: () => agent.report.register(),
    relay: () => (agent.uplink ? agent.uplink.info() : null),
    overhead: () => {
      const { accounted, ms } = c.current().cost
      return { accounted, ms, perSpanMs: accounted ? ms / accounted : 0 }
    },
    channel: () => (agent.channel ? { ...agent.channel.counters } : null),
    recordConsent(o) {
      if (!c.active || !o || typeof o !== "object" || typeof o.resolved !== "string" || !o.resolved) return false
      return safely(() => c.recordConsent(o.shown, o.resolved, o.granted === true), false)
    },
    prompts: () => (agent.prompts ? agent.prompts.view() : []),
  }
  return api
}
