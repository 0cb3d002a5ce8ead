// window.__webmcpPerf: the console API, the report document, and the get_perf_report tool's views.

import { fmtBytes, fmtCount, fmtMs, traceEvents } from "./stats.js"
import { VERSION } from "./config.js"
import { safely } from "./util.js"
import { PROFILER_FIELDS } from "./channel.js"

/** The 000 span fields, in order: report v2 spans carry exactly these (the objects are closed). */
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
  spans: "the raw span ring buffer, oldest first (copies)",
  aggregates: "per-tool rows: calls, errors, min/p50/p95/max, blocking, bytes, tokens, schema bytes",
  ledger: "the session ledger: host timeline, registered tools, running totals",
  onSpan: "subscribe to spans as they settle; returns an unsubscribe function",
  onSpanUpdate: "subscribe to late corrections (Long-Task blocking); returns an unsubscribe function",
  status: "phase, one sentence, next steps, coverage and its reasons",
  help: "print the status line and this member list to the console",
  summary: "a few lines of text: the split, then one line per tool",
  describe: "the machine-readable manifest of this API, its fields and configuration",
  table: "console.table of the per-tool rows, rounded for reading",
  report: "the webmcp-perf-report/2 document; {spans:false} omits spans, {spans:50} keeps the newest 50, {tool} filters",
  export: "download report() as a .json file",
  exportTrace: "download the spans as Chrome trace-event JSON (Perfetto, chrome://tracing)",
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

/** report(): webmcp-perf-report/2 for one session. */
export function buildReport(agent, opts = {}) {
  const c = agent.collector
  let spans = c.stats.spans()
  let tools = c.stats.aggregates()
  if (opts.tool) {
    spans = spans.filter((s) => s.tool === opts.tool)
    tools = tools.filter((t) => t.tool === opts.tool)
  }
  if (opts.spans === false) spans = []
  else if (typeof opts.spans === "number" && opts.spans >= 0) spans = opts.spans ? spans.slice(-opts.spans) : []
  return {
    format: "webmcp-perf-report/2",
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

/** summary(): the split line, then one line per tool. Sizes and times only. */
export function buildSummary(agent) {
  const c = agent.collector
  const lines = [c.stats.summary()]
  for (const r of c.stats.aggregates()) {
    lines.push(
      `  ${r.tool}: ${r.calls} call${r.calls === 1 ? "" : "s"}${r.errors ? `, ${r.errors} err` : ""}` +
        ` · p50 ${fmtMs(r.p50Ms)} · p95 ${fmtMs(r.p95Ms)} · ${fmtBytes(r.totalBytes)} (~${fmtCount(r.estTokens)} tok)` +
        ` · schema ${fmtBytes(r.schemaBytes)}`,
    )
  }
  return lines.join("\n")
}

/** The get_perf_report tool's answer for a view: summary | tools | spans. */
export function reportView(agent, input) {
  const view = input && typeof input.view === "string" ? input.view : "summary"
  const c = agent.collector
  const out = { view, summary: buildSummary(agent), status: c.status().phase }
  if (view === "summary") {
    out.tools = c.stats.aggregates().map((r) => ({ tool: r.tool, calls: r.calls, errors: r.errors, p50Ms: r.p50Ms, totalBytes: r.totalBytes, estTokens: r.estTokens }))
    return out
  }
  out.tools = c.stats.aggregates()
  out.ledger = c.ledger()
  if (view === "spans") {
    let spans = c.stats.spans()
    if (input && typeof input.tool === "string") spans = spans.filter((s) => s.tool === input.tool)
    if (input && typeof input.since === "number") spans = spans.filter((s) => s.seq > input.since)
    const limit = input && Number.isInteger(input.limit) && input.limit >= 0 ? input.limit : 50
    out.spans = (limit ? spans.slice(-limit) : []).map((s) => pick(s, SPAN_FIELDS))
  }
  return out
}

export const REPORT_TOOL = {
  name: "get_perf_report",
  title: "Performance report",
  description:
    "Read this page's WebMCP performance numbers (wmcp-top): tool time, payload bytes and tokens, host gaps. Views: summary (small), tools (per-tool aggregates), spans (newest calls).",
  inputSchema: {
    type: "object",
    properties: {
      view: { type: "string", enum: ["summary", "tools", "spans"], description: "how much to return" },
      limit: { type: "integer", minimum: 0, description: "spans view: newest N spans (default 50)" },
      tool: { type: "string", description: "spans view: only this tool" },
      since: { type: "integer", minimum: -1, description: "spans view: only spans with a higher seq" },
    },
  },
  annotations: { readOnlyHint: true },
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
    spans: () => c.stats.spans().map((s) => ({ ...s, contentTypes: { ...s.contentTypes } })),
    aggregates: () => c.stats.aggregates(),
    ledger: () => c.ledger(),
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
    status: () => c.status(),
    help() {
      const s = c.status()
      const con = g.console
      if (con) {
        con.log(`[wmcp-top] ${s.phase}: ${s.message}`)
        for (const h of s.hints) con.log(`  · ${h}`)
        for (const [k, v] of Object.entries(MEMBERS)) con.log(`  ${k}  ${v}`)
      }
      return s
    },
    summary: () => buildSummary(agent),
    describe: () => ({
      name: "wmcp-top page agent",
      version: VERSION,
      globalName: agent.config.globalName,
      members: { ...MEMBERS },
      spanFields: SPAN_FIELDS.slice(),
      spanFacts: SPAN_FACTS.slice(),
      config: {
        buffer: agent.config.buffer,
        sample: agent.config.sample,
        errorPolicy: agent.config.errorPolicy,
        pollMs: agent.config.pollMs,
        channel: agent.channelName,
        capturePayloads: agent.config.capturePayloads,
        maxPayloadLength: agent.config.maxPayloadLength,
        fingerprintHandler: agent.config.fingerprintHandler,
        isErrorResult: typeof agent.config.isErrorResult === "function",
        isRefusal: typeof agent.config.isRefusal === "function" ? "page" : "built-in English",
        prompts: !!agent.prompts,
      },
      relay: agent.uplink ? agent.uplink.info() : null,
    }),
    table() {
      const rows = c.stats.aggregates().map((r) => ({
        tool: r.tool,
        calls: r.calls,
        errors: r.errors,
        p50: fmtMs(r.p50Ms),
        p95: fmtMs(r.p95Ms),
        max: fmtMs(r.maxMs),
        blocking: fmtMs(r.blockingMs),
        bytes: fmtBytes(r.totalBytes),
        tokens: fmtCount(r.estTokens),
        schema: fmtBytes(r.schemaBytes),
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
      const t = traceEvents(c.stats.spans(), { sessionId: c.sessionId, origin: agent.env.origin, timeOrigin: safely(() => g.performance.timeOrigin, 0) || 0 })
      download(g, `webmcp-perf-${c.sessionId}.trace.json`, t)
      return t
    },
    instrument: (target) => (c.active ? agent.interceptor.instrument(target) : 0),
    synthetic(on = true) {
      c.synthetic = !!on
      return c.synthetic
    },
    reset() {
      c.reset()
    },
    detach: () => agent.detach(),
    registerReportTool: () => agent.registerReportTool(),
    relay: () => (agent.uplink ? agent.uplink.info() : null),
    overhead: () => ({ accounted: c.cost.accounted, ms: c.cost.ms, perSpanMs: c.cost.accounted ? c.cost.ms / c.cost.accounted : 0 }),
    channel: () => (agent.channel ? { ...agent.channel.counters } : null),
    recordConsent(o) {
      if (!c.active || !o || typeof o !== "object" || typeof o.resolved !== "string" || !o.resolved) return false
      return safely(() => c.recordConsent(o.shown, o.resolved, o.granted === true), false)
    },
    prompts: () => (agent.prompts ? agent.prompts.view() : []),
  }
  return api
}
