// wmcp-top page agent 0.1.0, the `open` lane's: built by page_agent/build.mjs from page_agent/src/page/open_main.js. Do not edit.
(function () {
"use strict";
const __m = {};
// ---- page/stats.js ----
__m["page/stats"] = (function () {
// PURE statistics: spans in, numbers out. No clocks, no DOM, no I/O.
//
// One definition with relay_bridge/core/stats.py and relay_bridge/core/units.py; tests/vectors/ holds both to the
// digit. Rounding to one decimal is Math.floor(x * 10 + 0.5) / 10, never toFixed (which rounds binary
// halves differently from Python and from itself).

/** ceil(bytes / 4): input and text tokens. */
const tokensForBytes = (n) => Math.ceil(n / 4)
/** Images are paid at decoded size: base64 length x 0.75. */
const imageTokens = (imageBytes) => Math.ceil((imageBytes * 0.75) / 4)

/**
 * Token estimates for one call.
 * @returns {{estInputTokens:number, estTextTokens:number, estImageTokens:number, estTokens:number}}
 */
function callTokens(inputBytes, resultBytes, imageBytes) {
  const estInputTokens = tokensForBytes(inputBytes)
  const estTextTokens = tokensForBytes(Math.max(0, resultBytes - imageBytes))
  const estImageTokens = imageTokens(imageBytes)
  return { estInputTokens, estTextTokens, estImageTokens, estTokens: estInputTokens + estTextTokens + estImageTokens }
}

/**
 * webmcp-profiler's quantile over ascending values: sorted[min(n-1, floor(p*n))] for p in 0..1; null when
 * empty. Same in relay_bridge/core/stats.py, so p50/p95 of the same spans agree with 000's everywhere.
 */
function quantile(sorted, p) {
  if (!sorted.length) return null
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]
}

// ---- formatting (arithmetic-identical to relay_bridge/core/units.py) -------------------------------------------

const round1 = (x) => Math.floor(x * 10 + 0.5) / 10
const round0 = (x) => Math.floor(x + 0.5)
const one = (x) => {
  // Python's f"{x:.1f}" of a value already rounded to one decimal: exact for these magnitudes.
  const s = String(x)
  return s.includes(".") ? s : s + ".0"
}

function scaled(value, units, base) {
  let i = 0
  let v = value / base
  for (;;) {
    const small = round1(v)
    if (small < 10) return one(small) + units[i]
    const whole = round0(v)
    if (whole < 1000 || i === units.length - 1) return whole + units[i]
    i++
    v = v / base
  }
}

/** 1000-based bytes: 512B, 9.8KB, 310KB, 1.2MB. */
function fmtBytes(n) {
  if (n < 1000) return round0(n) + "B"
  return scaled(n, ["KB", "MB", "GB"], 1000)
}

/** Counts: 950, 2.5K, 78K, 1.2M. */
function fmtCount(n) {
  if (n < 1000) return String(round0(n))
  return scaled(n, ["K", "M", "B"], 1000)
}

/**
 * Three significant digits (as relay_bridge/core/units.py): 8.5ms, 127ms, 1.27s, 12.7s, 127s, then minutes. Each step
 * counts whole units of its last digit, so a value rounding up into the next step is written there.
 */
function fmtDuration(ms) {
  const tenths = round0(ms * 10)
  if (tenths < 100) return Math.floor(tenths / 10) + "." + (tenths % 10) + "ms"
  const whole = round0(ms)
  if (whole < 1000) return whole + "ms"
  const centis = round0(ms / 10)
  if (centis < 1000) return Math.floor(centis / 100) + "." + String(centis % 100).padStart(2, "0") + "s"
  const decis = round0(ms / 100)
  if (decis < 1000) return Math.floor(decis / 10) + "." + (decis % 10) + "s"
  const secs = round0(ms / 1000)
  if (secs < 600) return secs + "s"
  return Math.floor(secs / 60) + "m" + String(secs % 60).padStart(2, "0") + "s"
}

/** A table cell: wall or blocking time of one call (the one duration format; a dash when there is none). */
function fmtMs(ms) {
  if (ms === null || ms === undefined) return "\u2013"
  return fmtDuration(ms)
}

/** `schemas 9.8KB (~2.5K tok) \u00b7 tools 0.3s \u00b7 payloads 310KB (~78K tok) \u00b7 host gaps 39s` */
function summaryLine(schemaBytes, wallMs, resultBytes, estTokens, hostGapMs, schemaTokens = Math.ceil(schemaBytes / 4)) {
  return (
    `schemas ${fmtBytes(schemaBytes)} (~${fmtCount(schemaTokens)} tok)` +
    ` \u00b7 tools ${fmtDuration(wallMs)}` +
    ` \u00b7 payloads ${fmtBytes(resultBytes)} (~${fmtCount(estTokens)} tok)` +
    ` \u00b7 host gaps ${fmtDuration(hostGapMs)}`
  )
}

// ---- per-session numbers -------------------------------------------------------------------------------

const newTotals = () => ({
  calls: 0,
  unsampledCalls: 0,
  overlappingCalls: 0,
  errors: 0,
  wallMs: 0,
  blockingMs: 0,
  resultBytes: 0,
  estTokens: 0,
  estInputTokens: 0,
  hostGapMs: 0,
})

const newRow = () => ({
  calls: 0,
  errors: 0,
  refused: 0,
  blockingMs: 0,
  totalBytes: 0,
  estTokens: 0,
  estInputTokens: 0,
  lastResultBytes: 0,
  schemaBytes: 0,
  registered: false,
  internal: false,
})

/**
 * The numbers of one session: a ring buffer of spans (for percentiles and export), running per-tool rows
 * and totals since attach or reset. Mirrors relay_bridge.core.stats.SessionStats.
 */
class SessionStats {
  /**
   * @param {number} [buffer]
   * @param {(bytes:number) => number} [schemaTokens]  schema bytes to tokens (a page's tokenEstimator); ceil(/4)
   */
  constructor(buffer = 500, schemaTokens = tokensForBytes) {
    this.buffer = Math.max(1, buffer | 0)
    this.schemaTokens = schemaTokens
    /** @type {Map<number, object>} seq -> span, oldest first */
    this.ring = new Map()
    /** @type {Map<string, ReturnType<typeof newRow>>} */
    this.tools = new Map()
    this.totals = newTotals()
    this.measured = 0
    this.firstSeq = null
  }

  /**
   * Account one new span. `span.overlapped` says whether the call began before the previous one settled;
   * when absent it is inferred (a null gap on any span but the first).
   * @returns {object|null} the span evicted from the ring, if any
   */
  add(span) {
    // A call started from the terminal (`invokedBy: "terminal"`) is not part of the agent's run: it is kept
    // for the timeline and export, but counts in no total, row or percentile.
    if (span.invokedBy === "terminal") return this.keep(span)
    const row = this.row(span.tool)
    row.calls += 1
    row.blockingMs += span.blockingMs
    row.totalBytes += span.resultBytes
    row.estTokens += span.estTokens
    row.estInputTokens += span.estInputTokens
    row.lastResultBytes = span.resultBytes
    const t = this.totals
    this.measured += 1
    t.calls = this.measured + t.unsampledCalls
    // A form call the browser refused before the page ran: a call and an error, but no page time.
    // `totals.refused` appears with the first one, as in relay_bridge/core/stats.py.
    if (span.outcome === "refused") {
      row.refused += 1
      t.refused = (t.refused || 0) + 1
    } else t.wallMs += span.wallMs
    t.blockingMs += span.blockingMs
    t.resultBytes += span.resultBytes
    t.estTokens += span.estTokens
    t.estInputTokens += span.estInputTokens
    if (span.isError) {
      row.errors += 1
      t.errors += 1
    }
    if (span.gapSincePrevCallMs !== null && span.gapSincePrevCallMs !== undefined) t.hostGapMs += span.gapSincePrevCallMs
    if (this.firstSeq === null || span.seq < this.firstSeq) this.firstSeq = span.seq
    const ov = span.overlapped !== undefined && span.overlapped !== null ? span.overlapped : span.gapSincePrevCallMs === null && span.seq !== this.firstSeq
    if (ov) t.overlappingCalls += 1
    return this.keep(span)
  }

  /** Hold `span` in the ring; returns the span evicted, if any. */
  keep(span) {
    this.ring.set(span.seq, span)
    if (this.ring.size > this.buffer) {
      const [seq, old] = this.ring.entries().next().value
      this.ring.delete(seq)
      return old
    }
    return null
  }

  /** Late Long-Task correction; returns false when the span is no longer held. */
  updateBlocking(seq, blockingMs) {
    const span = this.ring.get(seq)
    if (!span) return false
    const delta = blockingMs - span.blockingMs
    span.blockingMs = blockingMs
    if (span.invokedBy === "terminal") return true
    this.totals.blockingMs += delta
    const row = this.tools.get(span.tool)
    if (row) row.blockingMs += delta
    return true
  }

  setUnsampled(n) {
    this.totals.unsampledCalls = n
    this.totals.calls = this.measured + n
  }

  register(name, schemaBytes, internal = false) {
    const row = this.row(name)
    row.schemaBytes = schemaBytes
    row.registered = true
    row.internal = !!internal
  }

  unregister(name) {
    const row = this.tools.get(name)
    if (!row) return
    row.registered = false
    row.schemaBytes = 0
    if (row.calls === 0) this.tools.delete(name)
  }

  /** Clear spans and totals; keep the tool registry (schema bytes stay). */
  reset() {
    this.ring.clear()
    this.totals = newTotals()
    this.measured = 0
    this.firstSeq = null
    const kept = new Map()
    for (const [name, row] of this.tools) {
      if (row.registered) kept.set(name, { ...newRow(), schemaBytes: row.schemaBytes, registered: true, internal: row.internal })
    }
    this.tools = kept
  }

  row(name) {
    let row = this.tools.get(name)
    if (!row) this.tools.set(name, (row = newRow()))
    return row
  }

  get schemaBytes() {
    let n = 0
    for (const row of this.tools.values()) if (row.registered) n += row.schemaBytes
    return n
  }

  spans() {
    return Array.from(this.ring.values())
  }

  /** Rows of report v2's tools[], sorted by tool name (code-unit order, as Python sorts str). */
  aggregates() {
    const walls = new Map()
    for (const span of this.ring.values()) {
      if (span.invokedBy === "terminal" || span.outcome === "refused") continue
      let list = walls.get(span.tool)
      if (!list) walls.set(span.tool, (list = []))
      list.push(span.wallMs)
    }
    const names = Array.from(this.tools.keys()).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
    return names.map((name) => {
      const row = this.tools.get(name)
      const values = (walls.get(name) || []).slice().sort((a, b) => a - b)
      return {
        tool: name,
        calls: row.calls,
        errors: row.errors,
        minMs: values.length ? values[0] : null,
        p50Ms: quantile(values, 0.5),
        p95Ms: quantile(values, 0.95),
        maxMs: values.length ? values[values.length - 1] : null,
        blockingMs: row.blockingMs,
        lastResultBytes: row.lastResultBytes,
        totalBytes: row.totalBytes,
        estTokens: row.estTokens,
        estInputTokens: row.estInputTokens,
        schemaBytes: row.schemaBytes,
        ...(row.refused ? { refused: row.refused } : {}),
      }
    })
  }

  /**
   * report v2's tools[] (and 000's aggregates()): one row per tool with spans in the ring, the internal
   * report tool excluded, so min/p50/p95/max are always numbers.
   */
  reportRows() {
    return this.aggregates().filter((r) => r.minMs !== null && !this.tools.get(r.tool).internal)
  }

  totalsObject() {
    const t = this.totals
    const schema = this.schemaBytes
    return { ...t, schemaBytes: schema, estSchemaTokens: this.schemaTokens(schema) }
  }

  summary() {
    const t = this.totals
    const schema = this.schemaBytes
    return summaryLine(schema, t.wallMs, t.resultBytes, t.estTokens, t.hostGapMs, this.schemaTokens(schema))
  }
}

// ---- Chrome trace-event JSON ---------------------------------------------------------------------------

/** seq -> lane (1-based): each span takes the lowest lane free when it starts (by invokedAt, then seq). */
function assignLanes(spans) {
  const lanes = []
  const out = new Map()
  const sorted = spans.slice().sort((a, b) => a.invokedAt - b.invokedAt || a.seq - b.seq)
  for (const span of sorted) {
    let i = lanes.findIndex((busyUntil) => busyUntil <= span.invokedAt)
    if (i < 0) {
      lanes.push(span.settledAt)
      i = lanes.length - 1
    } else lanes[i] = span.settledAt
    out.set(span.seq, i + 1)
  }
  return out
}

/**
 * The "X" events of one session: calls on lanes >= 1 (overlapping calls on separate lanes, so none is
 * dropped), host gaps on lane 0. Timestamps are epoch microseconds ((timeOrigin + invokedAt) * 1000), so
 * sessions line up. Sorted by (tid, ts, seq). Same as relay_bridge/exports/trace.py.
 */
function spanEvents(spans, timeOrigin, pid = 1) {
  const lanes = assignLanes(spans)
  const events = []
  for (const span of spans) {
    events.push({
      name: span.tool,
      cat: span.isError ? "error" : "call",
      ph: "X",
      ts: (timeOrigin + span.invokedAt) * 1000,
      dur: span.wallMs * 1000,
      pid,
      tid: lanes.get(span.seq),
      args: { seq: span.seq, resultBytes: span.resultBytes, estTokens: span.estTokens, blockingMs: span.blockingMs, synthetic: span.synthetic },
    })
    const gap = span.gapSincePrevCallMs
    if (gap !== null && gap !== undefined && gap > 0) {
      events.push({ name: "host gap", cat: "gap", ph: "X", ts: (timeOrigin + span.invokedAt - gap) * 1000, dur: gap * 1000, pid, tid: 0, args: { beforeSeq: span.seq } })
    }
  }
  const seqOf = (e) => (e.args.seq !== undefined ? e.args.seq : -1)
  events.sort((a, b) => a.tid - b.tid || a.ts - b.ts || seqOf(a) - seqOf(b))
  return events
}

/** A whole trace document for one session: metadata naming the process and lanes, then the events. */
function traceEvents(spans, session) {
  const pid = session.pid || 1
  const body = spanEvents(spans, session.timeOrigin || 0, pid)
  const lanes = Math.max(1, ...body.map((e) => e.tid))
  /** @type {Array<object>} */
  const meta = [
    { name: "process_name", ph: "M", pid, tid: 0, args: { name: `${session.origin || "page"} ${session.sessionId}` } },
    { name: "thread_name", ph: "M", pid, tid: 0, args: { name: "host + model wait" } },
  ]
  for (let lane = 1; lane <= lanes; lane++) meta.push({ name: "thread_name", ph: "M", pid, tid: lane, args: { name: `calls (lane ${lane})` } })
  return { traceEvents: meta.concat(body), displayTimeUnit: "ms", otherData: { producer: "wmcp-top" } }
}
return { tokensForBytes, imageTokens, callTokens, quantile, round1, round0, fmtBytes, fmtCount, fmtDuration, fmtMs, summaryLine, SessionStats, assignLanes, spanEvents, traceEvents };
})();

// ---- shared/util.js ----
__m["shared/util"] = (function () {
// Small helpers shared by every module. No page state here.

// Any UTF-16 unit above ASCII, written as the range up from \x80 and not as [^\x00-\x7f]: Chromium's V8 answers
// this one about 35 times faster over a string of one-byte characters (128 KB of ASCII in Chromium 156: 5.5
// against 190 \u00b5s), and far faster than the encoder below (100 to 140 \u00b5s), so in a page ASCII text, most results,
// never reaches the encoder. Node is the other way round: its encoder (simdutf) sizes those 128 KB in 18 \u00b5s and
// its older V8 takes 100 to 150 \u00b5s over the regex, so there a long string goes to the encoder first. Node runs
// the agent only in its tests; both orders give the same count (test/bytes.test.mjs, tests/bench/test_text_sizing.py).
const ABOVE_ASCII = /[\x80-\uffff]/
const ENCODER_FIRST = typeof process === "object" && process !== null && typeof process.versions === "object" && process.versions !== null && typeof process.versions.node === "string"

// Long strings that are not all ASCII go through the engine's own encoder, into one scratch buffer: far cheaper
// than the loop below. The encoder counts a lone surrogate as U+FFFD, 3 bytes, as the loop does. The buffer
// grows to fit a string's worst case (3 bytes a UTF-16 unit), up to SCRATCH_MAX: in Chromium each encodeInto
// call converts the whole string it is given, so 64 KiB rounds over 128 K characters of CJK cost 1.46 ms
// against 0.80 ms in one call (tests/bench/test_text_sizing.py).
const ENCODE_FROM = 4096
const SCRATCH_MIN = 64 * 1024
const SCRATCH_MAX = 1024 * 1024 // kept for the page's lifetime: longer strings are counted a megabyte at a time
let encoder = null
let scratch = null

/**
 * UTF-8 byte length of a JavaScript string, without allocating (beyond one scratch buffer kept for long
 * strings). A lone surrogate counts 3 bytes, as TextEncoder (U+FFFD) and Python's "surrogatepass" both do.
 * @param {string} s
 */
function utf8Length(s) {
  if (s.length >= ENCODE_FROM) {
    if (!ENCODER_FIRST && !ABOVE_ASCII.test(s)) return s.length
    const n = encodedLength(s)
    if (n !== null) return n
  }
  // ASCII text (most JSON) is one byte a unit.
  if (!ABOVE_ASCII.test(s)) return s.length
  let n = 0
  const len = s.length
  for (let i = 0; i < len; i++) {
    const c = s.charCodeAt(i)
    if (c < 0x80) n += 1
    else if (c < 0x800) n += 2
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < len) {
      const d = s.charCodeAt(i + 1)
      if (d >= 0xdc00 && d <= 0xdfff) {
        n += 4
        i++
      } else n += 3
    } else n += 3
  }
  return n
}

/** utf8Length through TextEncoder.encodeInto, or null where there is none. */
function encodedLength(s) {
  if (encoder === null) {
    const TE = globalThis.TextEncoder
    if (typeof TE !== "function") return null
    try {
      encoder = new TE()
    } catch {
      return null
    }
  }
  try {
    const need = Math.min(SCRATCH_MAX, s.length * 3)
    if (scratch === null || scratch.length < need) {
      let size = SCRATCH_MIN
      while (size < need) size *= 2
      scratch = new Uint8Array(size)
    }
    return encodeRounds(s)
  } catch {
    return null // a page that broke its own TextEncoder: the scan below still counts
  }
}

function encodeRounds(s) {
  let n = 0
  let rest = s
  // Each round fills at most the buffer and stops before a character that would not fit whole (a surrogate
  // pair is never split), so the next round starts on a character boundary.
  for (;;) {
    const { read, written } = encoder.encodeInto(rest, scratch)
    n += written
    if (read >= rest.length) return n
    if (read === 0) return null
    rest = rest.slice(read)
  }
}

/** A new 8-lowercase-hex session id. */
function newSessionId() {
  const c = globalThis.crypto
  if (c && typeof c.getRandomValues === "function") {
    const a = new Uint8Array(4)
    c.getRandomValues(a)
    return Array.from(a, (b) => b.toString(16).padStart(2, "0")).join("")
  }
  return Math.floor(Math.random() * 0x100000000).toString(16).padStart(8, "0")
}

// The page's clock, captured once: reading the global `performance` on every call goes through Window's accessor.
const PERF = typeof performance !== "undefined" && performance !== null && typeof performance.now === "function" ? performance : null
const now = PERF !== null ? () => PERF.now() : () => Date.now()

/** Cap a page-provided text to `max` code points (as the relay and Python count), never splitting a pair. */
function cap(s, max) {
  s = String(s)
  if (s.length <= max) return s
  let out = ""
  let n = 0
  for (const ch of s) {
    if (n >= max) break
    out += ch
    n++
  }
  return out
}

/** Run `fn`, never letting an exception escape into the page. */
function safely(fn, fallback) {
  try {
    return fn()
  } catch {
    return fallback
  }
}

/**
 * An event listener attached only while it is wanted (`want(true)`), removed by `want(false)`. Chromium 156
 * dispatches `toolactivated` for every tool call, and any listener on it costs the page each call (the README's
 * "What watching costs the page"): the agent listens only while there is something for the listener to count.
 * @returns {{want: (yes: boolean) => void, listening: () => boolean}}
 */
function listenWhile(target, type, fn, capture = false) {
  let on = false
  return {
    want(yes) {
      yes = !!yes
      if (yes === on || !target || typeof target.addEventListener !== "function") return
      try {
        if (yes) target.addEventListener(type, fn, capture)
        else target.removeEventListener(type, fn, capture)
        on = yes
      } catch {
        /* a page that broke its own EventTarget: nothing to count */
      }
    },
    listening: () => on,
  }
}

/** Is this a scalar the wire accepts in `detail` / annotations? */
function isScalar(v) {
  return v === null || typeof v === "boolean" || (typeof v === "number" && Number.isFinite(v)) || typeof v === "string"
}

/**
 * Schedule `fn` as a macrotask, off the caller's await chain: a MessageChannel where there is one
 * (not throttled in hidden tabs), else setTimeout. Returns nothing; errors are swallowed.
 */
function makeTaskScheduler(g = globalThis) {
  if (typeof g.MessageChannel === "function") {
    const ch = new g.MessageChannel()
    let queue = []
    ch.port1.onmessage = () => {
      const q = queue
      queue = []
      for (const f of q) safely(f)
    }
    // Node's ports keep the process alive; browsers have no unref.
    const port = /** @type {MessagePort & {unref?: () => void}} */ (ch.port1)
    if (typeof port.unref === "function") port.unref()
    const post = () => ch.port2.postMessage(0)
    const schedule = (fn) => {
      queue.push(fn)
      if (queue.length === 1) post()
    }
    schedule.close = () => {
      safely(() => ch.port1.close())
      safely(() => ch.port2.close())
    }
    return schedule
  }
  const schedule = (fn) => setTimeout(() => safely(fn), 0)
  schedule.close = () => {}
  return schedule
}
return { utf8Length, newSessionId, now, cap, safely, listenWhile, isScalar, makeTaskScheduler };
})();

// ---- page/mcp_result.js ----
__m["page/mcp_result"] = (function () {
// What an MCP client receives for tools/call from @mcp-b/global's server: the CallToolResult that
// BrowserMcpServer (@mcp-b/webmcp-ts-sdk 5.1.0) hands @modelcontextprotocol/server 2.0.0, which the transport
// delivers as the JSON-RPC `result`. Read in those packages' dist/:
//   returned value with a `content` array     -> itself (normalizeToolResponse passes it through)
//   any other value v                          -> {content:[{type:"text", text}], structuredContent?, isError:false}
//       text: v when a string, else JSON.stringify(v) ?? String(v) (String(v) when that throws);
//       structuredContent: v when it is plain JSON (finite numbers, plain objects, no cycle)
//   a throw e (McpServer.createToolError)     -> {content:[{type:"text", text: e.message (an Error) or String(e)}], isError:true}
// Pure: builds the envelope to be measured and dropped (measure.js); nothing here keeps a body.

const isPlain = (v) => v !== null && typeof v === "object" && !Array.isArray(v)

function isJsonValue(v, seen) {
  if (v === null || typeof v === "string" || typeof v === "boolean") return true
  if (typeof v === "number") return Number.isFinite(v)
  if (typeof v !== "object" || seen.has(v)) return false
  seen.add(v)
  try {
    let items = null
    if (Array.isArray(v)) items = v
    else {
      const proto = Object.getPrototypeOf(v)
      if (proto === Object.prototype || proto === null) items = Object.values(v)
    }
    return items !== null && items.every((x) => isJsonValue(x, seen))
  } catch {
    return false
  } finally {
    seen.delete(v)
  }
}

function textOf(v) {
  if (typeof v === "string") return v
  try {
    return JSON.stringify(v) ?? String(v)
  } catch {
    return String(v)
  }
}

/** The CallToolResult an MCP client receives for a tool that returned `value`. */
function mcpResult(value) {
  if (isPlain(value) && Array.isArray(value.content)) return value
  const out = { content: [{ type: "text", text: textOf(value) }] }
  if (isJsonValue(value, new WeakSet())) out.structuredContent = value
  out.isError = false
  return out
}

/** The CallToolResult an MCP client receives for a tool that threw `err`. */
function mcpErrorResult(err) {
  let text
  try {
    text = err instanceof Error ? err.message : String(err)
  } catch {
    text = ""
  }
  return { content: [{ type: "text", text }], isError: true }
}
return { mcpResult, mcpErrorResult };
})();

// ---- page/measure.js ----
__m["page/measure"] = (function () {
// Sizes, token estimates and result facts of one call: what the agent receives, serialised the way
// Chromium's host does it (measured on Chromium 156, see page_agent/README.md):
//   string            -> itself; "" becomes "Operation succeeded" (substituted)
//   undefined         -> "undefined" (also a function: JSON.stringify gives nothing)
//   number/boolean/null/bigint -> String(value)   (NaN reads "NaN", not JSON's "null")
//   object/array      -> JSON.stringify(value); an MCP {content:[...]} envelope is NOT unwrapped
//   throws while serialising (cycle, nested bigint) -> the host reports UnknownError: an error
// Values are measured and dropped here: nothing in this module keeps a body.

const { utf8Length, cap, safely } = __m["shared/util"];
const { mcpResult, mcpErrorResult } = __m["page/mcp_result"];
const { callTokens } = __m["page/stats"];
const EMPTY_SUBSTITUTE = "Operation succeeded"
const UNDEFINED_TEXT = "undefined"
const SUBSTITUTE_BYTES = utf8Length(EMPTY_SUBSTITUTE)
const UNDEFINED_BYTES = utf8Length(UNDEFINED_TEXT)

/** UTF-8 bytes of the input's JSON text (what the model wrote); 0 when it has none. */
function inputBytesOf(input) {
  if (input === undefined) return 0
  try {
    const text = typeof input === "string" ? input : JSON.stringify(input)
    return typeof text === "string" ? utf8Length(text) : 0
  } catch {
    return 0
  }
}

const isEnvelope = (v) => v !== null && typeof v === "object" && !Array.isArray(v) && Array.isArray(v.content)

/** MCP's content types (CallToolResult.content[].type); any other page string is counted as "other". */
const CONTENT_TYPES = ["text", "image", "audio", "resource", "resource_link"]

/** @returns {[Record<string, number>, number]} the content types' counts, and the images' base64 length */
function contentFacts(envelope) {
  /** @type {Record<string, number>} */
  const types = {}
  let image = 0
  for (const item of envelope.content) {
    if (!item || typeof item !== "object") continue
    const kind = item.type
    if (typeof kind !== "string") continue
    // Keys are ours, never page text: a page's own `type` strings would otherwise travel to the terminal.
    const key = CONTENT_TYPES.includes(kind) ? kind : "other"
    types[key] = (types[key] || 0) + 1
    if (kind === "image" && typeof item.data === "string") image += item.data.length
  }
  return [types, image]
}

/**
 * How a host turns a result into text. "chromium" (the default, measured above) or "mcp-b" for
 * @mcp-b/webmcp-polyfill 5.x, which writes JSON.stringify(value) when that gives text and String(value)
 * otherwise (so a cycle reads "[object Object]" instead of failing), "" becoming "Operation succeeded".
 */
const PROFILES = ["chromium", "mcp-b", "form", "mcp-b-form", "mcp"]

/**
 * A declarative (form) tool's answer: what the page passed to SubmitEvent.respondWith. Chromium 156 delivers it
 * as for an imperative tool except that "" stays "" (no substitute text). An array of strings is the page's
 * validation messages: an error, counted in `validation`.
 */
function formFacts(value) {
  if (value === "") return facts(0, "string", false, false, { text: 1 })
  return validationOf(value, resultFacts(value, "chromium"))
}

function validationOf(value, f) {
  if (Array.isArray(value) && value.length && value.every((m) => typeof m === "string")) {
    f.isError = true
    f.validation = value.length
  }
  return f
}

/**
 * Facts about what the agent reads for a tool that returned `value`.
 * @returns {{resultBytes:number, resultType:string, envelope:boolean, substituted:boolean,
 *   contentTypes:Object<string,number>, imageBytes:number, serializable:boolean, isError:boolean, validation?:number}}
 */
function resultFacts(value, profile = "chromium") {
  const t = typeof value
  if (profile === "form") return formFacts(value)
  if (profile === "mcp-b-form") return validationOf(value, resultFacts(value, "mcp-b"))
  // An MCP client's tools/call through @mcp-b/global's server: the CallToolResult it received (mcp_result.js).
  if (profile === "mcp") return mcpbFacts(safely(() => mcpResult(value), value))
  if (profile === "mcp-b" && value !== null && (t === "object" || t === "function")) return mcpbFacts(value)
  if (t === "string") {
    if (value === "") return facts(SUBSTITUTE_BYTES, "string", false, true, { text: 1 })
    let envelope = false
    /** @type {Record<string, number>} */
    let types = { text: 1 }
    let image = 0
    let isError = false
    if (value.charCodeAt(0) === 123 /* { */ && value.includes('"content"')) {
      let inner = null
      try {
        inner = JSON.parse(value)
      } catch {
        inner = null
      }
      if (isEnvelope(inner)) {
        envelope = true
        ;[types, image] = contentFacts(inner)
        isError = inner.isError === true
      }
    }
    return facts(utf8Length(value), "string", envelope, false, types, image, true, isError)
  }
  if (value === undefined || t === "function" || t === "symbol") {
    return facts(UNDEFINED_BYTES, "undefined", false, true, {})
  }
  if (value === null) return facts(4, "null", false, false, {})
  if (t === "number" || t === "bigint") return facts(utf8Length(String(value)), "number", false, false, {})
  if (t === "boolean") return facts(value ? 4 : 5, "boolean", false, false, {})
  let bytes
  let envelope = false
  try {
    envelope = isEnvelope(value) // a hostile getter throws here as it would in JSON.stringify
    bytes = envelope ? envelopeBytes(value) : jsonBytesOf(JSON.stringify(value))
  } catch {
    return facts(0, "unserializable", false, false, {}, 0, false, true)
  }
  if (bytes === undefined) return facts(UNDEFINED_BYTES, "undefined", false, true, {})
  const [types, image] = envelope ? contentFacts(value) : [{}, 0]
  return facts(bytes, Array.isArray(value) ? "array" : "object", envelope, false, types, image, true, envelope && value.isError === true)
}

const jsonBytesOf = (text) => (typeof text === "string" ? utf8Length(text) : undefined)

// An MCP envelope's long texts are sized where they are instead of copied into one JSON text: JSON.stringify of
// a 128 KB result builds a 128 KB string the engine must then flatten and collect, on every call (about half of
// what accounting a 128 KB call cost). The envelope is stringified with each long string as "", and each long
// string adds its own JSON length: UTF-8 bytes, quotes, and what JSON.stringify escapes. test/bytes.test.mjs
// holds this to utf8Length(JSON.stringify(value)) over every escape class.
const LONG_STRING = 4096
// What JSON.stringify escapes: the seven characters with a short escape (\" \\ \b \f \n \r \t, one byte more
// each) are counted with indexOf, a native search far quicker than a regex over long text (node 20: a 94 KB
// JSON text holding 24,000 quotes 0.98 \u2192 0.33 ms, about node's copy; in Chromium 156 0.30 against the copy's
// 0.87 ms; one regex match over the text was slower than copying it: tests/bench/test_text_sizing.py). The other controls, rare in text,
// cost one regex test and are counted only when present (\u00XX, five bytes more each).
const SHORT_ESCAPED = ['"', "\\", "\b", "\f", "\n", "\r", "\t"]
const OTHER_CONTROL = /[\u0000-\u0007\u000b\u000e-\u001f]/
const OTHER_CONTROLS = /[\u0000-\u0007\u000b\u000e-\u001f]/g
const indexOf = String.prototype.indexOf // captured: a page that patches it later does not change a count
const SURROGATE = /[\ud800-\udfff]/
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g

function envelopeBytes(value) {
  // Short texts only (most results): JSON.stringify's own fast path. A replacer function sends the engine down
  // its slow path, which for a 1 KB result cost more than the copy it saves (about 9 \u00b5s a call, profiled).
  if (!hasLongText(value.content)) return jsonBytesOf(JSON.stringify(value))
  /** @type {string[]|null} */
  let longs = null
  const text = JSON.stringify(value, (key, v) => {
    if (typeof v !== "string" || v.length < LONG_STRING) return v
    ;(longs ||= []).push(v)
    return ""
  })
  let n = jsonBytesOf(text)
  if (n === undefined || longs === null) return n
  for (const s of longs) n += jsonStringBytes(s) - 2 // its "" is already counted
  return n
}

/** Does an envelope's content hold a text or data string long enough to be sized where it is? A long string
 * elsewhere in the envelope is still counted right, by the copy. */
function hasLongText(content) {
  for (let i = 0; i < content.length; i++) {
    const item = content[i]
    if (item === null || typeof item !== "object") continue
    const { text, data } = item
    if ((typeof text === "string" && text.length >= LONG_STRING) || (typeof data === "string" && data.length >= LONG_STRING)) return true
  }
  return false
}

/** UTF-8 bytes of JSON.stringify(s) for a string, without building it. */
function jsonStringBytes(s) {
  let n = utf8Length(s) + 2
  for (const c of SHORT_ESCAPED) for (let i = indexOf.call(s, c); i !== -1; i = indexOf.call(s, c, i + 1)) n++
  if (OTHER_CONTROL.test(s)) n += 5 * s.match(OTHER_CONTROLS).length
  if (SURROGATE.test(s)) {
    // A lone surrogate is written as a \u escape: 6 bytes where utf8Length counted U+FFFD's 3.
    const lone = s.match(LONE_SURROGATE)
    if (lone !== null) n += 3 * lone.length
  }
  return n
}

function mcpbFacts(value) {
  let text
  try {
    text = JSON.stringify(value)
  } catch {
    text = undefined
  }
  if (text) {
    const envelope = isEnvelope(value)
    const [types, image] = envelope ? contentFacts(value) : [{}, 0]
    return facts(utf8Length(text), Array.isArray(value) ? "array" : typeof value === "function" ? "undefined" : "object", envelope, false, types, image, true, envelope && value.isError === true)
  }
  let s = ""
  try {
    s = String(value)
  } catch {
    s = ""
  }
  const substituted = s === ""
  return facts(utf8Length(substituted ? EMPTY_SUBSTITUTE : s), "unserializable", false, substituted, {}, 0, false, false)
}

function facts(resultBytes, resultType, envelope, substituted, contentTypes, imageBytes = 0, serializable = true, isError = false) {
  return { resultBytes, resultType, envelope, substituted, contentTypes, imageBytes, serializable, isError }
}

/** The error text a span keeps, per errorPolicy: "message" (capped at 200), "name", or "none". Never a stack. */
function errorText(err, policy) {
  if (policy === "none") return null
  let name = "Error"
  let message = ""
  try {
    if (err && typeof err === "object") {
      name = typeof err.name === "string" && err.name ? err.name : "Error"
      message = typeof err.message === "string" ? err.message : ""
    } else {
      name = typeof err
      message = String(err)
    }
  } catch {
    /* a hostile getter: keep the defaults */
  }
  if (policy === "name" || !message) return cutError(name) || "Error"
  return cutError(message)
}

/** The wire's (and webmcp-profiler's) error limit, in code points. */
const MAX_ERROR = 200

/**
 * An error text of at most MAX_ERROR code points: a longer one keeps MAX_ERROR - 1 and ends in "\u2026", as
 * webmcp-profiler marks its cut (it keeps 200 and adds the "\u2026"; here the mark fits within the wire's 200).
 */
function cutError(text) {
  const s = String(text)
  if (s.length <= MAX_ERROR) return s
  const kept = cap(s, MAX_ERROR)
  return kept.length === s.length ? s : `${cap(kept, MAX_ERROR - 1)}\u2026`
}


/**
 * The text the agent reads for `value` (the same rules as resultFacts), or null when the host would fail the
 * call. Only used where a body is wanted on purpose: an invoke from the terminal (its dialog) and opt-in
 * payload capture (to OpenTelemetry). Never kept.
 */
function resultText(value, profile = "chromium") {
  const t = typeof value
  if (t === "string") return value === "" && profile !== "form" ? EMPTY_SUBSTITUTE : value
  if (profile === "mcp") return resultText(safely(() => mcpResult(value), value), "mcp-b")
  if ((profile === "mcp-b" || profile === "mcp-b-form") && value !== null && (t === "object" || t === "function")) {
    let text
    try {
      text = JSON.stringify(value)
    } catch {
      text = undefined
    }
    if (text) return text
    let s = ""
    try {
      s = String(value)
    } catch {
      return null
    }
    return s === "" ? EMPTY_SUBSTITUTE : s
  }
  if (value === undefined || t === "function" || t === "symbol") return UNDEFINED_TEXT
  if (value === null || t === "number" || t === "bigint" || t === "boolean") return String(value)
  try {
    const text = JSON.stringify(value)
    return typeof text === "string" ? text : UNDEFINED_TEXT
  } catch {
    return null
  }
}

/** The input as JSON text (what the model wrote), or null. */
function inputText(input) {
  if (input === undefined) return null
  if (typeof input === "string") return input
  try {
    const text = JSON.stringify(input)
    return typeof text === "string" ? text : null
  } catch {
    return null
  }
}

/** The facts of a throw, for a caller that receives one as a result (an MCP client: an isError CallToolResult). */
function errorResultFacts(err, profile) {
  return profile === "mcp" ? mcpbFacts(mcpErrorResult(err)) : null
}
return { callTokens, EMPTY_SUBSTITUTE, UNDEFINED_TEXT, inputBytesOf, CONTENT_TYPES, PROFILES, resultFacts, jsonStringBytes, errorText, MAX_ERROR, cutError, resultText, inputText, errorResultFacts };
})();

// ---- page/hooks.js ----
__m["page/hooks"] = (function () {
// Page-supplied classifiers and the facts 001 (autotel-webmcp) adds to a call: a handler fingerprint, the
// built-in English refusal match, the consent label check. Pure helpers; nothing here keeps a body.

const { cap } = __m["shared/util"];
/** FNV-1a, 32 bits, over UTF-16 code units, as 8 hex digits (001's descriptor fingerprint hash). */
function fnv1a32(text) {
  const s = String(text)
  let h = 0x811c9dc5
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193)
  return (h >>> 0).toString(16).padStart(8, "0")
}

/** The source text of a handler, or null when it has none we can read (proxies, revoked functions). */
function sourceOf(fn) {
  if (typeof fn !== "function") return null
  try {
    const src = Function.prototype.toString.call(fn)
    return typeof src === "string" ? src : null
  } catch {
    return null
  }
}

/**
 * The descriptor fingerprint exactly as autotel-webmcp (001) computes `webmcp.tool.descriptor`, so a trace from
 * either tool joins on it: FNV-1a over the JSON text of [name, title (a string, else ""), description (as a
 * string, "" when absent), inputSchema (null when absent), annotations (null when absent), handler source (only
 * with `fingerprintHandler`, else null)]. A changed fingerprint under the same name is a redefinition.
 * Returns null when the descriptor cannot be serialised (a cyclic schema).
 * @param {object} tool  the tool object as the page passed it
 * @param {boolean} withHandler  fold the handler's source in (`fingerprintHandler`)
 */
function descriptorFingerprint(tool, withHandler) {
  let text
  try {
    text = JSON.stringify([
      String(tool.name),
      typeof tool.title === "string" ? tool.title : "",
      String(tool.description ?? ""),
      tool.inputSchema ?? null,
      tool.annotations ?? null,
      withHandler ? sourceOf(tool.execute) : null,
    ])
  } catch {
    return null
  }
  return typeof text === "string" ? fnv1a32(text) : null
}

/**
 * The built-in refusal match (used when the page gives no `isRefusal`):
 *   autotel-webmcp's (001) two sentences, at the end of the text and case-sensitive as 001 has them:
 *   "\u2026 was not confirmed." is "confirm", "\u2026 is not available right now." is "unavailable";
 *   and, case-insensitive at the start: "Confirmation required" / "User confirmation required" / "This action
 *   requires (user) confirmation" ("confirm"), "Tool unavailable" / "This tool is (currently) not available".
 * A library that rewords its refusals is not recognised: give `isRefusal` then.
 */
/** @type {Array<[string, RegExp]>} */
const REFUSALS = [
  ["confirm", / was not confirmed\.$/],
  ["unavailable", / is not available right now\.$/],
  ["confirm", /^\s*(?:(?:user )?confirmation (?:is )?required\b|this (?:action|tool|call) requires (?:user |the user's )?confirmation\b)/i],
  ["unavailable", /^\s*(?:this )?tool (?:is )?(?:currently )?(?:not available|unavailable)\b/i],
]
const REFUSAL_SCAN = 2048
const REFUSAL_LABEL = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,31}$/

/** The text a refusal would be written in: a string result, or the text items of an MCP envelope. */
function refusalText(value) {
  if (typeof value === "string") return value.length <= REFUSAL_SCAN ? value : null
  if (value && typeof value === "object" && !Array.isArray(value) && Array.isArray(value.content)) {
    for (const item of value.content) {
      if (item && item.type === "text" && typeof item.text === "string") return item.text.length <= REFUSAL_SCAN ? item.text : null
    }
  }
  return null
}

/** "confirm" | "unavailable" | null, by the built-in English match. */
function defaultRefusal(value) {
  const text = refusalText(value)
  if (text === null) return null
  for (const [kind, re] of REFUSALS) if (re.test(text)) return kind
  return null
}

/**
 * What a page's isRefusal returned, as the wire takes it: 001's "confirm" / "unavailable", or the page's own
 * label (a short identifier, up to 32 characters: letters, digits, `_ . : -`). Anything else is no refusal.
 */
function refusalOf(v) {
  return typeof v === "string" && REFUSAL_LABEL.test(v) ? v : null
}

/**
 * A captured payload text cut at `max` characters the way autotel-webmcp (001) cuts it: the kept head, then
 * `...[N chars]` naming the full length, so a cut is never mistaken for the whole (nor for valid JSON).
 * Counts UTF-16 units like 001; never splits a surrogate pair.
 */
function cutPayload(text, max, fullLength) {
  const s = String(text)
  const n = fullLength === undefined ? s.length : fullLength
  if (n <= max) return s
  let end = Math.min(max, s.length)
  const c = s.charCodeAt(end - 1)
  if (c >= 0xd800 && c <= 0xdbff) end--
  return `${s.slice(0, end)}...[${n} chars]`
}

const norm = (s) => String(s).trim().replace(/\s+/g, " ").toLowerCase()

/**
 * Does the consent label the human read name the tool that ran? It does when it equals (case- and
 * space-insensitive) the tool's name, title or description, or contains its name as a word. `descriptor` is
 * the tool's {name, title, description} as registered (null when the agent never saw the tool).
 */
function consentMismatch(shown, resolved, descriptor) {
  const label = norm(shown)
  if (!label) return true
  const name = norm(resolved)
  const same = [name]
  if (descriptor && typeof descriptor === "object") {
    for (const k of ["title", "description"]) if (typeof descriptor[k] === "string" && descriptor[k]) same.push(norm(descriptor[k]))
  }
  if (same.includes(label)) return false
  if (name) {
    const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
    if (new RegExp(`(^|[^a-z0-9_])${escaped}($|[^a-z0-9_])`).test(label)) return false
  }
  return true
}

/** The consent event's detail, capped to the wire's sizes. */
function consentDetail(shown, resolved, granted, mismatch) {
  return { shown: cap(String(shown ?? ""), 200), resolved: cap(String(resolved), 128), granted: !!granted, mismatch: !!mismatch }
}
return { fnv1a32, sourceOf, descriptorFingerprint, defaultRefusal, refusalOf, cutPayload, consentMismatch, consentDetail };
})();

// ---- page/wrap.js ----
__m["page/wrap"] = (function () {
// The execute() wrapper: the only code on the call path. Two clock reads, a few pushes; the result goes
// back to the caller untouched (the same value; a promise comes back as a promise of the same value, see
// `carry`) and is measured later by the collector.

const ORIGINAL = new WeakMap() // wrapper -> original execute
// Report-tool descriptors (profilerTool) carry this registered symbol: listed in the ledger, never wrapped. A
// symbol, not a module-local set, so the /agent.mjs copy's descriptor is known to the classic script's agent.
const INTERNAL = Symbol.for("wmcp-top/internal-tool")

/** Mark a descriptor as the agent's own report tool: the interceptor lists it and never measures it. */
const markInternal = (tool) => {
  Object.defineProperty(tool, INTERNAL, { value: true, enumerable: false })
  return tool
}

/** Is `tool` a descriptor made by profilerTool()? */
const isInternal = (tool) => {
  try {
    return !!tool && typeof tool === "object" && tool[INTERNAL] === true
  } catch {
    return false
  }
}

/** Is `fn` one of our wrappers? */
const isWrapper = (fn) => typeof fn === "function" && ORIGINAL.has(fn)

/** The page's own function behind one of our wrappers (or `fn` itself). */
const originalOf = (fn) => (typeof fn === "function" && ORIGINAL.has(fn) ? ORIGINAL.get(fn) : fn)

/**
 * Wrap `original` so every call is measured by `collector` under `name`. Once the collector is stopped
 * (detach), the wrapper is a plain pass-through: a host that captured it keeps working.
 * @param {import("./collector.js").Collector} collector
 * @param {string} name
 * @param {Function} original
 * @param {string|((self: any) => string)} [profile]  how the host serialises results (measure.js PROFILES); a function
 *   when that depends on the caller (asked once per call, at entry, with the call's `this`)
 */
function wrapExecute(collector, name, original, profile) {
  const c = collector
  const wrapped = function (input) {
    if (!c.active) return original.apply(this, arguments)
    let call = null
    try {
      call = c.enter(name, input, typeof profile === "function" ? profile(this) : profile)
    } catch {
      return original.apply(this, arguments)
    }
    const stack = c.stack
    if (call) stack.push(call)
    let ret
    try {
      ret = original.apply(this, arguments)
    } catch (err) {
      if (call) stack.pop()
      c.settle(call, false, err)
      throw err
    }
    if (call) stack.pop()
    if (ret !== null && (typeof ret === "object" || typeof ret === "function")) {
      let then
      try {
        then = ret.then
      } catch {
        then = undefined
      }
      if (typeof then === "function") {
        // A native promise is awaited as is (its `then` is the engine's own: reading it is invisible). Any
        // other thenable has its `then` read once (above) and called once (here): the host gets a native
        // promise of the same value, so the page's `then` never runs a second time for our sake.
        if (!isNativePromise(ret, then)) return settleThenable(c, call, ret, then)
        if (call) return carry(c, call, ret)
        then.call(
          ret,
          (v) => c.settle(call, true, v),
          (e) => c.settle(call, false, e),
        )
        return ret
      }
    }
    c.settle(call, true, ret)
    return ret
  }
  ORIGINAL.set(wrapped, original)
  try {
    Object.defineProperty(wrapped, "name", { value: original.name || name, configurable: true })
    Object.defineProperty(wrapped, "length", { value: original.length, configurable: true })
  } catch {
    /* cosmetic only */
  }
  return wrapped
}

/** A promise of the engine's own, with the engine's own `then` (a subclass or a patched `then` is not). */
function isNativePromise(ret, then) {
  try {
    return then === NATIVE_THEN && ret instanceof Promise
  } catch {
    return false
  }
}
const NATIVE_THEN = Promise.prototype.then

/** A plain promise of the engine's own (no subclass, no own or patched `then`): watching it runs no page code. */
function isPlainPromise(v) {
  try {
    return v !== null && typeof v === "object" && Object.getPrototypeOf(v) === Promise.prototype && v.then === NATIVE_THEN
  } catch {
    return false
  }
}

/**
 * A thenable that is not a native promise: call the `then` already read, exactly once, and hand the host a
 * native promise that settles with the same value or reason (a value that is itself a thenable is adopted
 * by that promise exactly as the host's own `await` would have).
 */
function settleThenable(c, call, ret, then) {
  let done = false // a `then` may call back more than once: the first call counts, as for a promise
  return new Promise((resolve, reject) => {
    const finish = (ok, v) => {
      if (done) return
      done = true
      c.settle(call, ok, v)
      if (ok) resolve(v)
      else reject(v)
    }
    try {
      then.call(ret, (v) => finish(true, v), (e) => finish(false, e))
    } catch (e) {
      finish(false, e)
    }
  })
}

const defineProperty = Object.defineProperty // captured: a page replacing it later does not reach us

/**
 * A measured call that returned a promise: await it inside an async function named after the call
 * (`__wmcp_<session>_<seq>`) and hand the host that function's promise, which settles with the same value or
 * reason. Being the only one awaiting the tool's promise puts that name in V8's async stack trace of every
 * continuation of the tool's async code, so an `executeTool` called after an `await` inside the tool can
 * name its caller (Collector.callerOf). No AsyncContext in Chromium 156: this is what the page can observe.
 * @param {import("./collector.js").Collector} c
 */
function carry(c, call, ret) {
  const run = async function () {
    let v
    try {
      v = await ret
    } catch (e) {
      c.settle(call, false, e)
      throw e
    }
    c.settle(call, true, v)
    return v
  }
  // V8 names an async frame by the function's own `name` data property: set on the one closure made here, it
  // costs a few \u00b5s less than a computed method name in a fresh object literal (about 15 \u00b5s a call, profiled).
  defineProperty(run, "name", { value: c.frameName(call.seq) })
  return run()
}
return { markInternal, isInternal, isWrapper, originalOf, wrapExecute, NATIVE_THEN, isPlainPromise };
})();

// ---- page/status.js ----
__m["page/status"] = (function () {
// Status phases: what the agent is doing now, in one sentence, with next steps. Pure.

const PHASES = {
  inactive: {
    message: "The agent is loaded but switched off for this origin.",
    hints: ["open this page with ?perf=1 to switch it on (remembered for the origin)", "?perf=0 switches it off again"],
  },
  "no-host": {
    message: "Attached; no modelContext registry found yet on document, navigator or window.",
    hints: [
      "agent browsers can inject the registry late: keep the tab open and let the agent work",
      "Chromium needs --enable-features=WebMCPTesting (or the origin trial) for document.modelContext",
      "no host at all? load a polyfill such as @mcp-b/webmcp-polyfill for a dry run",
    ],
  },
  "host-found": {
    message: "Registry found; the page has not registered any tools on it yet.",
    hints: [
      "the page may register later: wait a moment",
      "tools registered before the agent loaded? retrofit them: __webmcpPerf.instrument(window.myTools)",
    ],
  },
  "tools-registered": {
    message: "Tools are wrapped; waiting for the first call.",
    hints: ["let the agent call a tool, or call one yourself from the console: tool.execute({...})"],
  },
  measuring: {
    message: "Measuring tool calls.",
    hints: ["__webmcpPerf.summary() prints the split; .report() returns the document; the relay shows it live"],
  },
  detached: {
    message: "Detached: every original is restored and nothing is measured.",
    hints: ["reload the page to attach again"],
  },
}

// Tools registered before the agent loaded are only counted (toolactivated): how to measure them.
const COUNTED_HINT =
  "tools registered before the agent are only counted: load the agent first (first in <head>), or run `wmcp-top open URL`, or watch with `wmcp-top attach --cdp`"

// Calls arrived, but only counted (no measured call yet): "waiting for the first call" would be untrue.
const COUNTING_MESSAGE = "Calls are arriving and counted, not measured: these tools were registered before the agent loaded."

/** The registry's property, by the location the interceptor found it at. */
const WHERE = { document: "document.modelContext", navigator: "navigator.modelContext", window: "window.modelContext" }

/**
 * The phase's sentence with webmcp-profiler's details: where the registry was found (host-found), and the
 * split (measuring) when the caller has it.
 */
function detailed(phase, message, s) {
  if (phase === "host-found" && s.hostLocation) return message.replace("Registry found", `Registry found on ${WHERE[s.hostLocation] || s.hostLocation}`)
  if (phase === "measuring" && !s.measured) return COUNTING_MESSAGE
  if (phase === "measuring" && s.split) return `${message.slice(0, -1)}: ${s.split}`
  return message
}

/**
 * @param {{active?:boolean, inactive?:boolean, hostFound?:boolean, registered?:boolean, anyCall?:boolean,
 *   countedCalls?:number, reasons:string[], inFlight?:number, countedOnly?:boolean, hostLocation?:string|null,
 *   split?:string|null, hints?:string[]}} s  `hints`: the caller's own, ahead of the phase's; `countedCalls`:
 *   calls seen through toolactivated only
 * @returns {{phase:string, message:string, hints:string[], coverage:string|null, reasons:string[]}}
 */
function statusFor(s) {
  let phase
  if (s.inactive) phase = "inactive"
  else if (!s.active) phase = "detached"
  else if (s.anyCall || s.countedCalls) phase = "measuring"
  else if (s.registered) phase = "tools-registered"
  else if (s.hostFound) phase = "host-found"
  else phase = "no-host"
  const p = PHASES[phase]
  let coverage = null
  if (phase !== "inactive" && phase !== "detached") {
    coverage = s.reasons.length ? "incomplete" : s.anyCall ? "running" : "none-observed"
  }
  const hints = p.hints.slice()
  if (s.countedOnly && coverage !== null) hints.unshift(COUNTED_HINT)
  if (s.hints && s.hints.length) hints.unshift(...s.hints)
  return { phase, message: detailed(phase, p.message, { ...s, measured: !!s.anyCall }), hints: hints.slice(0, 8), coverage, reasons: s.reasons.slice(0, 8) }
}

const PHASE_NAMES = Object.keys(PHASES)
return { COUNTED_HINT, statusFor, PHASE_NAMES };
})();

// ---- transport/pacing.js ----
__m["transport/pacing"] = (function () {
// The batch window shared by the uplink and the channel mirror. Every message a page sends costs the browser
// more than its script: a WebSocket send or a BroadcastChannel post is an IPC hop that wakes the renderer's
// and the browser's IO threads (and, for the channel, the browser's main thread) once per message, and on a
// laptop that is most of what watching costs the page. Messages gathered in a window leave together and
// share those wake-ups. After a quiet spell a window is FLUSH_MS; while the page keeps calling (a batch left
// under BUSY_MS ago) it stretches to BUSY_FACTOR times that, at most MAX_FLUSH_MS: a busy page pays four
// batches a second, a quiet one is seen within 50 ms. (Measured in tests/bench/test_observer_effect.py.)

const FLUSH_MS = 50
const MAX_FLUSH_MS = 250
const BUSY_MS = 1000
const BUSY_FACTOR = 5

/**
 * The window for a batch opened at `now`, when the last batch carrying calls left at `lastAt`.
 * @param {number} flushMs  the quiet window (0: none)
 * @param {number} now
 * @param {number} lastAt
 */
function batchWindow(flushMs, now, lastAt) {
  return isBusy(now, lastAt) ? Math.min(MAX_FLUSH_MS, Math.max(flushMs, flushMs * BUSY_FACTOR)) : flushMs
}

/** Is the page still calling (the last batch that carried calls left under BUSY_MS ago)? */
const isBusy = (now, lastAt) => now - lastAt < BUSY_MS

// When a busy page's window ends while a call is under way (running, or its answer on its way back to the
// page), the batch waits for the page's next quiet moment: right after the agent accounted that call (behind
// the page's own continuation when the page awaited it). A batch sent at a random moment lands, a few times a
// second, on a call in progress (its send, the relay's ack and the browser's IPC for them delay that call),
// which is what moves a page's p95. With no call under way it leaves when its window ends: the page is between
// calls, and the last calls of a burst are not held back. At most MAX_FLUSH_MS more.
const QUIET_WAIT_MS = MAX_FLUSH_MS

// What is watched sets the cadence (issue 33). The relay says, with a `watch {session, watched, intervalMs}`
// frame after the hello's ack and whenever it changes, whether a viewer shows the session. Watched: the window
// above (the screen repaints four times a second). Unwatched: one flush per `intervalMs` (a second by default),
// sooner only when the unsent spans reach the mark, so the buffer never evicts what no socket carried; nothing
// while idle (a flush is armed only by something to send). The buffer, ack and replay rules are the same on
// both cadences. An agent never told (an older relay) is watched.
const UNWATCHED_MS = 1000
const MAX_INTERVAL_MS = 10000
// The ledger (the page's totals) is read by a person: unwatched, one every few batches. Half the frames of an
// unwatched busy page were ledgers (tests/bench: 11 frames in 5 s at 100 calls/s, 5 of them spans).
const UNWATCHED_LEDGER_MS = 5000

/**
 * A `watch` frame's state, checked: watched or not, and the interval (watched: at most MAX_FLUSH_MS; unwatched:
 * MAX_FLUSH_MS to MAX_INTERVAL_MS). Null when the frame is malformed.
 * @param {any} msg
 * @returns {{watched: boolean, intervalMs: number} | null}
 */
function readWatch(msg) {
  if (!msg || typeof msg.watched !== "boolean" || !Number.isInteger(msg.intervalMs) || msg.intervalMs < 0) return null
  const intervalMs = msg.watched ? Math.min(msg.intervalMs, MAX_FLUSH_MS) : Math.min(Math.max(msg.intervalMs, MAX_FLUSH_MS), MAX_INTERVAL_MS)
  return { watched: msg.watched, intervalMs }
}

/**
 * The unsent spans that send an unwatched session's batch at once: half its buffer (the ring evicts at the
 * buffer), at most a frame's worth.
 * @param {number} buffer  spans the ring holds
 */
function unwatchedMark(buffer) {
  return Math.max(1, Math.min(250, Math.floor(buffer / 2)))
}

/**
 * The wait before an unwatched batch leaves: its interval, or none once `unsent` reached `mark`.
 * @param {number} intervalMs
 * @param {number} unsent
 * @param {number} mark
 */
function unwatchedWindow(intervalMs, unsent, mark) {
  return unsent >= mark ? 0 : intervalMs
}
return { FLUSH_MS, MAX_FLUSH_MS, BUSY_MS, batchWindow, isBusy, QUIET_WAIT_MS, UNWATCHED_MS, UNWATCHED_LEDGER_MS, readWatch, unwatchedMark, unwatchedWindow };
})();

// ---- shared/config.js ----
__m["shared/config"] = (function () {
// Build-time and serve-time constants.

const VERSION = "0.1.0"
const AGENT = `wmcp-top-agent/${VERSION}`
/** The agent as the browser extension injects it: the relay and the dashboard mark its sessions by this name. */
const EXTENSION_AGENT = `wmcp-top-extension/${VERSION}`

/**
 * The uplink address (the relay's WebSocket). The relay replaces the placeholder below, when it serves
 * /agent.js and /agent.mjs, with "ws://127.0.0.1:PORT/relay?t=TOKEN". Loaded raw, it stays null and the
 * agent reads globalThis.__WMCP_UPLINK__ (same shape), or runs without an uplink.
 */
const BAKED_UPLINK = /*@WMCP_UPLINK@*/null

const DEFAULTS = Object.freeze({
  buffer: 500,
  sample: 1,
  errorPolicy: "message",
  globalName: "__webmcpPerf",
  relay: true, // webmcp-profiler's meaning: mirror spans onto the BroadcastChannel (false: no channel)
  uplink: null, // the relay's WebSocket URL; null: the baked one or __WMCP_UPLINK__; false: none
  pollMs: 250,
  param: "perf",
  storageKey: "webmcp-perf:mode",
  announce: true,
  reportTool: false,
  overlay: false, // webmcp-profiler's panel; here true prints one line pointing to the terminal
  capturePayloads: false,
  maxPayloadLength: 2048,
  fingerprintHandler: false,
  prompts: true,
})
return { VERSION, AGENT, EXTENSION_AGENT, BAKED_UPLINK, DEFAULTS };
})();

// ---- page/channel.js ----
__m["page/channel"] = (function () {
// The BroadcastChannel mirror, compatible with webmcp-profiler's relay:
//   posts and accepts {kind:"span", span} and {kind:"update", sessionId, seq, blockingMs}
//   on BroadcastChannel("webmcp-perf:" + origin).
// Also posts {kind:"wmcp-top", sessionId, uplink} on start (and again whenever a new wmcp-top peer
// announces itself), so another wmcp-top agent in the same origin does not forward (as "relayed") a session
// that has its own uplink. A foreign session is held back for `settleMs` before it is forwarded, which
// leaves its agent time to announce. Every wmcp-top agent with an uplink forwards the foreign sessions it
// hears: the relay keeps the first forwarder's copy and shadows the others (README, "Session ownership").
// No election among peers: anything on the channel can be posted by any same-origin script, so a fake
// announcement (say, session 00000000 claiming to forward) must not be able to stop forwarding. An agent
// leaving still says `gone: true`. Other consumers ignore the unknown kind.
// What arrives is validated as strictly as the relay would, capped (8 sessions, 500 spans each) and
// rate-limited; our own messages are ignored. Every drop is counted, never thrown.
// Our own spans and updates leave in batches (pacing.js): the same messages, in the same order, each its own
// post, but posted together once per window, so they share the browser's IPC wake-ups (one post per span
// was the largest part of what watching cost a page calling 100 times a second). Announcements go at once,
// after whatever the window held; pagehide and close flush the window first.
// Posting our own spans is for a reader the page asked for (issue 33): webmcp-profiler's API keeps its default
// (`relay: true`), while the terminal's routes (the relay's script tag, `wmcp-top open`, the extension) attach
// with `relay: "read"` (terminalRoute): the channel is read, and nothing of ours is posted per span unless the
// page says `relay: true` or `?perf=overlay`. One message per span cost more than everything else watching does.

const { CONTENT_TYPES } = __m["page/measure"];
const { safely } = __m["shared/util"];
const { FLUSH_MS, QUIET_WAIT_MS, batchWindow, isBusy } = __m["transport/pacing"];
const MAX_FOREIGN_SESSIONS = 8
const MAX_FOREIGN_SPANS = 500
/** Own messages a window may hold; beyond it the oldest is dropped and counted (`outboxDropped`). */
const MAX_OUTBOX = 1000
const MAX_NUMBER = 1e13
const HEX8 = /^[0-9a-f]{8}$/
const RESULT_TYPES = new Set(["object", "array", "string", "number", "boolean", "null", "undefined", "error", "unserializable"])

const nonNeg = (v) => typeof v === "number" && Number.isFinite(v) && v >= 0 && v <= MAX_NUMBER
const nonNegInt = (v) => nonNeg(v) && Number.isInteger(v)

/**
 * A clean copy of a span with exactly the wire fields, or null when anything is off.
 * @returns {object|null}
 */
function validateSpan(s) {
  if (!s || typeof s !== "object" || Array.isArray(s)) return null
  if (typeof s.sessionId !== "string" || !HEX8.test(s.sessionId)) return null
  if (!nonNegInt(s.seq)) return null
  if (typeof s.tool !== "string" || s.tool.length < 1 || s.tool.length > 128) return null
  for (const k of ["invokedAt", "settledAt", "wallMs", "blockingMs"]) if (!nonNeg(s[k])) return null
  for (const k of ["inputBytes", "resultBytes", "imageBytes", "estInputTokens", "estTextTokens", "estImageTokens", "estTokens"]) if (!nonNegInt(s[k])) return null
  const ct = s.contentTypes
  if (!ct || typeof ct !== "object" || Array.isArray(ct)) return null
  const keys = Object.keys(ct)
  if (keys.length > 16) return null
  const contentTypes = {}
  for (const k of keys) {
    if (k.length > 64 || !nonNegInt(ct[k])) return null
    const key = CONTENT_TYPES.includes(k) ? k : "other" // keys are ours, never page text
    contentTypes[key] = (contentTypes[key] || 0) + ct[k]
  }
  if (typeof s.isError !== "boolean" || typeof s.synthetic !== "boolean" || typeof s.serializable !== "boolean") return null
  // webmcp-profiler caps a message at 200 characters and appends an ellipsis: 201.
  if (!(s.error === null || (typeof s.error === "string" && s.error.length <= 201))) return null
  if (!(s.gapSincePrevCallMs === null || nonNeg(s.gapSincePrevCallMs))) return null
  const out = {
    sessionId: s.sessionId,
    seq: s.seq,
    tool: s.tool,
    invokedAt: s.invokedAt,
    settledAt: s.settledAt,
    wallMs: s.wallMs,
    blockingMs: s.blockingMs,
    inputBytes: s.inputBytes,
    resultBytes: s.resultBytes,
    contentTypes,
    imageBytes: s.imageBytes,
    estInputTokens: s.estInputTokens,
    estTextTokens: s.estTextTokens,
    estImageTokens: s.estImageTokens,
    estTokens: s.estTokens,
    isError: s.isError,
    error: s.error,
    gapSincePrevCallMs: s.gapSincePrevCallMs,
    synthetic: s.synthetic,
    serializable: s.serializable,
  }
  // Optional facts (001): kept when valid, dropped (not fatal) otherwise.
  if (typeof s.resultType === "string" && RESULT_TYPES.has(s.resultType)) out.resultType = s.resultType
  if (typeof s.envelope === "boolean") out.envelope = s.envelope
  if (typeof s.substituted === "boolean") out.substituted = s.substituted
  if (Number.isInteger(s.depth) && s.depth >= 0 && s.depth <= 64) out.depth = s.depth
  if (s.parent === null || nonNegInt(s.parent)) out.parent = s.parent
  if (typeof s.overlapped === "boolean") out.overlapped = s.overlapped
  if (s.errorType === null || (typeof s.errorType === "string" && s.errorType.length <= 64)) out.errorType = s.errorType
  return out
}

const PROFILER_FIELDS = [
  "sessionId", "seq", "tool", "invokedAt", "settledAt", "wallMs", "blockingMs", "inputBytes", "resultBytes",
  "contentTypes", "imageBytes", "estInputTokens", "estTextTokens", "estImageTokens", "estTokens", "isError",
  "error", "gapSincePrevCallMs", "synthetic", "serializable",
]

/** `relay` as the terminal's routes set it: read the channel, post no span of our own. */
const READ_ONLY = "read"

/**
 * The config a terminal route attaches with: the page's own, its channel read only unless it says `relay: true`
 * (or `false`: no channel at all).
 * @param {object} config
 */
function terminalRoute(config) {
  return { ...config, relay: config.relay === true || config.relay === false ? config.relay : READ_ONLY }
}

/**
 * Does this config ask for our spans on the channel? webmcp-profiler's default does; a terminal route only
 * with `relay: true` or the overlay (`?perf=overlay`, `overlay: true`), whose reader is the channel. An agent
 * with no uplink posts always: the channel is its only way to the terminal (another tab forwards it).
 * @param {{relay?: unknown, overlay?: unknown}} config
 * @param {boolean} uplinked  the agent has its own uplink
 */
function postsSpans(config, uplinked) {
  return config.relay !== READ_ONLY || config.overlay === true || !uplinked
}

function profilerSpan(span) {
  const out = {}
  for (const k of PROFILER_FIELDS) out[k] = span[k]
  return out
}

class ChannelMirror {
  /**
   * @param {object} o
   * @param {string} o.name  channel name
   * @param {string} o.sessionId  our own session (its messages are ignored)
   * @param {boolean} [o.uplink]  announce that our session has its own uplink
   * @param {new (name: string) => BroadcastChannel} [o.BroadcastChannel]
   * @param {() => number} [o.clock]  ms clock for the rate limit
   * @param {number} [o.rate]  messages a second accepted (burst = 2x)
   * @param {(span: object) => void} [o.onSpan]  a foreign span, validated
   * @param {(u: {sessionId:string, seq:number, blockingMs:number}) => void} [o.onUpdate]
   * @param {(sessionId: string) => void} [o.onSession]  a new foreign session (within the cap)
   * @param {Function} [o.setTimeout]
   * @param {Function} [o.clearTimeout]
   * @param {number} [o.settleMs]  how long a foreign session may stay quiet before it is taken as gone
   * @param {number} [o.flushMs]  batch window for our own spans and updates (0: post each at once)
   * @param {boolean} [o.alignQuiet]  a busy page's batch, its window over while a call is under way, waits for quiet() (pacing.js)
   * @param {() => boolean} [o.calling]  is a call under way?
   * @param {boolean} [o.posts]  post our own spans and updates (false: the channel is only read, postsSpans)
   */
  constructor({ name, sessionId, uplink = false, BroadcastChannel: BC = globalThis.BroadcastChannel, clock = () => Date.now(), rate, onSpan, onUpdate, onSession, setTimeout: st, clearTimeout: ct, settleMs = 1000, flushMs = FLUSH_MS, alignQuiet = false, calling = () => false, posts = true }) {
    this.sessionId = sessionId
    this.posts = !!posts
    this.uplink = !!uplink
    this.st = st || ((fn, ms) => setTimeout(fn, ms))
    this.ct = ct || ((t) => clearTimeout(t))
    this.flushMs = Number.isFinite(flushMs) && flushMs > 0 ? flushMs : 0
    /** our own spans and updates waiting for the window */
    this.outbox = []
    this.outboxTimer = null
    this.lastBatchAt = -Infinity
    this.alignQuiet = !!alignQuiet
    this.calling = calling
    this.awaitingQuiet = false
    this.settleMs = settleMs
    /** foreign sessions waiting out settleMs: id -> buffered messages */
    this.pending = new Map()
    /** wmcp-top peers heard from */
    this.peers = new Set()
    this.clock = clock
    this.rate = Number.isFinite(rate) && rate > 0 ? rate : 200
    this.tokens = this.rate * 2
    this.refilledAt = clock()
    this.onSpan = onSpan || (() => {})
    this.onUpdate = onUpdate || (() => {})
    this.onSession = onSession || (() => {})
    /** foreign sessionId -> count of spans accepted (for the per-session cap) */
    this.sessions = new Map()
    /** sessions that announced their own uplink: seen, not forwarded */
    this.direct = new Set()
    this.counters = { received: 0, accepted: 0, invalid: 0, own: 0, rateLimited: 0, sessionCap: 0, direct: 0, heldDropped: 0, posted: 0, outboxDropped: 0 }
    this.bc = null
    if (typeof BC !== "function") return
    safely(() => {
      this.bc = new BC(name)
      this.bc.onmessage = (e) => safely(() => this.receive(e && e.data))
      this.announce()
    })
  }

  announce(gone = false) {
    const msg = { kind: "wmcp-top", sessionId: this.sessionId, uplink: this.uplink }
    if (gone) msg.gone = true
    this.flush()
    this.post(msg)
  }

  post(msg) {
    if (!this.bc) return
    safely(() => {
      this.bc.postMessage(msg)
      this.counters.posted++
    })
  }

  /** Post a span with exactly webmcp-profiler's 20 fields (its readers validate closed objects). */
  span(span) {
    if (this.posts) this.queue({ kind: "span", span: profilerSpan(span) })
  }

  update(sessionId, seq, blockingMs) {
    if (this.posts) this.queue({ kind: "update", sessionId, seq, blockingMs })
  }

  queue(msg) {
    if (!this.bc) return
    if (!this.flushMs) return this.post(msg)
    this.outbox.push(msg)
    if (this.outbox.length > MAX_OUTBOX) {
      this.outbox.shift()
      this.counters.outboxDropped++
    }
    if (this.outboxTimer !== null) return
    const wait = batchWindow(this.flushMs, this.clock(), this.lastBatchAt)
    this.arm(wait, () => {
      if (!this.alignQuiet || !isBusy(this.clock(), this.lastBatchAt) || !this.calling()) return this.flush()
      // pacing.js: a busy page's batch waits for its next quiet moment (quiet()), QUIET_WAIT_MS at most
      this.awaitingQuiet = true
      this.arm(QUIET_WAIT_MS, () => this.flush())
    })
  }

  /** Run `fn` after `ms` on the window's one timer; posts now when no timer can be had. */
  arm(ms, fn) {
    let fired = false
    const id = safely(() => this.st(() => {
      fired = true
      this.outboxTimer = null
      safely(fn)
    }, ms), null)
    if (fired) return // a timer that ran at once
    if (id === null || id === undefined) return this.flush() // no timer to be had: post now rather than hold
    this.outboxTimer = id
  }

  /** The page's quiet moment (the agent just accounted a settled call): a batch waiting for it leaves now. */
  quiet() {
    if (this.awaitingQuiet) this.flush()
  }

  /** Post what the window holds, in order. */
  flush() {
    this.awaitingQuiet = false
    if (this.outboxTimer !== null) {
      const t = this.outboxTimer
      this.outboxTimer = null
      safely(() => this.ct(t))
    }
    if (!this.outbox.length) return
    const batch = this.outbox
    this.outbox = []
    this.lastBatchAt = this.clock()
    for (const msg of batch) this.post(msg)
  }

  allow() {
    const t = this.clock()
    this.tokens = Math.min(this.rate * 2, this.tokens + ((t - this.refilledAt) / 1000) * this.rate)
    this.refilledAt = t
    if (this.tokens < 1) return false
    this.tokens -= 1
    return true
  }

  /** Handle one message from another context. Never throws; every outcome is counted. */
  receive(msg) {
    const c = this.counters
    c.received++
    if (!this.allow()) return void c.rateLimited++
    if (!msg || typeof msg !== "object") return void c.invalid++
    if (msg.kind === "wmcp-top") {
      if (typeof msg.sessionId !== "string" || !HEX8.test(msg.sessionId)) return void c.invalid++
      if (msg.sessionId === this.sessionId) return void c.own++
      if (msg.gone === true) return
      if (msg.uplink === true) {
        this.direct.add(msg.sessionId)
        this.pending.delete(msg.sessionId)
      }
      if (!this.peers.has(msg.sessionId)) {
        // A new peer missed our first announcement: say it again (once per peer).
        this.peers.add(msg.sessionId)
        this.announce()
      }
      return
    }
    let sessionId
    let payload
    if (msg.kind === "span") {
      payload = validateSpan(msg.span)
      if (!payload) return void c.invalid++
      sessionId = payload.sessionId
    } else if (msg.kind === "update") {
      if (typeof msg.sessionId !== "string" || !HEX8.test(msg.sessionId) || !nonNegInt(msg.seq) || !nonNeg(msg.blockingMs)) return void c.invalid++
      sessionId = msg.sessionId
      payload = { sessionId, seq: msg.seq, blockingMs: msg.blockingMs }
    } else return void c.invalid++
    if (sessionId === this.sessionId) return void c.own++
    if (this.direct.has(sessionId)) return void c.direct++
    const held = this.pending.get(sessionId)
    if (held) {
      c.accepted++
      // Everything said in the settle window is forwarded on release (the feed's ring keeps the newest 500
      // and counts the rest as lost); beyond twice that it is dropped here, and counted.
      if (held.length < 2 * MAX_FOREIGN_SPANS) held.push(msg.kind === "span" ? { span: payload } : { update: payload })
      else c.heldDropped++
      return
    }
    if (!this.sessions.has(sessionId)) {
      if (msg.kind !== "span") return void c.invalid++ // an update for a session we never saw
      if (this.sessions.size + this.pending.size >= MAX_FOREIGN_SESSIONS) return void c.sessionCap++
      c.accepted++
      this.pending.set(sessionId, [{ span: payload }])
      this.st(() => safely(() => this.release(sessionId)), this.settleMs)
      return
    }
    c.accepted++
    this.deliver(sessionId, msg.kind === "span" ? { span: payload } : { update: payload })
  }

  /** settleMs passed without an announcement: forward the session and what it said meanwhile. */
  release(sessionId) {
    const held = this.pending.get(sessionId)
    if (!held || this.direct.has(sessionId)) return
    this.pending.delete(sessionId)
    if (!this.uplink) return // no socket to forward on
    this.sessions.set(sessionId, 0)
    this.onSession(sessionId)
    for (const m of held) this.deliver(sessionId, m)
  }

  deliver(sessionId, m) {
    if (m.span) {
      this.sessions.set(sessionId, this.sessions.get(sessionId) + 1)
      this.onSpan(m.span)
    } else this.onUpdate(m.update)
  }

  close() {
    if (!this.bc) return
    this.flush()
    if (this.uplink) this.announce(true)
    safely(() => this.bc.close())
    this.bc = null
  }
}
return { MAX_FOREIGN_SESSIONS, MAX_FOREIGN_SPANS, MAX_OUTBOX, validateSpan, PROFILER_FIELDS, READ_ONLY, terminalRoute, postsSpans, profilerSpan, ChannelMirror };
})();

// ---- page/console.js ----
__m["page/console"] = (function () {
// window.__webmcpPerf: the console API, the report document, and the get_perf_report tool's views.

const { fmtBytes, fmtCount, fmtMs, traceEvents } = __m["page/stats"];
const { VERSION } = __m["shared/config"];
const { safely, utf8Length } = __m["shared/util"];
const { PROFILER_FIELDS } = __m["page/channel"];
/** The 000 span fields, in order: report v2 spans carry exactly these (the objects are closed). */
const SPAN_FIELDS = PROFILER_FIELDS
const SPAN_FACTS = ["resultType", "envelope", "substituted", "depth", "parent", "overlapped", "errorType", "refusal", "consent", "consentMismatch", "invokedBy"]

const pick = (o, keys) => {
  const out = {}
  for (const k of keys) out[k] = o[k]
  return out
}

const MEMBERS = {
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
  table: "console.table of the per-tool rows, rounded for reading",
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

/** One line per span field (describe().span). */
const SPAN_DOCS = {
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
const LEDGER_DOCS = {
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
const CONFIG_DOCS = {
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
const GATE_MODES = {
  1: "on, remembered for this origin (also on, true)",
  overlay: "on and remembered, with the pointer to the terminal",
  0: "off for this load; forgets the remembered mode (also off, false)",
}

/** The get_perf_report tool's views and what each costs to read. */
const REPORT_VIEWS = {
  summary: "session line, split and one line per tool; well under 1 KB",
  tools: "summary plus every per-tool row",
  spans: "tools plus the newest spans, newest first (limit 1..500, default 50; tool and since filter)",
}

const PRIVACY = [
  "spans hold sizes, shapes, timings, tool names and (per errorPolicy) error messages; never inputs or results",
  "spans leave the page only to same-origin tabs (BroadcastChannel; relay: false stops it) and to the loopback wmcp-top relay (uplink: false stops it)",
  "same-origin scripts can read the global and the channel: use globalName: false and relay: false for production telemetry through onSpan",
]

/** describe(): webmcp-profiler's manifest shape, for this agent. */
function manifest(cfg, { toolName = null, uplink = null, settings = null } = {}) {
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
function buildReport(agent, opts = {}) {
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
function splitLine(stats) {
  const full = stats.summary()
  return stats.schemaBytes ? full : full.slice(full.indexOf(" \u00b7 ") + 3)
}

/** One per-tool line of summary(), laid out as webmcp-profiler lays it out. */
function toolLine(r) {
  return (
    `  ${r.tool.padEnd(22)} ${String(r.calls).padStart(3)} calls \u00b7 p50 ${fmtMs(r.p50Ms)} \u00b7 p95 ${fmtMs(r.p95Ms)}` +
    ` \u00b7 last ${fmtBytes(r.lastResultBytes)} (~${fmtCount(r.estTokens)} tok)${r.errors ? ` \u00b7 \u2717${r.errors}` : ""}`
  )
}

/**
 * summary(): webmcp-profiler's layout. A session line (`wmcp-top \u00b7 session ID \u00b7 PHASE \u00b7 N tools \u00b7 N calls`), the
 * split, then one line per tool with spans. Sizes and times only.
 */
function buildSummary(agent) {
  const c = agent.collector.current()
  const s = c.status()
  const lines = [`wmcp-top \u00b7 session ${c.sessionId} \u00b7 ${s.phase} \u00b7 ${s.toolCount} tools \u00b7 ${s.callCount} calls`, splitLine(c.stats)]
  for (const r of c.stats.reportRows()) lines.push(toolLine(r))
  return lines.join("\n")
}

/**
 * The get_perf_report tool's answer, in webmcp-profiler's shape: `content` (the summary text) and
 * `structuredContent {ok, format, session, status, totals, split, tools?, spans?, truncated?, meta}`.
 */
function reportView(agent, input) {
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

/** The report tool's descriptor (profilerTool() and registerReportTool() both use it). */
function reportToolDescriptor(execute, { name = "get_perf_report", title = "Performance report" } = {}) {
  return {
    name,
    title,
    description:
      "This page's WebMCP performance, measured by wmcp-top: execute() time per tool, result bytes and estimated tokens, " +
      "and the host + model gaps between calls. Views: " +
      Object.entries(REPORT_VIEWS)
        .map(([k, v]) => `${k} (${v})`)
        .join("; ") +
      ". Ask for summary first; spans only when single calls matter.",
    inputSchema: {
      type: "object",
      properties: {
        view: { type: "string", enum: Object.keys(REPORT_VIEWS), default: "summary", description: "how much to return" },
        tool: { type: "string", description: "only this tool" },
        limit: { type: "integer", minimum: 1, maximum: 500, default: 50, description: "spans view: the newest N spans" },
        since: { type: "integer", minimum: 0, description: "spans view: only spans with a higher seq" },
      },
      additionalProperties: false,
    },
    annotations: { title, readOnlyHint: true },
    execute,
  }
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
function helpText(s) {
  const lines = [`wmcp-top agent ${s.message.charAt(0).toLowerCase()}${s.message.slice(1)}`, ...s.hints.map((h) => `  \u2192 ${h}`), ""]
  for (const [k, v] of Object.entries(MEMBERS)) lines.push(`  ${k.padEnd(18)} ${v}`)
  return lines.join("\n")
}

/**
 * webmcp-profiler's `overlay` option and `overlay()` open an in-page panel. Here the panel is the terminal: one
 * console line says so (and how to start it), instead of a TypeError or silence.
 */
function overlayNotice(cfg, g) {
  const name = cfg.globalName || "__webmcpPerf"
  safely(() => g.console.info(`[wmcp-top] no in-page overlay: the numbers are shown in the terminal (run \`wmcp-top\`); in this console: ${name}.summary()`))
}

/** Build the console API over an attached agent (see index.js). */
function makeApi(agent) {
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
      const rows = c.current().stats.reportRows().map((r) => ({
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
      const t = traceEvents(c.current().stats.spans(), { sessionId: c.sessionId, origin: agent.env.origin, timeOrigin: safely(() => g.performance.timeOrigin, 0) || 0 })
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
return { SPAN_FIELDS, SPAN_FACTS, MEMBERS, SPAN_DOCS, LEDGER_DOCS, CONFIG_DOCS, GATE_MODES, REPORT_VIEWS, manifest, buildReport, splitLine, buildSummary, reportView, reportToolDescriptor, helpText, overlayNotice, makeApi };
})();

// ---- page/collector.js ----
__m["page/collector"] = (function () {
// The collector: one session's calls, spans, ring buffer, ledger, Long-Task attribution, phases.
//
// The call path (enter/settle) does only clock reads and pushes; results are measured later, the calls of
// one batch window together (`flush`), after the host already has its value. Everything that leaves this
// module goes through `sink` (see index.js): the channel mirror and the uplink.

const { SessionStats, callTokens, tokensForBytes, imageTokens } = __m["page/stats"];
const { resultFacts, inputBytesOf, errorText, resultText, inputText, errorResultFacts } = __m["page/measure"];
const { defaultRefusal, refusalOf, consentMismatch, consentDetail, cutPayload } = __m["page/hooks"];
const { now, safely, cap, makeTaskScheduler } = __m["shared/util"];
const { NATIVE_THEN } = __m["page/wrap"];
const { statusFor } = __m["page/status"];
const { batchWindow, QUIET_WAIT_MS } = __m["transport/pacing"];
const { splitLine } = __m["page/console"];
const RECENT_MAX = 256
const MAX_LEDGER_TOOLS = 1024
const RECENT_MS = 60_000
const HOOK_EVENTS_MAX = 32 // hook-failed events per hook and session; later failures are only counted
const MAX_PAYLOAD = 65536
// Accounting held while the page awaits an executeTool (scheduleFlush): at most this long, this many calls.
const HOLD_MS = 500
const HOLD_CALLS = 64

// A microtask through the engine's own promise machinery: a reaction on a promise already resolved is queued at
// once, exactly where queueMicrotask would queue it, without Blink's binding (about 9 \u00b5s a call in Chromium 156
// on these machines, measured in a CPU profile of back-to-back calls). Captured: a page replacing
// Promise.prototype.then later does not reach us.
const RESOLVED = Promise.resolve()
const enqueueMicrotask = (fn) => NATIVE_THEN.call(RESOLVED, fn)

/**
 * @typedef {object} Call  one execute() in flight (or settled and awaiting accounting)
 * @property {number} seq
 * @property {string} tool
 * @property {number} invokedAt
 * @property {number|null} settledAt
 * @property {number|null} gap
 * @property {boolean} overlapped
 * @property {number} depth
 * @property {number|null} parent
 * @property {number} blocking  Long-Task ms attributed so far
 * @property {object|null} span once emitted
 * @property {boolean} [waiting]  a form call waiting for the user's submit
 * @property {boolean} [waitingSent]  the uplink told the relay it was waiting (its submit gets a start too)
 * @property {boolean} [ok]  execute() resolved (false: it threw or was refused)
 * @property {any} [input]  the arguments, held only until accounting measured them
 * @property {any} [value]  what execute() settled with, likewise
 * @property {{consent: string, mismatch: boolean}|null} [consent]  what the page's recordConsent said of it
 * @property {boolean} [refused]  a form call the browser refused before the page ran (forms.js)
 * @property {"navigated"|"refused"} [outcome]  a form call's end other than an answer (forms.js)
 * @property {number} [waitedMs]  a form's wait for the user's submit
 * @property {boolean} [terminal]  started from wmcp-top, not by the page's agent
 * @property {boolean} [synthetic]
 * @property {string} [profile]
 */

class Collector {
  /**
   * @param {object} o
   * @param {string} o.sessionId
   * @param {{buffer:number, sample:number, errorPolicy:string, tokenEstimator?:Function, isErrorResult?:Function, isRefusal?:Function, capturePayloads?:boolean, maxPayloadLength?:number, fingerprintHandler?:boolean}} o.config
   * @param {object} o.sink  {start, span, update, evicted, tool, ledger, status, event}
   * @param {() => number} [o.clock]
   * @param {((fn: Function) => void) & {close?: () => void}} [o.schedule]  macrotask scheduler for deferred accounting
   * @param {() => number} [o.random]
   * @param {object} [o.perf]  `performance` (measure/clearMeasures)
   * @param {Function} [o.setTimeout]  for the deadline of accounting held while the page awaits a call
   * @param {Function} [o.clearTimeout]
   * @param {((fn: Function) => void)|null} [o.microtask]  queues a microtask (default: a reaction on a resolved promise; null: accounting always gets a task)
   * @param {number} [o.windowMs]  the quiet batch window calls are accounted in (inWindow, pacing.js; 0: none)
   */
  constructor({ sessionId, config, sink, clock, schedule, random, perf = globalThis.performance, setTimeout: st, clearTimeout: ct, microtask, windowMs = 0 }) {
    this.sessionId = sessionId
    // The id in async frame names (wrap.js `carry`): fixed for the page's life, so a call still running when the
    // session takes a new id (rename) is still found; never on the wire.
    this.frameId = sessionId
    this.config = config
    this.sink = sink
    this.clock = clock || now
    this.schedule = schedule || makeTaskScheduler()
    this.st = st || ((fn, ms) => setTimeout(fn, ms))
    this.ct = ct || ((t) => clearTimeout(t))
    this.microtask = microtask !== undefined ? microtask : enqueueMicrotask
    /** `executeTool` calls the page is awaiting (registry.js): accounting waits for them, see scheduleFlush */
    this.pageWaits = 0
    this.holdTimer = null
    /** the accounting's batch window (inWindow): its quiet length, its timer, whether it ran out, the last batch */
    this.windowMs = Number.isFinite(windowMs) && windowMs > 0 ? windowMs : 0
    this.windowTimer = null
    this.windowOver = false
    this.lastBatchAt = -Infinity
    /** after each accounting batch (`true`: its window ran out): the page's quiet moment, when batches leave (pacing.js) */
    this.onAccounted = null
    this.random = random || Math.random
    this.perf = perf
    this.active = true
    this.synthetic = false
    this.estimate = estimatorOf(config.tokenEstimator)
    this.stats = new SessionStats(config.buffer, (bytes) => this.estimate("text", bytes))
    this.seq = 0
    /** @type {Map<number, Call>} */
    this.inFlight = new Map()
    /** settled calls kept a while for late Long-Task attribution */
    this.recent = []
    this.open = 0
    this.lastSettledAt = null
    this.unsampled = 0
    /** @type {Call[]} synchronous execute() stack, for depth/parent */
    this.stack = []
    /** @type {{tool:string, parent:Call}[]} executeTool() calls made from inside a measured call, oldest first */
    this.expected = []
    this.frameRe = new RegExp(`__wmcp_${sessionId}_(\\d+)\\b`)
    this.pending = []
    this.flushScheduled = false
    this.spanListeners = new Set()
    this.updateListeners = new Set()
    // Ledger.
    this.attachedAt = Date.now()
    this.hostFoundAt = null
    this.hostLocation = null
    this.firstRegistrationAt = null
    this.firstCallAt = null
    /** @type {Map<string, object>} name -> tool record */
    this.tools = new Map()
    this.ledgerRev = 0
    // Coverage.
    this.wrapFailures = 0
    this.reportToolName = null
    this.unwrapped = new Set()
    /** tool name -> calls counted from `toolactivated` (tools the agent could not wrap) */
    this.counted = new Map()
    this.lostFn = () => 0
    this.extraReasons = new Set()
    /** hints of the agent's own, ahead of the phase's (a late window.__WMCP_CONFIG__, index.js) */
    this.notes = []
    this.lastPhase = null
    this.observer = null
    this.cost = { accounted: 0, ms: 0 }
    /** tool name -> tokens of calls the terminal asked for that have not entered yet (see expectTerminal) */
    this.terminalPending = new Map()
    /** tool name -> the consent recorded for its next call */
    this.consents = new Map()
    /** hook name -> times it threw */
    this.hookFailures = {}
    /** @type {{take: (job: object) => void, reset: () => void, stop: () => void}|null} the diagnosis facts (facts.js), set by the agent */
    this.facts = null
  }

  // ---- the call path ---------------------------------------------------------------------------------

  /**
   * execute() entered (or a form tool's call began). Returns the Call, or null when sampling left it
   * unmeasured. `opts.waiting`: a filled form waiting for the user's submit (forms.js); resumed() ends the wait.
   */
  enter(tool, input, profile, opts) {
    const t = this.clock()
    // A call the terminal asked for (`invoke` command) is measured, but it is not the agent's: it stays out of
    // the host-gap chain (no gap of its own, the next agent call's gap runs from the last agent call) and of
    // the overlap count, and sampling never drops it.
    const terminal = this.terminalPending.size > 0 && this.takeTerminal(tool)
    const overlapped = !terminal && this.open > 0
    if (!terminal) this.open++
    const gap = terminal || overlapped || this.lastSettledAt === null ? null : t - this.lastSettledAt
    const sample = this.config.sample
    if (!terminal && sample < 1 && !(this.random() < sample)) {
      this.unsampled++
      this.stats.setUnsampled(this.unsampled)
      if (overlapped) this.stats.totals.overlappingCalls++
      return null
    }
    const parent = this.stack.length ? this.stack[this.stack.length - 1] : this.takeExpected(tool)
    /** @type {Call} */
    const call = {
      seq: this.seq++,
      tool,
      invokedAt: t,
      settledAt: null,
      gap,
      overlapped,
      depth: parent ? Math.min(parent.depth + 1, 64) : 0,
      parent: parent ? parent.seq : null,
      blocking: 0,
      span: null,
      input,
      ok: true,
      value: undefined,
      synthetic: this.synthetic,
      profile,
      consent: null,
      terminal,
    }
    if (opts && opts.waiting) call.waiting = true
    if (this.consents.size) {
      const consent = this.consents.get(tool)
      if (consent) {
        this.consents.delete(tool)
        call.consent = consent
      }
    }
    this.inFlight.set(call.seq, call)
    if (this.firstCallAt === null) {
      this.firstCallAt = t
      this.statusChanged()
    }
    this.sink.start(call)
    return call
  }

  /**
   * A call that waited for the user (a form without toolautosubmit) was submitted at `t`: tool time starts
   * now, the wait is kept apart as waitedMs. A fresh `start` tells the relay.
   */
  resumed(call, t) {
    if (!call || !call.waiting) return
    call.waiting = false
    call.waitedMs = Math.max(0, t - call.invokedAt)
    call.invokedAt = t
    this.sink.start(call)
  }

  // ---- nesting across executeTool() and awaits -----------------------------------------------------------

  /** The name of the async frame that carries a call's promise (wrap.js `carry`). */
  frameName(seq) {
    return `__wmcp_${this.frameId}_${seq}`
  }

  /**
   * The measured call the current code runs inside: the synchronous stack's top, else the innermost call whose
   * carrier frame is in V8's async stack trace (code after an `await` in a tool's async function). Null when
   * neither says (code reached through setTimeout, a plain .then chain, or no tool at all).
   */
  callerOf() {
    if (this.stack.length) return this.stack[this.stack.length - 1]
    if (!this.inFlight.size) return null
    const E = Error
    let text = null
    const limit = E.stackTraceLimit
    try {
      E.stackTraceLimit = 64
      text = new E().stack
    } catch {
      text = null
    } finally {
      try {
        E.stackTraceLimit = limit
      } catch {
        /* a frozen Error: the page's limit stays */
      }
    }
    const m = typeof text === "string" ? this.frameRe.exec(text) : null
    return m ? this.inFlight.get(Number(m[1])) || null : null
  }

  /**
   * Page code is calling `executeTool(tool)`: when that code runs inside a measured call, the call the browser
   * is about to make of `tool` is its child. Returns a release for when executeTool settles, or null.
   */
  nestedCall(tool) {
    const parent = this.callerOf()
    if (!parent) return null
    const e = { tool, parent }
    this.expected.push(e)
    if (this.expected.length > 64) this.expected.shift()
    return () => {
      const i = this.expected.indexOf(e)
      if (i >= 0) this.expected.splice(i, 1)
    }
  }

  takeExpected(tool) {
    const i = this.expected.findIndex((e) => e.tool === tool)
    if (i < 0) return null
    return this.expected.splice(i, 1)[0].parent
  }

  /** execute() settled (returned, resolved, threw or rejected). `call` may be null (unsampled). */
  settle(call, ok, value) {
    const t = this.clock()
    if (!call || !call.terminal) {
      this.open = Math.max(0, this.open - 1)
      this.lastSettledAt = t
    }
    if (!call) return
    call.settledAt = t
    call.ok = ok
    call.value = value
    this.inFlight.delete(call.seq)
    this.pending.push(call)
    // An onSpan listener has its span before the caller's `await execute()` resumes, as webmcp-profiler's
    // (an exporter reads on settle): the accounting runs here, on the call path the page chose to pay. With no
    // listener the call path stays two clock reads and the accounting waits for its batch (scheduleFlush).
    if (this.spanListeners.size) this.flush()
    else this.scheduleFlush()
  }

  /**
   * The accounting runs as its own task after a call settles. When the page itself called the tool
   * (`executeTool`) and awaits the answer, that task would run while the browser carries the result back
   * to the page (a round trip through the browser process), and the page would wait for our serialising of
   * a 128 KB result too. So while the page awaits any executeTool, settled calls wait for the next answer
   * the page gets (`force`); at most HOLD_MS, and never more than HOLD_CALLS of them.
   */
  scheduleFlush(force = false) {
    if (this.flushScheduled || !this.pending.length) return
    if (this.pending.length < HOLD_CALLS && this.inWindow()) return
    if (!force && this.pageWaits > 0 && this.pending.length < HOLD_CALLS) {
      // One deadline timer at a time, left to run out rather than cleared and set again for every call. A batch
      // whose window ran out waits as long as the uplink's would (QUIET_WAIT_MS), and then goes in that task.
      if (this.holdTimer === null) this.holdTimer = safely(() => this.st(() => {
        this.holdTimer = null
        if (this.windowOver) this.flush()
        else this.scheduleFlush(true)
      }, this.windowOver ? QUIET_WAIT_MS : HOLD_MS), null)
      if (this.holdTimer !== null) return
    }
    this.flushScheduled = true
    // After the page's answer the accounting may run in this very task, behind the page's own continuation
    // (a microtask queued now runs after the ones already queued): no task of its own to wake for.
    if (force && this.microtask) this.microtask(() => safely(() => this.flush()))
    else this.schedule(() => this.flush())
  }

  /**
   * Calls are accounted in the batch window they would leave in (pacing.js: `windowMs` after a quiet spell,
   * up to 250 ms while the page keeps calling), all together when it runs out, and what they produce leaves
   * at once (onAccounted): true while the window holds them. Then the batch goes as any other (behind the
   * page's answer while the page awaits a call). Code run once every 10 ms runs cold, and the same accounting
   * for 25 calls in one go runs warm: a page calling 100 times a second pays the whole agent 0.7 to 1.1
   * points of a core less (the README's "What watching costs the page").
   */
  inWindow() {
    if (this.windowTimer !== null) return true
    if (!this.windowMs || this.windowOver) return false
    this.windowTimer = safely(() => this.st(() => {
      this.windowTimer = null
      this.windowOver = true
      // in this very task, unless the page awaits an answer (then right after it has it, scheduleFlush)
      if (this.pageWaits > 0) this.scheduleFlush()
      else this.flush()
    }, batchWindow(this.windowMs, this.clock(), this.lastBatchAt)), null)
    return this.windowTimer !== null
  }

  /** Is a call under way: running, settled and not yet accounted, or its answer on the way to the page? */
  calling() {
    return this.inFlight.size > 0 || this.pending.length > 0 || this.pageWaits > 0
  }

  /** The page called `executeTool` and awaits it: returns the function to call when it has its answer. */
  pageWait() {
    this.pageWaits++
    let done = false
    return () => {
      if (done) return
      done = true
      if (this.pageWaits > 0) this.pageWaits--
      this.scheduleFlush(true)
    }
  }

  /**
   * The terminal is about to call `tool` (an `invoke` command): its next call of that tool is marked
   * `invokedBy: "terminal"`. Returns a function that withdraws the mark if the call never entered.
   */
  expectTerminal(tool) {
    const token = { used: false }
    const queue = this.terminalPending.get(tool) || []
    queue.push(token)
    this.terminalPending.set(tool, queue)
    return () => {
      if (token.used) return
      token.used = true
      const q = this.terminalPending.get(tool)
      const i = q ? q.indexOf(token) : -1
      if (i >= 0) q.splice(i, 1)
      if (q && !q.length) this.terminalPending.delete(tool)
    }
  }

  takeTerminal(tool) {
    const q = this.terminalPending.get(tool)
    if (!q || !q.length) return false
    q.shift().used = true
    if (!q.length) this.terminalPending.delete(tool)
    return true
  }

  /**
   * For the uplink's `floor`: the lowest seq that will still become a span (in flight, or settled and
   * awaiting accounting), or null; and the next seq to be given out.
   */
  openSeqs() {
    let open = null
    for (const seq of this.inFlight.keys()) if (open === null || seq < open) open = seq
    for (const call of this.pending) if (open === null || call.seq < open) open = call.seq
    return { open, next: this.seq }
  }

  // ---- deferred accounting ---------------------------------------------------------------------------

  /** Measure every settled call: serialise, count, emit. Runs as its own task, after the host has the value. */
  flush() {
    this.flushScheduled = false
    const batch = this.pending
    if (!batch.length) return
    this.pending = []
    const windowed = this.windowOver || this.windowTimer !== null
    if (this.windowTimer !== null) safely(() => this.ct(this.windowTimer))
    this.windowTimer = null
    this.windowOver = false
    const t0 = now()
    this.lastBatchAt = this.clock()
    for (const call of batch) safely(() => this.account(call))
    this.ledgerChanged()
    // The agent's own cost, off the call path (overhead() reports it).
    this.cost.accounted += batch.length
    this.cost.ms += now() - t0
    if (this.onAccounted) safely(() => this.onAccounted(windowed))
  }

  account(call) {
    const policy = this.config.errorPolicy
    let facts
    let isError
    let error = null
    let errorType = null
    let refusal = null
    const cfg = this.config
    if (call.outcome === "navigated") {
      // The form's submission left the document: the calling document's executeTool gets null, the agent nothing.
      facts = { resultBytes: 0, resultType: "null", envelope: false, substituted: false, contentTypes: {}, imageBytes: 0, serializable: true }
      isError = false
    } else if (call.ok) {
      facts = resultFacts(call.value, call.profile)
      isError = facts.isError
      if (!facts.serializable && isError) error = errorText({ name: "TypeError", message: "result could not be serialised to JSON" }, policy)
      else if (facts.validation) error = errorText({ name: "ValidationError", message: `the form answered with ${facts.validation} validation message(s)` }, policy)
      else if (isError) error = errorText({ name: "Error", message: "isError result" }, policy)
      // A failure a tool library returned as prose (001's isErrorResult): the agent still reads the value.
      if (!isError && typeof cfg.isErrorResult === "function") {
        let flagged = false
        try {
          flagged = !!cfg.isErrorResult(call.value)
        } catch (e) {
          this.hookFailed("isErrorResult", call, e)
        }
        if (flagged) {
          isError = true
          errorType = "tool_error"
          error = errorText({ name: "Error", message: "the tool returned a failure (isErrorResult)" }, policy)
        }
      }
      if (typeof cfg.isRefusal === "function") {
        try {
          refusal = refusalOf(cfg.isRefusal(call.value))
        } catch (e) {
          this.hookFailed("isRefusal", call, e)
        }
      } else refusal = safely(() => defaultRefusal(call.value), null)
    } else {
      // A throw reaches an MCP client as an isError result with bytes of its own; other callers get no result.
      facts = safely(() => errorResultFacts(call.value, call.profile), null) || { resultBytes: 0, resultType: "error", envelope: false, substituted: false, contentTypes: {}, imageBytes: 0, serializable: true }
      isError = true
      error = errorText(call.value, policy)
      if (policy !== "none") errorType = errorText(call.value, "name").slice(0, 64)
    }
    const inputBytes = inputBytesOf(call.input)
    const est = this.config.tokenEstimator ? this.pageTokens(inputBytes, facts.resultBytes, facts.imageBytes) : callTokens(inputBytes, facts.resultBytes, facts.imageBytes)
    // Opt-in payload capture: the text goes to the relay's OpenTelemetry lane, ahead of the span.
    if (cfg.capturePayloads === true && this.sink.payload) {
      const max = payloadMax(cfg.maxPayloadLength)
      const args = inputText(call.input)
      const res = call.ok ? resultText(call.value, call.profile) : null
      // A thrown error's message rides along (001's webmcp.error.message, capture on only).
      const err = call.ok ? null : safely(() => {
        const v = call.value
        return v && typeof v === "object" && typeof v.message === "string" ? v.message : String(v)
      }, null)
      safely(() => this.sink.payload({ seq: call.seq, arguments: args === null ? null : cutPayload(args, max), result: res === null ? null : cutPayload(res, max), error: err ? cutPayload(err, max) : null }))
    }
    // Facts for the diagnosis (facts.js): the bodies are handed over, measured in a later idle callback.
    if (this.facts && !call.terminal) {
      const ok = call.ok && call.outcome !== "navigated"
      safely(() => this.facts.take({ seq: call.seq, tool: call.tool, input: call.input, value: ok ? call.value : undefined, ok, profile: call.profile, refused: !!call.refused }))
    }
    // Drop the bodies now: only sizes travel on.
    call.input = undefined
    call.value = undefined
    call.profile = undefined
    const span = {
      sessionId: this.sessionId,
      seq: call.seq,
      tool: call.tool,
      invokedAt: call.invokedAt,
      settledAt: call.settledAt,
      wallMs: Math.max(0, call.settledAt - call.invokedAt),
      blockingMs: call.blocking,
      inputBytes,
      resultBytes: facts.resultBytes,
      contentTypes: facts.contentTypes,
      imageBytes: facts.imageBytes,
      estInputTokens: est.estInputTokens,
      estTextTokens: est.estTextTokens,
      estImageTokens: est.estImageTokens,
      estTokens: est.estTokens,
      isError,
      error,
      gapSincePrevCallMs: call.gap,
      synthetic: call.synthetic,
      serializable: facts.serializable,
      resultType: facts.resultType,
      envelope: facts.envelope,
      substituted: facts.substituted,
      depth: call.depth,
      parent: call.parent,
      overlapped: call.overlapped,
      errorType,
      refusal,
      consent: call.consent ? call.consent.consent : null,
      consentMismatch: call.consent ? call.consent.mismatch : null,
    }
    // Declarative (form) calls: how long the filled form waited for the user's submit (not tool time), and
    // "navigated" when the submission left the document.
    if (call.waitedMs !== undefined) span.waitedMs = call.waitedMs
    if (call.outcome) span.outcome = call.outcome
    if (call.terminal) {
      span.invokedBy = "terminal"
      span.synthetic = true // not a live host's call (000's meaning), also for the channel's readers
    }
    call.span = span
    this.remember(call)
    const evicted = this.stats.add(span)
    safely(() => this.perf && this.perf.measure(measureName(span), { start: span.invokedAt, end: span.settledAt }))
    if (evicted) {
      safely(() => this.perf && this.perf.clearMeasures(measureName(evicted)))
      this.sink.evicted(evicted)
    }
    for (const fn of this.spanListeners) safely(() => fn(span))
    this.sink.span(span)
  }

  /** Tokens through the page's tokenEstimator (000's `({kind, bytes}) => number`), one ask per kind. */
  pageTokens(inputBytes, resultBytes, imageBytes) {
    const estInputTokens = this.estimate("input", inputBytes)
    const estTextTokens = this.estimate("text", Math.max(0, resultBytes - imageBytes))
    const estImageTokens = imageBytes ? this.estimate("image", imageBytes) : 0
    return { estInputTokens, estTextTokens, estImageTokens, estTokens: estInputTokens + estTextTokens + estImageTokens }
  }

  remember(call) {
    const r = this.recent
    r.push(call)
    const cutoff = this.clock() - RECENT_MS
    while (r.length > RECENT_MAX || (r.length && r[0].settledAt < cutoff)) r.shift()
  }

  // ---- Long Tasks --------------------------------------------------------------------------------------

  /** Start observing Long Tasks where the browser has them (Chromium). */
  observeLongTasks(PO = globalThis.PerformanceObserver) {
    if (typeof PO !== "function") return
    safely(() => {
      if (PO.supportedEntryTypes && !PO.supportedEntryTypes.includes("longtask")) return
      const obs = new PO((list) => safely(() => this.longTasks(list.getEntries())))
      obs.observe({ type: "longtask", buffered: false })
      this.observer = obs
    })
  }

  /**
   * Attribute each Long-Task millisecond to the most recently invoked call in flight at that moment, so
   * no millisecond counts twice. Calls already emitted get a late `update`.
   * @param {{startTime:number, duration:number}[]} entries
   */
  longTasks(entries) {
    const touched = new Map()
    for (const e of entries) {
      const s = e.startTime
      const end = s + e.duration
      const cands = []
      const consider = (c) => {
        const cEnd = c.settledAt === null ? Infinity : c.settledAt
        if (c.invokedAt < end && cEnd > s) cands.push(c)
      }
      for (const c of this.inFlight.values()) consider(c)
      for (const c of this.pending) consider(c)
      for (const c of this.recent) consider(c)
      if (!cands.length) continue
      const cuts = new Set([s, end])
      for (const c of cands) {
        if (c.invokedAt > s && c.invokedAt < end) cuts.add(c.invokedAt)
        if (c.settledAt !== null && c.settledAt > s && c.settledAt < end) cuts.add(c.settledAt)
      }
      const points = Array.from(cuts).sort((a, b) => a - b)
      for (let i = 0; i + 1 < points.length; i++) {
        const a = points[i]
        const b = points[i + 1]
        let best = null
        for (const c of cands) {
          const cEnd = c.settledAt === null ? Infinity : c.settledAt
          if (c.invokedAt <= a && cEnd >= b && (!best || c.invokedAt > best.invokedAt || (c.invokedAt === best.invokedAt && c.seq > best.seq))) best = c
        }
        if (best) {
          best.blocking += b - a
          touched.set(best.seq, best)
        }
      }
    }
    for (const c of touched.values()) {
      if (!c.span) continue
      this.stats.updateBlocking(c.seq, c.blocking)
      c.span.blockingMs = c.blocking
      for (const fn of this.updateListeners) safely(() => fn({ sessionId: this.sessionId, seq: c.seq, blockingMs: c.blocking }))
      this.sink.update(c.seq, c.blocking)
    }
    if (touched.size) this.ledgerChanged()
  }

  // ---- registry ----------------------------------------------------------------------------------------

  hostFound(location) {
    if (this.hostFoundAt !== null) return
    this.hostFoundAt = this.clock()
    this.hostLocation = location
    this.ledgerChanged()
    this.statusChanged()
  }

  /**
   * A tool was registered. `rec`: {name, schemaBytes, descriptor (JSON text|null), annotationsSent,
   * annotationsKept, internal}. `frame` false: listed now, its tool frame waits for keptAnnotations().
   */
  registered(rec, frame = true) {
    const t = typeof rec.acceptedAt === "number" ? rec.acceptedAt : this.clock()
    if (this.firstRegistrationAt === null && !rec.internal) this.firstRegistrationAt = t
    const prev = this.tools.get(rec.name)
    const full = { ...rec, registered: true, registeredAt: t, unregisteredAt: null }
    if (prev && prev.registered && prev.registeredAt !== null) full.registeredAt = prev.registeredAt
    // Redefinition (001): the same name again with another descriptor, or another handler source when the
    // fingerprint is on. The tool frame says so by carrying the new descriptor; this event names what moved.
    if (prev && !rec.internal) {
      // The fingerprint covers the descriptor (and the handler under fingerprintHandler, whose own hash the
      // record keeps in the page to say which of the two moved).
      const descriptor = (prev.descriptor ?? null) !== (rec.descriptor ?? null) || (!prev.handlerHash && (prev.fingerprint ?? null) !== (rec.fingerprint ?? null))
      const handler = (prev.handlerHash ?? null) !== (rec.handlerHash ?? null)
      if (descriptor || handler) {
        full.redefined = true
        this.event("redefined", { tool: rec.name, descriptor, handler })
      } else full.redefined = !!prev.redefined
    }
    this.tools.set(rec.name, full)
    this.stats.register(rec.name, rec.schemaBytes, !!rec.internal)
    if (frame) this.sink.tool(full, "registered")
    else full.framePending = true
    this.ledgerChanged()
    this.statusChanged()
  }

  /** The host said which annotations it kept of a tool listed with registered(rec, false): its frame leaves now. */
  keptAnnotations(name, kept) {
    const rec = this.tools.get(name)
    if (!rec || !rec.framePending) return
    rec.framePending = false
    rec.annotationsKept = kept
    this.sink.tool(rec, "registered")
  }

  /** Record a registration the host refused (duplicate name, invalid schema): not a tool. */
  rejected(rec, err) {
    this.sink.tool({ ...rec, rejected: cap(errorText(err, "message") || "rejected", 200) }, "registered")
  }

  unregistered(name) {
    const rec = this.tools.get(name)
    if (!rec || !rec.registered) return
    rec.registered = false
    rec.unregisteredAt = this.clock()
    this.stats.unregister(name)
    this.sink.tool(rec, "unregistered")
    this.ledgerChanged()
    this.statusChanged()
  }

  /** A tool the host lists that was registered before the agent could wrap it. */
  unwrappedTool(name) {
    if (this.unwrapped.has(name)) return
    this.unwrapped.add(name)
    this.statusChanged()
  }

  wrapFailed(name) {
    this.wrapFailures++
    this.event("wrap-failed", { tool: cap(name, 128) })
    this.statusChanged()
  }

  /**
   * A call of a tool the agent cannot measure (see Interceptor.activated): counted per tool, with its time on
   * the timeline. No span, no timing, no bytes: the tool is "counted, not measured".
   */
  countedCall(name) {
    if (!this.counted.has(name) && this.counted.size >= MAX_LEDGER_TOOLS) return
    this.counted.set(name, (this.counted.get(name) || 0) + 1)
    this.event("toolactivated", { tool: name, counted: true })
    this.ledgerChanged()
    this.statusChanged()
  }

  /** A toolcancel from the host: a marker on the newest call in flight of that tool. */
  toolCancel(name) {
    let seq = null
    for (const c of this.inFlight.values()) if (c.tool === name && (seq === null || c.seq > seq)) seq = c.seq
    this.event("toolcancel", { tool: cap(String(name), 128), seq })
  }

  /** A page hook threw: recorded (bounded) and ignored; the call is accounted as if there were no hook. */
  hookFailed(hook, call, err) {
    const n = (this.hookFailures[hook] = (this.hookFailures[hook] || 0) + 1)
    if (n > HOOK_EVENTS_MAX) return
    this.event("hook-failed", { hook, tool: call.tool, seq: call.seq, error: errorText(err, "name"), count: n })
  }

  /**
   * The page reports the consent dialogue the host showed (001's recordConsent): an event now, and the
   * consent on the next span of the resolved tool. Returns the event detail.
   */
  recordConsent(shown, resolved, granted) {
    const name = cap(String(resolved), 128)
    const rec = this.tools.get(name)
    let descriptor = null
    if (rec && rec.descriptor) descriptor = safely(() => JSON.parse(rec.descriptor), null)
    const mismatch = consentMismatch(shown ?? "", name, descriptor)
    const detail = consentDetail(shown, name, granted, mismatch)
    this.consents.set(name, { consent: granted ? "granted" : "denied", mismatch })
    if (this.consents.size > 256) this.consents.delete(this.consents.keys().next().value)
    this.event("consent", detail)
    return { ...detail }
  }

  event(kind, detail = {}) {
    // Calls that settled before this moment enter the timeline first (their accounting may be waiting
    // behind the page's own continuation, see scheduleFlush), so the timeline keeps the page's order.
    if (this.pending.length) this.flush()
    this.sink.event({ at: this.clock(), kind, detail })
  }

  // ---- read --------------------------------------------------------------------------------------------

  /**
   * Finish pending accounting now, so a read right after `await tool.execute(x)` counts that call (000's
   * quick start). The call path stays as it is: accounting still runs off it, only earlier when someone reads.
   */
  /**
   * The session goes on under a new id (the relay refused the first hello: another socket holds this one).
   * Every held span is re-stamped, so what the relay did not have yet goes under the new id.
   * @param {string} id
   */
  rename(id) {
    this.sessionId = id
    for (const span of this.stats.ring.values()) span.sessionId = id
  }

  current() {
    if (this.pending.length) this.flush()
    return this
  }

  ledger() {
    const tools = {}
    const registeredTools = []
    // The wire caps the map at 1024 tools: the registered ones first, then the withdrawn ones.
    const all = Array.from(this.tools)
    const ordered = all.filter(([, r]) => r.registered).concat(all.filter(([, r]) => !r.registered)).slice(0, MAX_LEDGER_TOOLS)
    for (const [name, r] of ordered) {
      tools[name] = { schemaBytes: r.schemaBytes, registeredAt: r.registeredAt, unregisteredAt: r.unregisteredAt, internal: !!r.internal }
      // Counted, not measured: calls seen through `toolactivated` only (no timing, no bytes).
      if (this.unwrapped.has(name)) tools[name].measured = false
      if (this.counted.has(name)) tools[name].counted = this.counted.get(name)
      if (r.registered) registeredTools.push(name)
    }
    return {
      sessionId: this.sessionId,
      attachedAt: this.attachedAt,
      hostFoundAt: this.hostFoundAt,
      hostLocation: this.hostLocation,
      firstRegistrationAt: this.firstRegistrationAt,
      registeredTools,
      tools,
      firstCallAt: this.firstCallAt,
      lastSettledAt: this.lastSettledAt,
      totals: this.stats.totalsObject(),
    }
  }

  ledgerChanged() {
    this.ledgerRev++
    this.sink.ledger()
  }

  /**
   * Phase, sentence, hints and coverage, from the state alone. `split`: the measuring sentence carries the
   * split (the console's and the report tool's); the status frame leaves it out, so it changes with the phase only.
   */
  status(split = true) {
    const reasons = []
    if (this.wrapFailures) reasons.push(`${this.wrapFailures} tool execute() could not be wrapped`)
    let countedCalls = 0
    for (const n of this.counted.values()) countedCalls += n
    if (this.unwrapped.size) {
      let n = 0
      for (const name of this.unwrapped) n += this.counted.get(name) || 0
      reasons.push(`${this.unwrapped.size} tool(s) registered before the agent loaded are counted, not measured (${n} call(s) counted from toolactivated)`)
    }
    const lost = this.lostFn()
    if (lost) reasons.push(`${lost} span(s) evicted before the relay stored them`)
    for (const r of this.extraReasons) reasons.push(r)
    let toolCount = 0
    let own = false
    for (const r of this.tools.values()) {
      if (!r.registered) continue
      toolCount++
      if (!r.internal) own = true
    }
    const s = statusFor({
      active: this.active,
      hostFound: this.hostFoundAt !== null,
      registered: own,
      anyCall: this.firstCallAt !== null || this.unsampled > 0,
      countedCalls,
      reasons,
      inFlight: this.inFlight.size,
      countedOnly: this.unwrapped.size > 0,
      hostLocation: this.hostLocation,
      split: split ? splitLine(this.stats) : null,
      hints: this.notes,
    })
    // 000's status fields beside the phase and coverage.
    return {
      phase: s.phase,
      message: s.message,
      hostLocation: this.hostLocation,
      hostFoundAt: this.hostFoundAt,
      toolCount,
      callCount: this.stats.totals.calls,
      lastCallAt: this.lastSettledAt,
      hints: s.hints,
      coverage: s.coverage,
      reasons: s.reasons,
    }
  }

  statusChanged() {
    this.sink.status()
  }

  /**
   * Clear spans and totals (the registry stays; seq keeps counting). Pending accounting is finished first;
   * spans the relay has not stored leave the ring as evictions do. A "reset" event tells the relay.
   */
  reset() {
    this.flush()
    this.sink.beforeReset()
    for (const span of this.stats.ring.values()) {
      safely(() => this.perf && this.perf.clearMeasures(measureName(span)))
      this.sink.evicted(span)
    }
    this.stats.reset()
    if (this.facts) safely(() => this.facts.reset())
    this.counted.clear()
    this.lastSettledAt = null
    this.unsampled = 0
    this.recent = []
    this.event("reset", { nextSeq: this.seq })
    this.ledgerChanged()
  }

  stop() {
    this.active = false
    if (this.holdTimer !== null) safely(() => this.ct(this.holdTimer))
    this.holdTimer = null
    if (this.windowTimer !== null) safely(() => this.ct(this.windowTimer))
    this.windowTimer = null
    if (this.observer) safely(() => this.observer.disconnect())
    this.observer = null
    if (this.facts) safely(() => this.facts.stop())
    if (this.schedule.close) safely(() => this.schedule.close())
  }
}

function payloadMax(v) {
  return Number.isInteger(v) && v > 0 ? Math.min(v, MAX_PAYLOAD) : 2048
}

const measureName = (span) => `webmcp:${span.tool}#${span.seq}`

/**
 * (kind, bytes) -> tokens through a page's tokenEstimator, webmcp-profiler's `({kind, bytes}) => number` with
 * kind "input" | "text" | "image" (bytes: base64 length for images). A throw or a value that is not a finite
 * number >= 0 falls back to the built-in estimate; results are whole tokens.
 */
function estimatorOf(fn) {
  const builtIn = (kind, bytes) => (kind === "image" ? imageTokens(bytes) : tokensForBytes(bytes))
  if (typeof fn !== "function") return builtIn
  return (kind, bytes) => {
    let v
    try {
      v = fn({ kind, bytes })
    } catch {
      v = undefined
    }
    return typeof v === "number" && Number.isFinite(v) && v >= 0 ? Math.ceil(v) : builtIn(kind, bytes)
  }
}
return { Collector, measureName };
})();

// ---- page/traps.js ----
__m["page/traps"] = (function () {
// Registries (and the Prompt API's LanguageModel) that arrive after the agent started: seen at the moment they
// are installed, before their first registration can run (the 250 ms poll alone lets a polyfill and the page's tools slip in between two ticks).
//
// How the real packages install one (@mcp-b/webmcp-polyfill and @mcp-b/global 5.1.0, read in their dist/):
//   - the polyfill: Object.defineProperty(Document.prototype, "modelContext", {get}) and a deprecated
//     navigator getter (which warns once when read);
//   - @mcp-b/global: Object.defineProperty(document | navigator, "modelContext", {value: server}).
// No setter runs for a defineProperty, so an accessor trap alone would never see them: the agent wraps
// Object.defineProperty, Object.defineProperties and Reflect.defineProperty, and after a define of
// `modelContext` on one of the watched objects (the define itself untouched, its result returned as is) tells
// the interceptor synchronously. A page assigning `window.modelContext = registry` (a page-made registry) goes
// through an accessor trap on window, configurable so a later defineProperty still replaces it.
// document and navigator get no accessor of ours where they have no modelContext: `"modelContext" in navigator`
// is how pages detect WebMCP, and it must keep answering false there.

const { safely } = __m["shared/util"];
const KEY = "modelContext"
// The Prompt API's factories (prompt.js) installed late the same way: defined on window, not assigned to a
// setter of ours (`"LanguageModel" in window` is how pages detect the Prompt API: no accessor there).
const LATE = [KEY, "LanguageModel", "ai"]
const isLate = (key) => LATE.includes(key)

/**
 * Watch `g` (the window) for registries installed late. `onChange()` runs synchronously after each install.
 * Returns restore(): puts back every original still in place (a page's own later replacement is left alone).
 * @param {any} g
 * @param {() => void} onChange
 */
function watchRegistries(g, onChange) {
  const restore = []
  const O = g.Object
  const R = g.Reflect
  if (!O || typeof O.defineProperty !== "function") return () => {}
  const define = O.defineProperty
  const protoOf = (ctor) => safely(() => (typeof ctor === "function" ? ctor.prototype : null), null)
  const watched = [g, safely(() => g.document, null), safely(() => g.navigator, null), protoOf(g.Document), protoOf(g.Navigator)].filter(Boolean)
  const isWatched = (target) => watched.includes(target)
  const tell = () => safely(onChange)

  /** Replace obj[name] with `fn` (same name and length), restored only while it is still ours. */
  const swap = (obj, name, fn) => {
    if (!obj || typeof obj[name] !== "function") return
    const own = Object.getOwnPropertyDescriptor(obj, name)
    const original = obj[name]
    safely(() => {
      define(fn, "name", { value: original.name, configurable: true })
      define(fn, "length", { value: original.length, configurable: true })
    })
    try {
      define(obj, name, { value: fn, writable: true, configurable: true, enumerable: own ? own.enumerable : false })
    } catch {
      return
    }
    restore.push(() => {
      if (obj[name] !== fn) return
      if (own) define(obj, name, own)
    })
  }

  const defineProperty = function (target, key, descriptor) {
    const r = define(target, key, descriptor)
    if (isLate(key) && isWatched(target)) tell()
    return r
  }
  swap(O, "defineProperty", defineProperty)

  const defineProperties = O.defineProperties
  if (typeof defineProperties === "function") {
    swap(O, "defineProperties", function (target, props) {
      const r = defineProperties.call(O, target, props)
      if (isWatched(target) && safely(() => props !== null && typeof props === "object" && LATE.some((k) => Object.prototype.hasOwnProperty.call(props, k)), false)) tell()
      return r
    })
  }

  const reflectDefine = R && R.defineProperty
  if (typeof reflectDefine === "function") {
    swap(R, "defineProperty", function (target, key, descriptor) {
      const r = reflectDefine.call(R, target, key, descriptor)
      if (r && isLate(key) && isWatched(target)) tell()
      return r
    })
  }

  // window.modelContext = registry: a setter that keeps the value and tells. Only where window has none yet.
  if (safely(() => !(KEY in g), false)) {
    let value
    const trap = {
      get() {
        return value
      },
      set(v) {
        value = v
        tell()
      },
      configurable: true,
      enumerable: false,
    }
    try {
      define(g, KEY, trap)
      restore.push(() => {
        const d = Object.getOwnPropertyDescriptor(g, KEY)
        if (!d || d.get !== trap.get) return
        delete g[KEY]
        if (value !== undefined) g[KEY] = value // the page's own registry stays where it put it
      })
    } catch {
      /* a frozen window: the poll still looks */
    }
  }

  return () => {
    for (const f of restore.reverse()) safely(f)
    restore.length = 0
  }
}

/** Is `fn` one of the engine's own functions (a built-in getter), whose call runs no page code? */
function isNativeFunction(fn) {
  if (typeof fn !== "function") return false
  const src = safely(() => Function.prototype.toString.call(fn), "")
  return /\{\s*\[native code\]\s*\}\s*$/.test(src)
}
return { watchRegistries, isNativeFunction };
})();

// ---- page/interceptor.js ----
__m["page/interceptor"] = (function () {
// The interceptor: find modelContext registries (document, navigator, window), however late; patch
// registerTool / unregisterTool / provideContext / clearContext / executeTool on the instance; wrap each tool's execute
// in place before the host sees it (Chromium captures execute at registration). detach() restores all.

const { wrapExecute, isWrapper, originalOf, isInternal, isPlainPromise, NATIVE_THEN } = __m["page/wrap"];
const { descriptorFingerprint, fnv1a32, sourceOf } = __m["page/hooks"];
const { utf8Length, safely, cap, isScalar, listenWhile } = __m["shared/util"];
const { watchRegistries, isNativeFunction } = __m["page/traps"];
const LOCATIONS = ["document", "navigator", "window"]
const METHODS = ["registerTool", "unregisterTool", "provideContext", "clearContext", "executeTool"]
const MAX_DESCRIPTOR = 64 * 1024

/** Descriptor facts of a tool: the text the host ships to the model anyway (never a body). */
function describeTool(tool) {
  const d = {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: tool.inputSchema,
    annotations: tool.annotations,
  }
  let text = null
  try {
    text = JSON.stringify(d)
  } catch {
    text = null
  }
  const schemaBytes = typeof text === "string" ? utf8Length(text) : 0
  return {
    schemaBytes,
    descriptor: text !== null && schemaBytes <= MAX_DESCRIPTOR ? text : null,
    annotationsSent: scalars(tool.annotations),
  }
}

/**
 * The descriptor a page registered, from the host's copy of it (getTools()): schema bytes are then the same
 * whichever route saw the tool. The host adds an empty `title` and every annotation it knows at false; those are
 * dropped, and an inputSchema listed as JSON text is read back as the object it was. Annotations the host dropped
 * cannot be recovered. relay_bridge.core.measure.registered_descriptor is the same rule (tests/vectors/schema.json).
 */
function registeredShape(listed) {
  /** @type {Record<string, any>} */
  const out = {}
  for (const key of ["name", "title", "description", "inputSchema", "annotations"]) {
    let value = listed[key]
    if (value === undefined || value === null) continue
    if (key === "title" && value === "") continue
    if (key === "inputSchema" && typeof value === "string") {
      try {
        value = JSON.parse(value)
      } catch {
        // kept as the host listed it
      }
    }
    if (key === "annotations" && typeof value === "object") {
      const kept = Object.fromEntries(Object.entries(value).filter(([, v]) => v !== false))
      if (!Object.keys(kept).length) continue
      value = kept
    }
    out[key] = value
  }
  return out
}

/** The scalar entries of an annotations object (at most 16), or null. */
function scalars(obj) {
  if (!obj || typeof obj !== "object") return null
  const out = {}
  let n = 0
  for (const k of Object.keys(obj)) {
    if (n >= 16) break
    const v = obj[k]
    if (!isScalar(v) || k.length > 64) continue
    out[k] = typeof v === "string" ? cap(v, 200) : v
    n++
  }
  return out
}

/** A tool name as the wire takes it: 1..128 code points. */
const toolName = (name) => cap(String(name), 128) || "(unnamed)"

/** How this host serialises results (see measure.js): the polyfill marks its instances. */
function profileOf(host) {
  return host && safely(() => host.__isWebMCPPolyfill === true, false) ? "mcp-b" : "chromium"
}

class Interceptor {
  /**
   * @param {import("./collector.js").Collector} collector
   * @param {object} [o]
   * @param {object} [o.global]  the window (globalThis)
   * @param {number} [o.pollMs]
   * @param {Function} [o.setInterval]
   * @param {Function} [o.clearInterval]
   */
  constructor(collector, { global: g = globalThis, pollMs = 250, setInterval: si = globalThis.setInterval, clearInterval: ci = globalThis.clearInterval } = {}) {
    this.c = collector
    this.g = g
    this.pollMs = pollMs
    this.si = si
    this.ci = ci
    this.timer = null
    /** listed: getTools() has answered; activations: the `toolactivated` listener (countActivations)
     * @type {Map<object, {location:string, restore:Function[], names:Set<string>, listed:boolean, activations:?object}>} */
    this.hosts = new Map()
    /** tool object -> {original, wrapper} for in-place wraps */
    this.wrapped = new Map()
    /** name -> {host, tool, wrapper, passed} of the live registration */
    this.live = new Map()
    this.busy = 0 // inside provideContext/clearContext: nested calls pass through
    this.gen = 0 // bumps on every accepted registration (reconcile ignores newer ones)
    this.epoch = 0 // bumps on every registration change the agent saw
    /** name -> epoch of its last change: a getTools() answer older than that is stale for the name */
    this.changed = new Map()
    /** names whose registration the host has not answered yet */
    this.pendingNames = new Map()
    this.onFound = null
    this.onSweep = null
    /** the declarative tools (forms.js): names it owns are not "registered before the agent" */
    this.forms = null
    /** [host, name] of each patched registerTool running its host's original: a registration of the same
     * name on another registry meanwhile is that host's mirror (@mcp-b/global's server copies each tool onto
     * the native registry); any other name is a registration of its own */
    this.mirroring = []
    /** name -> the host holding a mirror of our registration: not the page's tool a second time */
    this.mirrors = new Map()
    /** name -> native calls entered through a mirror whose page function has not run yet (profileFor) */
    this.nativeCalls = new Map()
    this.unwatch = null
    /** tools on an MCP server registered before the agent: their MCP-client calls reach no wrapper */
    this.unseen = new Set()
    this.unseenReason = null
  }

  /**
   * A tool @mcp-b/global's server took before the agent arrived: the server keeps its own copy of the page's
   * function, out of reach, and runs it for an MCP client's tools/call without any event. Those calls are
   * not even counted: the status says so, with what works for such a page.
   */
  unseenPath(name) {
    this.unseen.add(name)
    if (this.unseenReason) this.c.extraReasons.delete(this.unseenReason)
    this.unseenReason = `${this.unseen.size} tool(s) on @mcp-b/global's MCP server were registered before the agent: MCP-client calls to them (tools/call over postMessage) are not seen at all; load the agent before @mcp-b/global (first in <head>), or use the extension or \`wmcp-top open URL\``
    this.c.extraReasons.add(this.unseenReason)
    this.c.statusChanged()
  }

  start() {
    // A registry installed later (a polyfill, @mcp-b/global's server, a page's own) is patched the moment it
    // is defined, before the page can register on it (traps.js); the poll stays for what no trap sees.
    this.unwatch = watchRegistries(this.g, () => {
      if (this.c.active) this.sweep()
    })
    this.sweep()
    if (!this.hasDocumentHost()) this.timer = this.si(() => safely(() => this.sweep()), this.pollMs)
  }

  hasDocumentHost() {
    for (const h of this.hosts.values()) if (h.location === "document") return true
    return false
  }

  /** Look for registries; patch the new ones. Stops polling once document.modelContext is found. */
  sweep() {
    let docHost = null
    for (const loc of LOCATIONS) {
      const owner = loc === "window" ? this.g : this.g[loc]
      if (!owner) continue
      let host
      try {
        // navigator.modelContext is a deprecated alias: a polyfill's getter for it warns when read. Read it
        // only where it is the engine's own, or where document has no registry to stand for it.
        if (loc === "navigator" && docHost && !plainOrNative(owner, "modelContext")) continue
        host = owner.modelContext
      } catch {
        continue
      }
      if (loc === "document" && host && typeof host === "object") docHost = host
      if (!host || (typeof host !== "object" && typeof host !== "function") || this.hosts.has(host)) continue
      if (typeof host.registerTool !== "function" && typeof host.provideContext !== "function") continue
      this.patch(host, loc)
    }
    if (this.onSweep) safely(() => this.onSweep())
    if (this.timer !== null && this.hasDocumentHost()) {
      this.ci(this.timer)
      this.timer = null
    }
  }

  patch(host, location) {
    const entry = { location, restore: [], names: new Set(), originals: {}, listed: false, activations: null }
    this.hosts.set(host, entry)
    this.c.hostFound(location)
    const self = this
    for (const m of METHODS) {
      const original = host[m]
      if (typeof original !== "function") continue
      entry.originals[m] = original
      const own = Object.getOwnPropertyDescriptor(host, m)
      const patched = {
        registerTool(tool, options) {
          if (self.busy || !self.c.active) return original.apply(this, arguments)
          if (self.mirroring.length && self.isMirror(host, tool)) return self.mirror(host, original, this, arguments, tool)
          return self.registerTool(host, original, this, arguments, tool, options)
        },
        unregisterTool(name) {
          const ret = original.apply(this, arguments)
          if (!self.busy && self.c.active) safely(() => self.dropName(host, String(name), undefined, true))
          return ret
        },
        provideContext(context) {
          if (self.busy || !self.c.active) return original.apply(this, arguments)
          return self.provideContext(host, original, this, arguments, context)
        },
        // A tool calling another tool: the call the browser makes next is this caller's child (collector.js).
        // The page awaiting a call holds the accounting until it has its answer (Collector.scheduleFlush); only
        // the engine's own promises are watched, so no page `then` runs for our sake.
        executeTool(tool) {
          if (!self.c.active) return original.apply(this, arguments)
          const release = safely(() => self.c.nestedCall(toolName(typeof tool === "string" ? tool : tool && tool.name)), null)
          let ret
          try {
            ret = original.apply(this, arguments)
          } catch (err) {
            if (release) release()
            throw err
          }
          if (isPlainPromise(ret)) {
            const answered = self.c.pageWait()
            const done = () => {
              answered()
              if (release) release()
            }
            safely(() => NATIVE_THEN.call(ret, done, done))
          } else if (release) {
            if (ret && typeof ret.then === "function") safely(() => ret.then(release, release))
            else release()
          }
          return ret
        },
        clearContext() {
          self.busy++
          let ret
          try {
            ret = original.apply(this, arguments)
          } finally {
            self.busy--
          }
          if (self.c.active) safely(() => self.contextCleared(host))
          return ret
        },
      }[m]
      try {
        Object.defineProperty(host, m, { value: patched, writable: true, configurable: true, enumerable: own ? own.enumerable : false })
        entry.restore.push(() => {
          if (host[m] !== patched) return // someone replaced it after us: leave theirs
          if (own) Object.defineProperty(host, m, own)
          else delete host[m]
        })
      } catch {
        this.c.wrapFailed(m)
      }
    }
    if (typeof host.addEventListener === "function") {
      const onChange = () => safely(() => this.reconcile(host))
      const onCancel = (e) => safely(() => this.c.toolCancel(e && (e.toolName || e.name || (e.detail && e.detail.toolName)) || ""))
      const onActivated = (e) => safely(() => this.activated(e && typeof e.toolName === "string" ? e.toolName : ""))
      safely(() => {
        host.addEventListener("toolchange", onChange)
        host.addEventListener("toolcancel", onCancel)
        entry.restore.push(() => {
          host.removeEventListener("toolchange", onChange)
          host.removeEventListener("toolcancel", onCancel)
        })
      })
      // Until getTools() first answers whether a tool was registered before us, every call is heard; then only
      // while one is counted rather than measured (countActivations). A host that never lists keeps listening.
      entry.activations = listenWhile(host, "toolactivated", onActivated)
      entry.activations.want(true)
      entry.restore.push(() => entry.activations.want(false))
    }
    // Tools registered before we arrived: listed, not wrapped (use instrument()).
    this.reconcile(host)
    if (this.onFound) safely(() => this.onFound(host, location))
    // @mcp-b/global's server stands in front of the registry it mirrors onto (the native one, or the strict
    // polyfill's): patched too, so its toolactivated counts the native calls of tools we could not wrap.
    const behind = mcpServerOf(host) ? safely(() => host.native, null) : null
    if (behind && typeof behind === "object" && typeof behind.registerTool === "function" && !this.hosts.has(behind)) this.patch(behind, location)
  }

  /**
   * Listen for `toolactivated` only while the host lists a tool whose calls it would count (activated): one the
   * host runs unwrapped, even after instrument() wrapped the page's own object. Chromium fires it for every
   * call, and a listener costs each call of a wrapped tool too (about 20 \u00b5s of the page's main thread, the
   * README's "What watching costs the page").
   */
  countActivations() {
    let wanted = false
    for (const [name, live] of this.live) {
      if (!live.wrapper && name !== this.c.reportToolName && !(live.rec && live.rec.internal)) {
        wanted = true
        break
      }
    }
    for (const entry of this.hosts.values()) if (entry.activations && entry.listed) entry.activations.want(wanted)
  }

  /**
   * The host is about to run `name` (Chromium fires `toolactivated` for every call, before execute). A tool
   * the agent wrapped is measured by its span: not counted again here. One it could not wrap (registered
   * before the agent loaded, or an execute it could not replace) is counted: a call and its time, no more.
   */
  activated(name) {
    if (!name || name === this.c.reportToolName || this.pendingNames.has(name)) return
    if (this.forms && this.forms.tools.has(name)) return // a declarative tool: measured by forms.js
    const live = this.live.get(toolName(name))
    if (live && live.wrapper) return
    this.c.countedCall(toolName(name))
  }

  /** Wrap `tool.execute` in place; when the object refuses, register a copy. Returns what to hand the host. */
  prepare(tool, host) {
    if (!tool || typeof tool !== "object" || typeof tool.execute !== "function" || typeof tool.name !== "string") return { passed: tool, wrapper: null }
    if (isInternal(tool)) return { passed: tool, wrapper: null }
    const current = tool.execute
    if (isWrapper(current)) return { passed: tool, wrapper: current }
    // A polyfill registers each declarative form through registerTool: its execute answers with what the page
    // gave respondWith (validation messages included), serialised the polyfill's way.
    const form = this.forms ? this.forms.formOf(tool.name) : null
    const wrapper = wrapExecute(this.c, toolName(tool.name), current, form ? "mcp-b-form" : this.profileFor(host, tool.name))
    try {
      tool.execute = wrapper
    } catch {
      /* frozen or a getter without setter */
    }
    if (tool.execute === wrapper) {
      this.wrapped.set(tool, { original: current, wrapper })
      return { passed: tool, wrapper }
    }
    try {
      const copy = { ...tool, name: tool.name, title: tool.title, description: tool.description, inputSchema: tool.inputSchema, annotations: tool.annotations, execute: wrapper }
      for (const k of Object.keys(copy)) if (copy[k] === undefined) delete copy[k]
      return { passed: copy, wrapper }
    } catch {
      this.c.wrapFailed(tool.name)
      return { passed: tool, wrapper: null }
    }
  }

  record(tool, internal = false) {
    const name = toolName(tool.name)
    /** @type {Record<string, any>} */
    const rec = { name, ...describeTool(tool), annotationsKept: null, internal }
    const form = !internal && this.forms ? this.forms.formOf(tool.name) : null
    if (form) Object.assign(rec, { kind: "form", form: this.forms.factsOf(form, tool.inputSchema) })
    // 001's descriptor fingerprint (webmcp.tool.descriptor), with the handler's source folded in only under
    // `fingerprintHandler` (off by default: a bundled handler moves on every load), so a swapped function under
    // an identical descriptor still counts as a redefinition. The page's function, never our wrapper.
    if (!internal) {
      const withHandler = this.c.config.fingerprintHandler === true
      const fp = safely(() => descriptorFingerprint(withHandler ? { ...tool, execute: originalOf(tool.execute) } : tool, withHandler), null)
      if (fp) rec.fingerprint = fp
      // Kept in the page only: tells the `redefined` event whether the handler moved too.
      if (withHandler) rec.handlerHash = safely(() => fnv1a32(sourceOf(originalOf(tool.execute)) ?? ""), null)
    }
    return rec
  }

  registerTool(host, original, thisArg, args, tool, options) {
    let prep
    let rec = null
    try {
      prep = this.prepare(tool, host)
      if (prep.passed && typeof prep.passed === "object" && typeof tool.name === "string" && tool.name) rec = this.record(tool, isInternal(tool))
    } catch {
      prep = { passed: tool, wrapper: null }
    }
    const a = Array.prototype.slice.call(args)
    a[0] = prep.passed
    if (rec) this.pend(rec.name, 1)
    let ret
    this.mirroring.push([host, rec ? rec.name : null])
    try {
      ret = original.apply(thisArg, a)
    } catch (err) {
      if (rec) {
        this.pend(rec.name, -1)
        safely(() => this.refused(tool, rec, err))
      }
      throw err
    } finally {
      this.mirroring.pop()
    }
    if (!rec) return ret
    const ok = () => {
      this.pend(rec.name, -1)
      safely(() => this.accepted(host, tool, prep, rec, options))
    }
    const bad = (err) => {
      this.pend(rec.name, -1)
      safely(() => this.refused(tool, rec, err))
    }
    if (ret && typeof ret.then === "function") {
      try {
        ret.then(ok, bad)
      } catch {
        ok()
      }
    } else ok()
    return ret
  }

  pend(name, d) {
    const n = (this.pendingNames.get(name) || 0) + d
    if (n > 0) this.pendingNames.set(name, n)
    else this.pendingNames.delete(name)
  }

  accepted(host, tool, prep, rec, options) {
    const signal = options && options.signal
    // Aborted before the host accepted it: the host drops it, and so does the ledger (webmcp-profiler's rule).
    if (signal && safely(() => signal.aborted === true, false)) return this.unwrap(tool, rec.name)
    // Stamped when the host accepted it: the annotations read below arrive a little later.
    rec.acceptedAt = this.c.clock()
    const entry = this.hosts.get(host)
    if (entry) entry.names.add(rec.name)
    // Reported to the collector once the host says which annotations it kept (getTools() can take a round trip
    // to the browser process), or at once when the tool is withdrawn before that answer.
    const live = { host, tool, wrapper: prep.wrapper, since: ++this.gen, rec, reported: false }
    this.live.set(rec.name, live)
    this.changed.set(rec.name, ++this.epoch)
    if (!prep.wrapper && !rec.internal) this.c.unwrappedTool(rec.name)
    else if (this.c.unwrapped.delete(rec.name)) this.c.statusChanged()
    this.countActivations()
    if (signal && typeof signal.addEventListener === "function") {
      const onAbort = () => safely(() => this.dropName(host, rec.name, tool, true))
      safely(() => signal.addEventListener("abort", onAbort, { once: true }))
    }
    // Listed now, as webmcp-profiler lists it on acceptance; its tool frame waits for the annotations kept.
    this.c.registered(rec, false)
    this.withKept(host, rec.name, (kept) => {
      if (live.reported || this.live.get(rec.name) !== live) return
      live.reported = true
      this.c.keptAnnotations(rec.name, kept)
    })
  }

  /** Put the page's execute back on a tool that no registration holds any more (webmcp-profiler's unregister). */
  unwrap(tool, name) {
    const w = this.wrapped.get(tool)
    if (!w) return
    for (const l of this.live.values()) if (l.tool === tool) return
    for (const e of this.hosts.values()) if (e.names.has(name)) return
    safely(() => {
      if (tool.execute === w.wrapper) tool.execute = w.original
    })
    this.wrapped.delete(tool)
  }

  refused(tool, rec, err) {
    // A refused registration keeps nothing of ours: put the page's execute back.
    const w = this.wrapped.get(tool)
    const live = this.live.get(rec.name)
    if (w && !(live && live.tool === tool)) {
      safely(() => {
        if (tool.execute === w.wrapper) tool.execute = w.original
      })
      this.wrapped.delete(tool)
    }
    this.c.rejected(rec, err)
  }

  /** Ask the host's getTools() what it kept of this tool's annotations; `done(null)` when it cannot say. */
  withKept(host, name, done) {
    let finished = false
    const finish = (v) => {
      if (finished) return
      finished = true
      done(v)
    }
    if (typeof host.getTools !== "function") return finish(null)
    try {
      const r = host.getTools()
      const read = (list) => {
        const t = Array.isArray(list) ? list.find((x) => x && x.name === name && this.ownFrame(x)) : null
        finish(t ? scalars(t.annotations) || {} : null)
      }
      if (r && typeof r.then === "function") r.then(read, () => finish(null))
      else read(r)
    } catch {
      finish(null)
    }
  }

  provideContext(host, original, thisArg, args, context) {
    const tools = context && Array.isArray(context.tools) ? context.tools : []
    const preps = tools.map((t) => {
      try {
        return { tool: t, ...this.prepare(t, host), rec: t && typeof t.name === "string" && t.name ? this.record(t) : null }
      } catch {
        return { tool: t, passed: t, wrapper: null, rec: null }
      }
    })
    let passedContext = context
    if (preps.some((p) => p.passed !== p.tool)) passedContext = { ...context, tools: preps.map((p) => p.passed) }
    const a = Array.prototype.slice.call(args)
    a[0] = passedContext
    this.busy++
    let ret
    try {
      ret = original.apply(thisArg, a)
    } finally {
      this.busy--
    }
    const done = () =>
      safely(() => {
        // One event for the replacement, then the withdrawals and the new registrations it stands for.
        const entry = this.hosts.get(host)
        const withdrawn = entry ? entry.names.size : 0
        this.c.event("context-provide", { tools: preps.filter((p) => p.rec).length, withdrawn, host: entry ? entry.location : "unknown" })
        this.dropAll(host)
        for (const p of preps) if (p.rec) this.accepted(host, p.tool, p, p.rec, null)
      })
    if (ret && typeof ret.then === "function") ret.then(done, () => {})
    else done()
    return ret
  }

  /** `unwrap`: an unregistration by the page (unregisterTool, its signal): the tool gets its execute back. */
  dropName(host, name, tool, unwrap = false) {
    const live = this.live.get(name)
    if (!live || live.host !== host || (tool && live.tool !== tool)) return
    if (live.rec && !live.reported) {
      live.reported = true
      this.c.keptAnnotations(name, null)
    }
    this.live.delete(name)
    this.mirrors.delete(name)
    this.changed.set(name, ++this.epoch)
    const entry = this.hosts.get(host)
    if (entry) entry.names.delete(name)
    this.c.unregistered(name)
    if (!live.wrapper) this.countActivations()
    if (unwrap && live.tool) this.unwrap(live.tool, name)
  }

  /** clearContext succeeded on `host`: one event, then each tool withdrawn. */
  contextCleared(host) {
    const entry = this.hosts.get(host)
    this.c.event("context-clear", { withdrawn: entry ? entry.names.size : 0, host: entry ? entry.location : "unknown" })
    this.dropAll(host)
  }

  /**
   * Where a terminal `invoke` can call `name`: the browser's own executeTool (with the host's RegisteredTool
   * from getTools()) when the host has one, else the tool object the page registered (its wrapped execute).
   * Resolves to {via, call: (input) => Promise<any>, profile} or null when no host lists the tool.
   */
  async invoker(name) {
    const hosts = Array.from(this.hosts.entries()).sort((a, b) => Number(b[1].location === "document") - Number(a[1].location === "document"))
    for (const [host] of hosts) {
      if (typeof host.executeTool !== "function" || typeof host.getTools !== "function") continue
      let list = null
      try {
        list = await host.getTools()
      } catch {
        list = null
      }
      const t = Array.isArray(list) ? list.find((x) => x && x.name === name && this.ownFrame(x)) : null
      if (!t) continue
      // @mcp-b/global's server hands executeTool to the registry behind it: that one decides the input's form.
      const profile = profileOf(mcpServerOf(host) ? safely(() => host.native, null) || host : host)
      // The polyfill's executeTool takes the input as JSON text; Chromium's takes the object.
      return { via: "executeTool", text: true, call: (input) => host.executeTool(t, profile === "mcp-b" ? JSON.stringify(input ?? {}) : input ?? {}) }
    }
    const live = this.live.get(name)
    if (live && live.tool && typeof live.tool.execute === "function") {
      const tool = live.tool
      const fn = live.wrapper || tool.execute
      return { via: "execute", text: false, profile: profileOf(live.host), call: (input) => fn.call(tool, input ?? {}, {}) }
    }
    return null
  }

  dropAll(host) {
    const entry = this.hosts.get(host)
    if (!entry) return
    for (const name of Array.from(entry.names)) this.dropName(host, name)
  }

  /** On toolchange: names the host no longer lists are unregistered; unknown names are flagged unwrapped. */
  reconcile(host) {
    if (typeof host.getTools !== "function" || !this.c.active) return
    const genAtCall = this.gen
    const epochAtCall = this.epoch
    let r
    try {
      r = host.getTools()
    } catch {
      return
    }
    const apply = (list) =>
      safely(() => {
        if (!Array.isArray(list) || !this.c.active) return
        const names = new Set()
        const entry = this.hosts.get(host)
        if (this.forms && this.forms.host === host) this.forms.sync(list)
        for (const t of list) {
          if (!t || typeof t.name !== "string" || !t.name || !this.ownFrame(t)) continue
          names.add(t.name)
          if (this.mirrors.get(t.name) === host) continue // our registration's copy on this host
          if (this.forms && this.forms.owns(t.name)) continue
          if (this.live.has(t.name) || this.pendingNames.has(t.name) || t.name === this.c.reportToolName) continue
          if ((this.changed.get(t.name) || 0) > epochAtCall) continue // the list predates our own news of it
          // Registered before the agent could wrap it: listed, not measured (instrument() retrofits).
          const name = toolName(t.name)
          this.live.set(name, { host, tool: null, wrapper: null, since: ++this.gen })
          if (entry) entry.names.add(name)
          this.c.registered({ name, ...describeTool(registeredShape(t)), annotationsKept: scalars(t.annotations) || {}, internal: false })
          this.c.unwrappedTool(name)
          if (mcpServerOf(host)) this.unseenPath(name)
        }
        if (entry) {
          for (const name of Array.from(entry.names)) {
            const live = this.live.get(name)
            if (!names.has(name) && live && live.since <= genAtCall) this.dropName(host, name)
          }
          entry.listed = true
        }
        this.countActivations()
      })
    if (r && typeof r.then === "function") r.then(apply, () => {})
    else apply(r)
  }

  /**
   * Retrofit tools registered before the agent: a {name: tool} map, an array, or one tool. Wraps each
   * execute in place; returns how many were newly wrapped.
   */
  instrument(target) {
    if (!target || typeof target !== "object") return 0
    let list
    if (Array.isArray(target)) list = target.map((t) => [t && t.name, t])
    else if (typeof target.execute === "function") list = [[target.name, target]]
    else list = Object.keys(target).map((k) => [k, target[k]])
    let n = 0
    for (const [key, tool] of list) {
      if (!tool || typeof tool !== "object" || typeof tool.execute !== "function") continue
      const name = typeof tool.name === "string" && tool.name ? tool.name : String(key)
      if (isWrapper(tool.execute)) continue
      const original = tool.execute
      const wrapper = wrapExecute(this.c, toolName(name), original)
      try {
        tool.execute = wrapper
      } catch {
        /* refused */
      }
      if (tool.execute !== wrapper) {
        this.c.wrapFailed(name)
        continue
      }
      this.wrapped.set(tool, { original, wrapper })
      n++
      const live = this.live.get(name)
      if (live && !live.tool) live.tool = tool
      const rec = this.c.tools.get(name)
      if (this.c.unwrapped.has(name)) {
        this.c.unwrapped.delete(name)
        this.c.statusChanged()
      }
      if (!rec || !rec.registered) this.c.registered({ name: toolName(name), ...describeTool({ ...tool, name }), annotationsKept: null, internal: false })
    }
    return n
  }

  /** Is this registration, made inside a patched registerTool, the outer one's copy (same name, other host)? */
  isMirror(host, tool) {
    const outer = this.mirroring[this.mirroring.length - 1]
    const name = safely(() => (tool && typeof tool.name === "string" ? toolName(tool.name) : null), null)
    return outer[0] !== host && outer[1] !== null && outer[1] === name
  }

  /**
   * A registration made while a patched registerTool was running its host's original: that host's copy of
   * the tool on another registry (@mcp-b/global's server registers a mirror on the native one, whose execute
   * runs the same page function the agent already wrapped). Passed through unwrapped, so a native call is
   * measured once, by the page function's wrapper; the copy is not listed as a second tool.
   */
  mirror(host, original, thisArg, args, tool) {
    const name = safely(() => (tool && typeof tool.name === "string" && tool.name ? toolName(tool.name) : null), null)
    if (name) {
      this.mirrors.set(name, host)
      // The mirror's execute only tells which caller the page function's next run answers (profileFor): a
      // native caller receives the host's serialisation, not the MCP envelope. It measures nothing itself.
      safely(() => {
        const run = tool.execute
        if (typeof run !== "function" || isWrapper(run)) return
        const calls = this.nativeCalls
        tool.execute = function () {
          calls.set(name, Math.min(64, (calls.get(name) || 0) + 1))
          return run.apply(this, arguments)
        }
      })
    }
    return original.apply(thisArg, args)
  }

  /**
   * How the caller of a tool registered on `host` receives its result. On @mcp-b/global's server one page
   * function answers two callers: a native executeTool (through the server's mirror: the registry behind it
   * serialises the value) and an MCP client's tools/call (the CallToolResult envelope, mcp_result.js). The
   * mirror counts its calls in; the page function's run after one is the native caller's, any other the MCP
   * client's. The page's own call of its tool object gets the value as is (sized as the registry behind would).
   */
  profileFor(host, name) {
    if (!mcpServerOf(host)) return profileOf(host)
    const behind = safely(() => host.native, null)
    const native = behind ? profileOf(behind) : "chromium"
    const key = toolName(name)
    const calls = this.nativeCalls
    const g = this.g
    return (self) => {
      // The server runs the page function as Reflect.apply(execute, undefined, [args]); the page calling its
      // own tool object (tool.execute(x)) has the tool as `this` and receives the value itself.
      if (self !== undefined && self !== g) return native
      const n = calls.get(key) || 0
      if (!n) return "mcp"
      if (n === 1) calls.delete(key)
      else calls.set(key, n - 1)
      return native
    }
  }

  /**
   * Is a getTools() entry this document's own? Chromium lists same-origin frames' tools too, each with the
   * `window` it lives in; an iframe's tools belong to the iframe's session, not to this one.
   */
  ownFrame(t) {
    const w = safely(() => t.window, undefined)
    return w === undefined || w === null || w === this.g
  }

  /** Put back every original: registry methods, listeners, tools' execute. Idempotent. */
  restore() {
    if (this.unwatch) safely(this.unwatch)
    this.unwatch = null
    if (this.timer !== null) {
      this.ci(this.timer)
      this.timer = null
    }
    for (const entry of this.hosts.values()) for (const f of entry.restore.reverse()) safely(f)
    for (const [tool, w] of this.wrapped) {
      safely(() => {
        if (tool.execute === w.wrapper) tool.execute = w.original
      })
    }
    this.wrapped.clear()
    this.hosts.clear()
    this.live.clear()
  }
}

/**
 * Is obj[key] a data property or the engine's own getter (reading it runs no page code)? Looked up along the
 * prototype chain, as a read would find it.
 */
function plainOrNative(obj, key) {
  let o = obj
  for (let i = 0; o && i < 16; i++) {
    const d = Object.getOwnPropertyDescriptor(o, key)
    if (d) return !d.get || isNativeFunction(d.get)
    o = Object.getPrototypeOf(o)
  }
  return true
}

/** Is `host` @mcp-b/global's BrowserMcpServer (it marks its instances)? */
function mcpServerOf(host) {
  return safely(() => host.__isBrowserMcpServer === true, false)
}
return { describeTool, registeredShape, scalars, toolName, profileOf, Interceptor };
})();

// ---- transport/frames.js ----
__m["transport/frames"] = (function () {
// @ts-check
// The wire protocol `wmcp-relay/1`, the agent's side: every frame it sends is built here, one constructor per
// frame, and every frame the relay sends is named here. It mirrors relay_bridge/core/protocol.py (the fields,
// their order, the optional ones left out rather than sent as null where protocol.py omits them);
// tests/relay/test_frames_mirror.py holds the two lists of frame types together. docs/protocol.md describes
// each field.

const PROTOCOL = "wmcp-relay/1"

/** What an agent sends (protocol.py's AgentFrame union), in the order protocol.py lists them. */
const AGENT_FRAMES = ["hello", "start", "spans", "update", "ledger", "tool", "status", "event", "payload", "prompt", "result", "facts", "bye"]
/** What the relay sends (protocol.py's Welcome, Ack, Command, Watch, ErrorFrame). */
const RELAY_FRAMES = ["welcome", "ack", "command", "watch", "error"]

/** The first frame of a session on a socket, again on every reconnect. */
function hello({ protocol = PROTOCOL, agent, session, config, lost, cadence = true }) {
  return { type: "hello", protocol, agent, session, config, lost, cadence }
}

/** Calls that began and have not settled (at most 500 a frame). */
function start(session, calls) {
  return { type: "start", session, calls }
}

/** Settled calls' spans; `lost` is the exact count the agent could not keep. */
/** A batch of spans; `facts` ({seq, facts} items ready when it left) ride along, applied after the spans. */
function spans(session, list, lost, facts) {
  const f = { type: "spans", session, spans: list, lost }
  if (facts && facts.length) f.facts = facts
  return f
}

/** A span's Long-Task blocking time, known after the span left. */
function update(session, seq, blockingMs) {
  return { type: "update", session, seq, blockingMs }
}

function ledger(session, rev, body) {
  return { type: "ledger", session, rev, ledger: body }
}

/**
 * A tool registered or unregistered, from the collector's record: its descriptor and facts ride along when
 * known (optional fields are left out, as protocol.py's defaults are).
 */
function tool(session, rec, change, at) {
  const f = {
    type: "tool",
    session,
    change,
    name: rec.name,
    at,
    schemaBytes: rec.schemaBytes || 0,
    annotationsSent: rec.annotationsSent ?? null,
    annotationsKept: rec.annotationsKept ?? null,
    internal: !!rec.internal,
  }
  if (rec.descriptor) {
    try {
      f.descriptor = JSON.parse(rec.descriptor)
    } catch {
      f.descriptor = null
    }
  }
  if (rec.rejected) f.rejected = rec.rejected
  if (rec.fingerprint) f.fingerprint = rec.fingerprint
  if (rec.kind) f.kind = rec.kind
  if (rec.form) f.form = rec.form
  return f
}

/** The session's phase, its sentence and hints, and coverage (status.js). */
function status(session, s) {
  return { type: "status", session, phase: s.phase, message: s.message, hints: s.hints, coverage: s.coverage, reasons: s.reasons }
}

function event(session, at, kind, detail) {
  return { type: "event", session, at, kind, detail }
}

/** Opt-in only (capturePayloads, and a relay that asked for payloads): a call's or a prompt's bodies. */
function payload(session, p) {
  return { type: "payload", session, ...p }
}

/** One Prompt API step (prompt.js): counts and times, never text. */
function prompt(session, step) {
  return { type: "prompt", session, ...step }
}

/** The answer to a terminal's `command` (an invoke), with the command's id. */
function result(session, id, fields) {
  return { type: "result", id, session, ...fields }
}

/** Diagnosis facts: one span's (`{seq, facts}`) or several (`items`) in one frame. */
function facts(session, seq, body) {
  return { type: "facts", session, seq, facts: body }
}

function factsItems(session, items) {
  return { type: "facts", session, items }
}

/** The session ends on this socket (tab hidden for good, detach, navigation). */
function bye(session, reason) {
  return { type: "bye", session, reason }
}

/** A relay-shaped error, for the extension's worker when it refuses on the relay's behalf (pipes.js). */
function error(code, message, fatal, session) {
  return { type: "error", code, message, fatal, session }
}
return { PROTOCOL, AGENT_FRAMES, RELAY_FRAMES, hello, start, spans, update, ledger, tool, status, event, payload, prompt, result, facts, factsItems, bye, error };
})();

// ---- transport/uplink.js ----
__m["transport/uplink"] = (function () {
// The uplink: one WebSocket to the relay, carrying one or more sessions (ours, and any relayed from the
// channel). hello first (again on every reconnect, same session id, current `lost`); the relay answers
// `ack {session, seq, above}` with what it holds, and we send every held span it does not hold, once per
// connection, whatever order the calls settled in. Spans stay in the ring buffer after sending, so a
// reconnect replays what the relay has not acked.
// Never throws into the page; while no relay is there it costs one timer.
//
// Ownership: the ack that answers our first hello carries `resume`, a secret only this page holds; every
// later hello for that session presents it, so no other socket can take the session over. A hello the relay
// refuses (too many sessions, `session_taken` while our old socket is still closing, a frame it could not
// read) is tried again after a backoff; `unknown_session` for a session it had accepted means the relay
// forgot it (restart): hello again at once.

const { FLUSH_MS, MAX_FLUSH_MS, BUSY_MS, QUIET_WAIT_MS, UNWATCHED_LEDGER_MS, batchWindow, isBusy, readWatch, unwatchedMark, unwatchedWindow } = __m["transport/pacing"];
const { safely } = __m["shared/util"];
const frames = __m["transport/frames"];
const { PROTOCOL } = __m["transport/frames"];
const MAX_SPANS_PER_FRAME = 500
const BACKOFF = [250, 500, 1000, 2000, 4000, 5000]
// The ledger (totals, registered tools, schema bytes) changes with every call but is read by a person: once a
// second is enough, and each frame is a send the page pays for.
const LEDGER_EVERY_MS = 1000
const MAX_QUEUED = 500
const RATE_PAUSE_MS = 500
// Refusals of data the relay did not keep (never acked): the rate cap, a memory cap or share, the session log
// behind. The spans stay held; after RATE_PAUSE_MS every one the relay has not acked goes again.
const RESEND_ON = new Set(["rate_limited", "limit", "log_full"])
// The console hears of refusals at most this often (the counters in __webmcpPerf.relay() count every one).
const WARN_EVERY_MS = 10000
// The batch window's constants, for the agent's config and the tests.

// History that nothing restates after a reconnect waits in the (bounded) queue; payloads and results do not.
const KEPT_OFFLINE = new Set(["event", "update", "prompt"])
// Facts (facts.js) leave after their span, batched: up to this many wait, oldest dropped first.
const MAX_FACTS_QUEUED = 500

/**
 * What the relay holds of one feed, as far as its acks tell, and which evicted spans it may not have.
 *
 * The relay answers `ack {seq, above}`: `seq` its highest contiguous seq (counting what a `floor` let it
 * skip), `above` the first ranges [lo, hi] it holds beyond that. Spans settle in any seq order (a slow call
 * settles after faster, later ones), so what the relay holds is not a prefix. A span evicted from the ring is:
 * known held by the relay (no loss); never written to any socket (lost); written but not yet confirmed
 * (`unsure`). An unsure seq is settled by the first ack that covers it (held), or by the resume ack of the next
 * connection (what that relay does not hold by then it never will: lost). Until then `floor` stays at or
 * below it, so the relay's contiguous ack cannot pass it and later claim it held.
 */
class Delivery {
  constructor() {
    this.acked = -1
    /** @type {number[][]} [lo, hi] ranges above `acked`, lowest first, as the relay last said */
    this.above = []
    /** seqs written to a socket (this connection or an earlier one) and not yet known held */
    this.pending = new Set()
    /** @type {number[]} evicted seqs that were written and are not yet known held */
    this.unsure = []
    this.lost = 0
  }

  /** Does the relay hold `seq` (as far as its last ack said)? */
  has(seq) {
    if (seq <= this.acked) return true
    for (const [lo, hi] of this.above) {
      if (seq < lo) return false
      if (seq <= hi) return true
    }
    return false
  }

  evicted(seq) {
    if (this.has(seq)) return
    if (this.pending.delete(seq)) this.unsure.push(seq)
    else this.lost++
  }

  written(seq) {
    if (!this.has(seq)) this.pending.add(seq)
  }

  /**
   * An ack. `resume` is the one right after hello: it replaces what an earlier relay said (a restarted relay
   * holds nothing), and whatever unsure seq it does not cover was not stored.
   * @param {number} seq
   * @param {unknown} above  the ack's `above` ranges (validated here)
   * @param {boolean} resume
   */
  ack(seq, above, resume) {
    if (resume || seq > this.acked) this.acked = seq
    this.above = ranges(above, this.acked)
    for (const s of this.pending) if (this.has(s)) this.pending.delete(s)
    if (!this.unsure.length) return
    if (resume) this.lost += this.unsure.filter((s) => !this.has(s)).length
    this.unsure = resume ? [] : this.unsure.filter((s) => !this.has(s))
  }

  /** The lowest unsure seq, or null: the floor may not pass it. */
  lowestUnsure() {
    let low = null
    for (const s of this.unsure) if (low === null || s < low) low = s
    return low
  }
}

const MAX_ACK_RANGES = 64 // the relay sends at most this many `above` ranges

/** An ack's `above`: at most MAX_ACK_RANGES integer [lo, hi] pairs above `acked`, ascending; junk dropped. */
function ranges(above, acked) {
  const out = []
  if (!Array.isArray(above)) return out
  let last = acked
  for (const r of above.slice(0, MAX_ACK_RANGES)) {
    if (!Array.isArray(r) || !Number.isInteger(r[0]) || !Number.isInteger(r[1])) break
    const [lo, hi] = r
    if (lo <= last || hi < lo) break
    out.push([lo, hi])
    last = hi
  }
  return out
}

/**
 * A session as the uplink sees it.
 * @typedef {object} Feed
 * @property {string} id
 * @property {() => {session:object, config:object}} hello
 * @property {() => Iterable<object>} spans  held spans, oldest first
 * @property {() => object[]} replay  frames that restate the session after a (re)connect
 * @property {Delivery} delivery
 * @property {() => string} [rename]  the relay refused our first hello as taken: go on under a new id (returned),
 *   re-stamping what the feed holds. Without it such a hello is tried again after a backoff.
 * @property {() => void} [drain]  called at the start of each flush: queue what the feed has gathered since
 *   (the agent's batched `start` frames), so it goes out in the same flush
 * @property {() => {open: number|null, next: number}} [seqs]  the lowest seq still running or awaiting
 *   accounting (it will become a span later), and the next seq to be given out. Without it no `floor` is sent.
 */

class Uplink {
  /**
   * @param {object} o
   * @param {{url:string, protocol?:string}} o.relay
   * @param {string} o.agent  "name/version"
   * @param {new (url: string) => WebSocket} [o.WebSocket]
   * @param {Function} [o.setTimeout]
   * @param {Function} [o.clearTimeout]
   * @param {(fn: Function) => void} [o.schedule]  macrotask scheduler (flushes ride on it when flushMs is 0)
   * @param {number} [o.flushMs]  batch window: frames gathered within it leave in one flush (0: next macrotask)
   * @param {boolean} [o.alignQuiet]  a busy page's batch, its window over while a call is under way, waits for quiet()
   * @param {() => boolean} [o.calling]  is a call under way (running, or its answer on the way to the page)?
   * @param {() => number} [o.clock]
   * @param {number} [o.mark]  unsent spans that send an unwatched batch at once (pacing.js unwatchedMark)
   * @param {(text: string) => void} [o.warn]  where a refusal is said (default: the page's console.warn)
   */
  constructor({ relay, agent, WebSocket: WS = globalThis.WebSocket, setTimeout: st = globalThis.setTimeout, clearTimeout: ct = globalThis.clearTimeout, schedule, flushMs = 0, clock, alignQuiet = false, calling = () => false, mark = unwatchedMark(500), warn }) {
    this.relay = relay
    this.agent = agent
    this.WS = WS
    this.st = st
    this.ct = ct
    this.schedule = schedule || ((fn) => st(fn, 0))
    this.clock = clock || (() => Date.now())
    /** `sent`: seqs written on this connection and not yet known held (each goes out once a connection).
     * @type {Map<string, {feed: Feed, helloSent:boolean, resumed:boolean, sent:Set<number>, toldLost:number, queue:object[], late:object[], ledgerDirty:boolean, ledgerAt:number, ledgerTimer:any, resume:string|null, helloAttempt:number, helloTimer:any, said:boolean}>} */
    this.feeds = new Map()
    this.ws = null
    this.state = "idle"
    this.attempt = 0
    this.timer = null
    this.flushScheduled = false
    this.flushMs = Number.isFinite(flushMs) && flushMs > 0 ? Math.min(flushMs, MAX_FLUSH_MS) : 0
    this.flushTimer = null
    this.alignQuiet = !!alignQuiet
    this.calling = calling
    this.awaitingQuiet = false
    this.flushing = false
    this.lastSpansAt = -Infinity // when a flush last carried spans: calls within BUSY_MS of it mean a busy page
    /** @type {Map<string, {watched: boolean, intervalMs: number}>} what the relay last said of each session (pacing.js) */
    this.watch = new Map()
    this.unsent = 0 // spans ready since the last flush
    this.resuming = false // a resume ack came: what the relay lacks goes on the next task, whatever the cadence
    this.mark = mark
    this.closed = false
    this.counters = { connects: 0, disconnects: 0, framesSent: 0, spansSent: 0, acks: 0, errors: 0, rateLimited: 0, refused: 0, renamed: 0 }
    this.lastRefusal = null
    this.warnedAt = -Infinity
    this.warn = warn || ((text) => { const c = globalThis.console; if (c && c.warn) c.warn(text) })
    this.paused = false
    this.pauseTimer = null
    this.lastError = null
    this.onCommand = null
  }

  start() {
    if (typeof this.WS !== "function") {
      this.state = "unavailable"
      return
    }
    this.connect()
  }

  connect() {
    if (this.closed) return
    this.timer = null
    this.state = "connecting"
    let ws
    try {
      ws = new this.WS(this.relay.url)
    } catch (e) {
      this.lastError = String((e && e.name) || "connect failed")
      return this.retry()
    }
    this.ws = ws
    ws.onopen = () =>
      safely(() => {
        if (this.ws !== ws) return
        this.state = "open"
        this.attempt = 0
        this.counters.connects++
        for (const s of this.feeds.values()) this.resetLink(s)
        this.flush()
      })
    ws.onmessage = (e) => safely(() => this.ws === ws && this.receive(e.data))
    ws.onclose = () => safely(() => this.ws === ws && this.lost())
    ws.onerror = () => {}
  }

  lost() {
    this.ws = null
    this.counters.disconnects++
    if (this.state === "open") this.state = "closed"
    this.retry()
  }

  retry() {
    if (this.closed || this.timer !== null) return
    this.state = "waiting"
    const delay = BACKOFF[Math.min(this.attempt, BACKOFF.length - 1)]
    this.attempt++
    this.timer = this.st(() => safely(() => this.connect()), delay)
  }

  get open() {
    return this.ws !== null && this.state === "open"
  }

  resetLink(s) {
    this.watch.delete(s.feed.id) // a hello starts watched; the relay says otherwise after its ack (pacing.js)
    s.helloSent = false
    s.resumed = false
    s.sent = new Set()
    // Restated by replay() after hello; what is left is events and updates.
    s.queue = s.queue.filter((f) => KEPT_OFFLINE.has(f.type))
  }

  // ---- feeds -----------------------------------------------------------------------------------------

  /** @param {Feed} feed */
  addFeed(feed) {
    if (this.feeds.has(feed.id)) return
    this.feeds.set(feed.id, { feed, helloSent: false, resumed: false, sent: new Set(), toldLost: 0, queue: [], late: [], ledgerDirty: false, ledgerAt: -Infinity, ledgerTimer: null, resume: null, helloAttempt: 0, helloTimer: null, said: false })
    this.kick()
  }

  /**
   * The page is going away (pagehide): say `bye` for every session and send nothing more for them, since
   * whatever the unload still produces (the `visibility` event fired after pagehide, a status, a ledger)
   * would reach a relay that has ended the session and be refused. A bfcache restore calls `resume()`.
   */
  bye(reason) {
    // What the batch window still holds leaves first: nothing said before the bye is dropped.
    this.flush()
    for (const [id, s] of this.feeds) {
      if (this.open && s.helloSent && !s.said) this.write(frames.bye(id, reason))
      s.said = true
      s.queue = []
    }
  }

  /**
   * The resume secret the relay gave this session, or null: the proof a navigation link carries (the next
   * document of this tab names this session, and the relay writes into this session's timeline only for it).
   * @param {string} id
   */
  secretOf(id) {
    const s = this.feeds.get(id)
    return s && s.resume ? s.resume : null
  }

  /** The page is back (pageshow from the bfcache): every session says hello again. */
  resume() {
    for (const s of this.feeds.values()) {
      if (!s.said) continue
      s.said = false
      this.resetLink(s)
    }
    this.kick()
  }

  removeFeed(id, reason) {
    const s = this.feeds.get(id)
    if (!s) return
    if (this.open && s.helloSent) this.write(frames.bye(id, reason))
    if (s.ledgerTimer !== null) this.ct(s.ledgerTimer)
    if (s.helloTimer !== null) this.ct(s.helloTimer)
    this.feeds.delete(id)
    this.watch.delete(id)
  }

  /** Queue a small frame for a session (start, update, tool, status, event). */
  send(id, frame) {
    const s = this.feeds.get(id)
    if (!s || s.said) return
    if (frame.type === "facts") {
      s.late.push(frame)
      if (s.late.length > MAX_FACTS_QUEUED) s.late.shift()
      this.kick()
      return
    }
    // Starts, tools and status are restated from state on reconnect; events and updates wait (bounded).
    if (!this.open && !KEPT_OFFLINE.has(frame.type)) return
    // A span not yet sent on this connection carries its blockingMs when it goes.
    if (frame.type === "update" && !s.sent.has(frame.seq) && !s.feed.delivery.has(frame.seq)) return
    s.queue.push(frame)
    if (s.queue.length > MAX_QUEUED) s.queue.shift()
    this.kick()
  }

  /** New spans are held by a feed: flush soon (an unwatched batch that reached the mark: now). */
  spansReady() {
    this.unsent++
    if (this.unsent === this.mark && this.flushTimer !== null && !this.awaitingQuiet && this.cadence() !== null) {
      this.ct(this.flushTimer)
      this.flushTimer = null
      this.flushScheduled = false
    }
    this.kick()
  }

  /** Null while any session is watched (or never told); else the shortest interval the relay gave (pacing.js). */
  cadence() {
    let interval = null
    for (const id of this.feeds.keys()) {
      const w = this.watch.get(id)
      if (!w || w.watched) return null
      if (interval === null || w.intervalMs < interval) interval = w.intervalMs
    }
    return interval
  }

  ledgerDirty(id) {
    const s = this.feeds.get(id)
    if (!s) return
    s.ledgerDirty = true
    this.kick()
  }

  kick() {
    if (this.flushScheduled || this.flushing || !this.open) return
    this.flushScheduled = true
    if ((this.flushMs || this.cadence() !== null) && this.window() > 0) {
      this.flushTimer = this.st(() => {
        this.flushTimer = null
        if (this.alignQuiet && isBusy(this.clock(), this.lastSpansAt) && this.calling()) {
          // pacing.js: wait for the page's next quiet moment (quiet()), or QUIET_WAIT_MS at most
          this.awaitingQuiet = true
          this.flushTimer = this.st(() => {
            this.flushTimer = null
            safely(() => this.flush())
          }, QUIET_WAIT_MS)
          return
        }
        this.flushScheduled = false
        safely(() => this.flush())
      }, this.window())
      return
    }
    this.schedule(() => {
      this.flushScheduled = false
      safely(() => this.flush())
    })
  }

  /** The batch window for a flush scheduled now: `flushMs` after a quiet spell, wider while busy; unwatched, the
   * relay's interval (pacing.js). */
  window() {
    const interval = this.cadence()
    if (interval !== null) return this.resuming ? 0 : unwatchedWindow(interval, this.unsent, this.mark)
    return batchWindow(this.flushMs, this.clock(), this.lastSpansAt)
  }

  // ---- wire ------------------------------------------------------------------------------------------

  write(frame) {
    if (!this.ws) return false
    try {
      this.ws.send(JSON.stringify(frame))
      this.counters.framesSent++
      return true
    } catch {
      return false
    }
  }

  /** The page's quiet moment (the agent just accounted a settled call): a batch waiting for it leaves now. */
  quiet() {
    if (this.awaitingQuiet) this.flush()
  }

  /** The agent's accounting window ran out: watched, its batch leaves now; unwatched, at its interval (pacing.js). */
  windowEnded() {
    if (this.cadence() === null) this.flush()
    else this.quiet()
  }

  flush() {
    this.awaitingQuiet = false
    if (this.flushTimer === null && this.flushScheduled && this.flushMs) this.flushScheduled = false
    if (!this.open || this.paused) return
    // A flush made now (open, bye, detach, a navigating form) also serves the one the window was waiting for.
    if (this.flushTimer !== null) {
      this.ct(this.flushTimer)
      this.flushTimer = null
      this.flushScheduled = false
    }
    this.flushing = true
    this.unsent = 0
    this.resuming = false
    try {
      this.flushFeeds()
    } finally {
      this.flushing = false
    }
  }

  flushFeeds() {
    for (const s of this.feeds.values()) {
      if (s.said) continue // said bye: nothing more until resume()
      if (!s.helloSent) {
        if (s.helloTimer !== null) continue // refused a moment ago: the retry timer sends it again
        const h = s.feed.hello()
        const hello = frames.hello({ protocol: this.relay.protocol || PROTOCOL, agent: this.agent, session: h.session, config: h.config, lost: s.feed.delivery.lost })
        if (s.resume) hello.resume = s.resume
        if (!this.write(hello)) return
        s.helloSent = true
        s.toldLost = s.feed.delivery.lost
        for (const f of s.feed.replay()) this.write(f)
        s.ledgerDirty = false
        s.ledgerAt = this.clock()
      }
      if (s.feed.drain) s.feed.drain()
      const q = s.queue
      s.queue = []
      for (const f of q) this.write(f)
      if (s.resumed) this.sendSpans(s)
      if (s.resumed && s.late.length) this.sendFacts(s)
      if (s.ledgerDirty) this.sendLedger(s)
    }
  }

  /**
   * Send every held span the relay does not hold and this connection has not carried yet, in seq order,
   * with `floor`: the lowest seq this feed may still send (a call in flight, a held span the relay lacks, an
   * unsure eviction) or else the next seq to be given out. Below it the relay may stop waiting.
   */
  sendSpans(s) {
    const d = s.feed.delivery
    const pending = []
    let low = d.lowestUnsure()
    for (const span of s.feed.spans()) {
      if (d.has(span.seq)) continue
      if (low === null || span.seq < low) low = span.seq
      if (!s.sent.has(span.seq)) pending.push(span)
    }
    // Nothing to send but news of a loss (settled by a resume ack): an empty frame says it.
    if (!pending.length && d.lost === s.toldLost) return
    pending.sort((a, b) => a.seq - b.seq)
    let floor = null
    const seqs = s.feed.seqs && s.feed.seqs()
    if (seqs) {
      floor = seqs.next
      for (const v of [seqs.open, low]) if (v !== null && v !== undefined && v < floor) floor = v
    }
    for (let i = 0; i === 0 || i < pending.length; i += MAX_SPANS_PER_FRAME) {
      const chunk = pending.slice(i, i + MAX_SPANS_PER_FRAME)
      const last = i + MAX_SPANS_PER_FRAME >= pending.length
      // The last frame of the batch carries the facts that are ready (their span sent, or in it): one send, not two.
      const ride = last && s.late.length ? this.readyFacts(s, chunk) : null
      const frame = frames.spans(s.feed.id, chunk, d.lost, ride && ride.items)
      if (floor !== null) frame.floor = floor
      if (!this.write(frame)) return
      if (ride) s.late = ride.wait
      s.toldLost = d.lost
      for (const span of chunk) {
        s.sent.add(span.seq)
        d.written(span.seq)
      }
      this.counters.spansSent += chunk.length
      if (chunk.length) this.lastSpansAt = this.clock()
    }
  }

  /**
   * The facts that may ride on a spans frame carrying `chunk`: those whose span is in it, was carried on this
   * connection or is held by the relay (at most MAX_SPANS_PER_FRAME); `wait` is what stays queued.
   * @param {any} s
   * @param {object[]} chunk
   */
  readyFacts(s, chunk) {
    const d = s.feed.delivery
    const here = new Set(chunk.map((span) => span.seq))
    const items = []
    const wait = []
    for (const f of s.late) {
      if (items.length < MAX_SPANS_PER_FRAME && (here.has(f.seq) || s.sent.has(f.seq) || d.has(f.seq))) items.push({ seq: f.seq, facts: f.facts })
      else wait.push(f)
    }
    return { items, wait }
  }

  /**
   * Facts whose span this connection carried (or the relay holds) leave now, batched (`items`, at most
   * MAX_SPANS_PER_FRAME a frame); the others wait for their span. Not restated after a reconnect.
   */
  sendFacts(s) {
    const d = s.feed.delivery
    const ready = []
    const wait = []
    for (const f of s.late) (s.sent.has(f.seq) || d.has(f.seq) ? ready : wait).push(f)
    s.late = wait
    for (let i = 0; i < ready.length; i += MAX_SPANS_PER_FRAME) {
      const chunk = ready.slice(i, i + MAX_SPANS_PER_FRAME)
      const frame = chunk.length === 1 ? chunk[0] : frames.factsItems(s.feed.id, chunk.map((f) => ({ seq: f.seq, facts: f.facts })))
      if (!this.write(frame)) return
    }
  }

  sendLedger(s) {
    const wait = s.ledgerAt + (this.cadence() === null ? LEDGER_EVERY_MS : UNWATCHED_LEDGER_MS) - this.clock()
    if (wait > 0) {
      if (s.ledgerTimer === null) {
        s.ledgerTimer = this.st(() => {
          s.ledgerTimer = null
          safely(() => (this.cadence() === null ? this.flush() : this.kick())) // unwatched: with the next batch
        }, wait)
      }
      return
    }
    const f = s.feed.ledgerFrame && s.feed.ledgerFrame()
    s.ledgerDirty = false
    s.ledgerAt = this.clock()
    if (f) this.write(f)
  }

  receive(data) {
    if (typeof data !== "string") return
    const msg = JSON.parse(data)
    if (!msg || typeof msg !== "object") return
    if (msg.type === "ack") {
      this.counters.acks++
      const s = this.feeds.get(msg.session)
      if (!s || !Number.isInteger(msg.seq) || msg.seq < -1) return
      if (typeof msg.resume === "string" && /^[0-9a-f]{32}$/.test(msg.resume)) s.resume = msg.resume
      const resume = !s.resumed
      if (resume) s.helloAttempt = 0
      const d = s.feed.delivery
      d.ack(msg.seq, msg.above, resume)
      for (const seq of s.sent) if (d.has(seq)) s.sent.delete(seq)
      if (resume) {
        s.resumed = true
        this.resuming = true
        this.kick()
      }
    } else if (msg.type === "error") {
      this.counters.errors++
      this.lastError = String(msg.code || "error")
      if (RESEND_ON.has(msg.code)) this.slowDown(String(msg.code))
      const s = typeof msg.session === "string" ? this.feeds.get(msg.session) : undefined
      if (s && s.said) {
        // said bye: a refusal now is of something sent before it, never a reason to say hello again
      } else if (s && s.helloSent && !s.resumed && msg.code === "session_taken" && s.resume === null && typeof s.feed.rename === "function") this.renameFeed(s)
      else if (s && s.helloSent && !s.resumed) this.helloRefused(s)
      else if (s && s.resumed && msg.code === "unknown_session") {
        // The relay accepted this session once and no longer knows it (it restarted): hello again now.
        this.resetLink(s)
        this.kick()
      }
      if (msg.fatal) this.stop()
    } else if (msg.type === "watch") {
      const w = readWatch(msg)
      if (!w || !this.feeds.has(msg.session)) return
      const was = this.cadence()
      this.watch.set(msg.session, w)
      // A session that became watched shows its current numbers now, not at the end of an unwatched interval.
      if (was !== null && this.cadence() === null) this.flush()
    } else if (msg.type === "command") {
      // The terminal asked (through the relay) for something: only this socket can deliver one.
      if (typeof this.onCommand === "function") this.onCommand(msg)
    } else if (msg.type === "welcome") {
      // `payloads`: the relay has a use for opt-in payload frames (--otlp or --show-payloads); without it the
      // agent sends none, so bodies never cross the socket for nothing.
      this.welcome = { relay: String(msg.relay || ""), protocol: String(msg.protocol || ""), payloads: msg.payloads === true }
    }
  }

  /**
   * The relay refused our hello (or a frame sent before its answer): try the hello again after a backoff,
   * so a page refused once (64 live sessions, a relay busy) is never cut off for good.
   */
  helloRefused(s) {
    if (s.helloTimer !== null) return
    const delay = BACKOFF[Math.min(s.helloAttempt, BACKOFF.length - 1)]
    s.helloAttempt++
    s.helloTimer = this.st(() => {
      s.helloTimer = null
      if (!this.feeds.has(s.feed.id)) return
      this.resetLink(s)
      safely(() => this.flush())
    }, delay)
  }

  /**
   * Our first hello was refused as `session_taken`: another socket holds that id, and this feed never had it (no
   * resume secret yet). The feed takes a new id (feed.rename re-stamps what it holds) and says hello at once;
   * what waits in its queue goes under the new id.
   * @param {any} s
   */
  renameFeed(s) {
    const old = s.feed.id
    const id = s.feed.rename()
    if (typeof id !== "string" || id === old || this.feeds.has(id)) return this.helloRefused(s)
    s.feed.id = id
    this.feeds.delete(old)
    this.feeds.set(id, s)
    this.watch.delete(old)
    for (const f of s.queue) if (f.session === old) f.session = id
    for (const f of s.late) if (f.session === old) f.session = id
    this.counters.renamed++
    safely(() => this.warn(`[wmcp-top] session ${old} is held by another socket; this page goes on as session ${id}`))
    this.resetLink(s)
    safely(() => this.flush())
  }

  /**
   * The relay refused data (its rate cap, a memory cap or share, its session log behind: not stored, not
   * acked): hold off for a moment, then send again every held span it has not acked by then (the acks of what
   * it did take arrive meanwhile). Counted, and said in the console now and then.
   * @param {string} [code]
   */
  slowDown(code = "rate_limited") {
    if (code === "rate_limited") this.counters.rateLimited++
    this.counters.refused++
    this.lastRefusal = code
    const now = this.clock()
    if (now - this.warnedAt >= WARN_EVERY_MS) {
      this.warnedAt = now
      const text = `[wmcp-top] the relay refused data (${code}); kept in the page and sent again in ${RATE_PAUSE_MS} ms (${this.counters.refused} refusals so far)`
      safely(() => this.warn(text))
    }
    if (this.pauseTimer) return
    this.paused = true
    this.pauseTimer = this.st(() => {
      this.paused = false
      this.pauseTimer = null
      for (const s of this.feeds.values()) s.sent = new Set()
      safely(() => this.flush())
    }, RATE_PAUSE_MS)
  }

  /** Stop for good (fatal error, or detach): byes are sent by removeFeed beforehand. */
  stop() {
    this.closed = true
    this.state = "stopped"
    if (this.timer !== null) this.ct(this.timer)
    if (this.pauseTimer) this.ct(this.pauseTimer)
    if (this.flushTimer !== null) this.ct(this.flushTimer)
    this.flushTimer = null
    this.timer = null
    for (const s of this.feeds.values()) {
      if (s.ledgerTimer !== null) this.ct(s.ledgerTimer)
      if (s.helloTimer !== null) this.ct(s.helloTimer)
    }
    const ws = this.ws
    this.ws = null
    if (ws) safely(() => ws.close(1000))
  }

  info() {
    let url = ""
    safely(() => {
      const u = new URL(this.relay.url)
      url = `${u.protocol}//${u.host}${u.pathname}`
    })
    const acked = {}
    const lost = {}
    for (const [id, s] of this.feeds) {
      acked[id] = s.feed.delivery.acked
      lost[id] = s.feed.delivery.lost
    }
    return { state: this.state, url, ...this.counters, lastError: this.lastError, lastRefusal: this.lastRefusal, sessions: Array.from(this.feeds.keys()), acked, lost, watched: this.cadence() === null }
  }
}
return { FLUSH_MS, MAX_FLUSH_MS, BUSY_MS, MAX_SPANS_PER_FRAME, LEDGER_EVERY_MS, Delivery, MAX_ACK_RANGES, Uplink };
})();

// ---- page/prompt.js ----
__m["page/prompt"] = (function () {
// The Prompt API lane (issue 8): wrap LanguageModel.create (and the older ai.languageModel.create,
// ai.createTextSession), then each session's prompt, promptStreaming, clone and destroy. Every step becomes
// one `prompt` frame with timings and CHARACTER COUNTS; the text itself is never kept or sent, except under the
// page's opt-in `capturePayloads` (then a `payload` frame carries the prompt and the answer, cut at
// maxPayloadLength, for the terminal's detail pane under --show-payloads).
// promptStreaming hands the page a pull-through stream: each original chunk is passed on as it is read,
// nothing is read ahead or buffered, and the chunk values are the original ones.

const { safely, cap } = __m["shared/util"];
const { errorText } = __m["page/measure"];
const { cutPayload } = __m["page/hooks"];
const MAX_SESSIONS = 64
const MAX_STEPS = 200
const SURROGATE_PAIR = /[\uD800-\uDBFF][\uDC00-\uDFFF]/g

/** Characters (code points) of a string: a surrogate pair counts once. */
function countChars(s) {
  if (typeof s !== "string") return 0
  const pairs = s.match(SURROGATE_PAIR)
  return s.length - (pairs ? pairs.length : 0)
}

/**
 * Characters of a prompt's input: a string; or messages [{role, content}] whose content is a string or parts
 * ({type: "text", value} / {text}); non-text parts (images, audio) count 0.
 */
function countInput(input, depth = 0) {
  if (typeof input === "string") return countChars(input)
  if (!input || typeof input !== "object" || depth > 3) return 0
  if (Array.isArray(input)) {
    let n = 0
    for (const x of input) n += countInput(x, depth + 1)
    return n
  }
  if ("content" in input) return countInput(input.content, depth + 1)
  if (input.type !== undefined && input.type !== "text") return 0
  if (typeof input.value === "string") return countChars(input.value)
  if (typeof input.text === "string") return countChars(input.text)
  return 0
}

/** A prompt's input as text: a string as itself, messages as their JSON; null when it has none. */
function inputText(input) {
  if (typeof input === "string") return input
  const t = JSON.stringify(input)
  return typeof t === "string" ? t : null
}

/** The factories to wrap: [owner, method name, label]. */
function factories(g) {
  const out = []
  const lm = safely(() => g.LanguageModel, null)
  if (lm && typeof safely(() => lm.create, null) === "function") out.push([lm, "create", "LanguageModel"])
  const ai = safely(() => g.ai, null)
  if (ai && typeof ai === "object") {
    const alm = safely(() => ai.languageModel, null)
    if (alm && alm !== lm && typeof safely(() => alm.create, null) === "function") out.push([alm, "create", "ai.languageModel"])
    for (const m of ["createTextSession", "createGenericSession"]) if (typeof safely(() => ai[m], null) === "function") out.push([ai, m, `ai.${m}`])
  }
  return out
}

class PromptWatcher {
  /**
   * @param {object} o
   * @param {object} o.global
   * @param {() => number} o.clock  page clock (performance.now)
   * @param {(frame: object) => void} o.send  one prompt step, without type/session
   * @param {string} o.sessionId
   * @param {string} [o.errorPolicy]
   * @param {((p: {promptSession: string, seq: number, arguments: string|null, result: string|null}) => void)|null} [o.payload]
   *   opt-in text capture (capturePayloads); null: no text ever leaves
   * @param {number} [o.maxPayload]  characters kept of each text
   */
  constructor({ global: g, clock, send, sessionId, errorPolicy = "message", payload = null, maxPayload = 2048 }) {
    this.g = g
    this.clock = clock
    this.send = send
    this.payload = payload
    this.maxPayload = maxPayload
    this.sessionId = sessionId
    this.errorPolicy = errorPolicy
    this.active = true
    this.patched = [] // [owner, method, wrapper, own descriptor]
    this.adopted = new WeakMap() // page session object -> state
    this.n = 0
    /** id -> {id, api, createdAt, destroyedAt, steps[]}: sizes and timings only */
    this.sessions = new Map()
  }

  /** Look for the Prompt API; wrap the factories not wrapped yet. Cheap; called on every registry sweep. */
  sweep() {
    if (!this.active) return
    for (const [owner, method, label] of factories(this.g)) {
      const current = owner[method]
      if (this.patched.some((p) => p[0] === owner && p[1] === method && p[2] === current)) continue
      this.patchFactory(owner, method, label)
    }
  }

  patchFactory(owner, method, label) {
    const original = owner[method]
    const own = Object.getOwnPropertyDescriptor(owner, method)
    const self = this
    const wrapper = function () {
      if (!self.active) return original.apply(this, arguments)
      const t0 = self.clock()
      let ret
      try {
        ret = original.apply(this, arguments)
      } catch (e) {
        safely(() => self.createFailed(label, t0, e))
        throw e
      }
      return self.follow(ret, t0, label)
    }
    try {
      Object.defineProperty(wrapper, "name", { value: original.name || method, configurable: true })
      Object.defineProperty(owner, method, { value: wrapper, writable: true, configurable: true, enumerable: own ? own.enumerable : false })
    } catch {
      return
    }
    if (owner[method] === wrapper) this.patched.push([owner, method, wrapper, own])
  }

  /** A create/clone promise: adopt the session it resolves to. Returns a promise of the same session. */
  follow(ret, t0, label) {
    if (!ret || typeof ret.then !== "function") {
      safely(() => this.adopt(ret, t0, label))
      return ret
    }
    return ret.then(
      (session) => {
        safely(() => this.adopt(session, t0, label))
        return session
      },
      (e) => {
        safely(() => this.createFailed(label, t0, e))
        throw e
      },
    )
  }

  newId() {
    return `${this.sessionId}-${++this.n}`
  }

  record(id, step) {
    const s = this.sessions.get(id)
    if (s) {
      if (step.kind === "destroy") s.destroyedAt = step.at
      else if (step.kind !== "create") {
        s.steps.push(step)
        if (s.steps.length > MAX_STEPS) s.steps.shift()
      }
    }
    this.send({ promptSession: id, ...step })
  }

  createFailed(label, t0, e) {
    const id = this.newId()
    this.remember(id, label, t0)
    this.record(id, { kind: "create", at: t0, seq: 0, totalMs: Math.max(0, this.clock() - t0), error: this.err(e) })
  }

  remember(id, label, at) {
    this.sessions.set(id, { id, api: label, createdAt: at, destroyedAt: null, steps: [] })
    if (this.sessions.size > MAX_SESSIONS) this.sessions.delete(this.sessions.keys().next().value)
  }

  err(e) {
    return cap(errorText(e, this.errorPolicy === "none" ? "name" : this.errorPolicy) || "Error", 200)
  }

  /** A session the page now holds: give it an id, wrap its methods on the instance. */
  adopt(session, t0, label) {
    if (!session || (typeof session !== "object" && typeof session !== "function") || this.adopted.has(session)) return
    const id = this.newId()
    const state = { id, seq: 0 }
    this.adopted.set(session, state)
    this.remember(id, label, t0)
    this.record(id, { kind: "create", at: t0, seq: 0, totalMs: Math.max(0, this.clock() - t0) })
    const self = this
    const wrap = (method, make) => {
      const original = safely(() => session[method], null)
      if (typeof original !== "function") return
      const wrapped = make(original)
      safely(() => Object.defineProperty(session, method, { value: wrapped, writable: true, configurable: true, enumerable: false }))
    }
    wrap("prompt", (original) =>
      function (input) {
        if (!self.active) return original.apply(this, arguments)
        const seq = state.seq++
        const t0 = self.clock()
        const charsIn = safely(() => countInput(input), 0)
        const promptText = self.payload ? safely(() => inputText(input), null) : null
        const done = (charsOut, error, answer = null) => {
          safely(() => self.record(id, { kind: "prompt", at: t0, seq, totalMs: Math.max(0, self.clock() - t0), charsIn, charsOut, error }))
          if (self.payload) self.sendText(id, seq, promptText, typeof answer === "string" ? answer : null)
        }
        let ret
        try {
          ret = original.apply(this, arguments)
        } catch (e) {
          done(0, self.err(e))
          throw e
        }
        if (ret && typeof ret.then === "function") {
          safely(() =>
            ret.then(
              (v) => done(countChars(v), null, v),
              (e) => done(0, self.err(e)),
            ),
          )
        } else done(countChars(ret), null, ret)
        return ret
      },
    )
    wrap("promptStreaming", (original) =>
      function (input) {
        if (!self.active) return original.apply(this, arguments)
        const seq = state.seq++
        const t0 = self.clock()
        const charsIn = safely(() => countInput(input), 0)
        let src
        try {
          src = original.apply(this, arguments)
        } catch (e) {
          safely(() => self.record(id, { kind: "stream", at: t0, seq, totalMs: Math.max(0, self.clock() - t0), firstChunkMs: null, chunks: 0, charsIn, charsOut: 0, error: self.err(e) }))
          throw e
        }
        const promptText = self.payload ? safely(() => inputText(input), null) : null
        return self.passThrough(src, id, seq, t0, charsIn, promptText)
      },
    )
    wrap("destroy", (original) =>
      function () {
        if (!self.active) return original.apply(this, arguments)
        const ret = original.apply(this, arguments)
        safely(() => self.record(id, { kind: "destroy", at: self.clock(), seq: 0 }))
        return ret
      },
    )
    wrap("clone", (original) =>
      function () {
        if (!self.active) return original.apply(this, arguments)
        const t0 = self.clock()
        const ret = original.apply(this, arguments)
        return self.follow(ret, t0, `${label}.clone`)
      },
    )
  }

  /**
   * The stream the page reads: pulls one chunk from the original per read, counts it, hands the same value
   * on. No read-ahead (highWaterMark 0), no text kept. Ends (done, error or cancel) send the step.
   */
  passThrough(src, id, seq, t0, charsIn, promptText = null) {
    const RS = safely(() => this.g.ReadableStream, null) || (typeof ReadableStream === "function" ? ReadableStream : null)
    if (!src || typeof src.getReader !== "function" || typeof RS !== "function") {
      safely(() => this.record(id, { kind: "stream", at: t0, seq, totalMs: Math.max(0, this.clock() - t0), firstChunkMs: null, chunks: null, charsIn, charsOut: null, error: null }))
      return src
    }
    let reader
    try {
      reader = src.getReader()
    } catch {
      return src
    }
    const self = this
    let chunks = 0
    let chars = 0
    let first = null
    let ended = false
    // Opt-in capture only: the answer's text so far, kept to a little over the cut (the cut names the length).
    let text = self.payload ? "" : null
    let textLength = 0
    const end = (error) => {
      if (ended) return
      ended = true
      safely(() => self.record(id, { kind: "stream", at: t0, seq, totalMs: Math.max(0, self.clock() - t0), firstChunkMs: first, chunks, charsIn, charsOut: chars, error }))
      if (text !== null) self.sendText(id, seq, promptText, cutPayload(text, self.maxPayload, textLength), true)
      text = null
    }
    return new RS(
      {
        async pull(ctl) {
          let r
          try {
            r = await reader.read()
          } catch (e) {
            end(self.err(e))
            ctl.error(e)
            return
          }
          if (r.done) {
            end(null)
            ctl.close()
            return
          }
          chunks++
          if (first === null) first = Math.max(0, self.clock() - t0)
          chars += countChars(r.value)
          if (text !== null && typeof r.value === "string") {
            textLength += r.value.length
            if (text.length <= self.maxPayload) text = (text + r.value).slice(0, self.maxPayload + 1)
          }
          ctl.enqueue(r.value)
        },
        cancel(reason) {
          end("cancelled")
          return reader.cancel(reason)
        },
      },
      { highWaterMark: 0 },
    )
  }

  /** Opt-in capture: the prompt and the answer of one step, cut at maxPayload, to the payload sink. */
  sendText(id, seq, promptText, answer, answerIsCut = false) {
    safely(() =>
      this.payload({
        promptSession: id,
        seq,
        arguments: promptText === null ? null : cutPayload(promptText, this.maxPayload),
        result: answer === null || answerIsCut ? answer : cutPayload(answer, this.maxPayload),
      }),
    )
  }

  /** Sizes and timings per prompt session (for the console): never text. */
  view() {
    return Array.from(this.sessions.values(), (s) => ({ ...s, steps: s.steps.map((x) => ({ ...x })) }))
  }

  restore() {
    this.active = false
    for (const [owner, method, wrapper, own] of this.patched.reverse()) {
      safely(() => {
        if (owner[method] !== wrapper) return
        if (own) Object.defineProperty(owner, method, own)
        else delete owner[method]
      })
    }
    this.patched = []
  }
}
return { countChars, countInput, PromptWatcher };
})();

// ---- page/forms.js ----
__m["page/forms"] = (function () {
// Declarative (form) tools: `<form toolname tooldescription>` is a tool too. The host lists it in getTools()
// with a schema it generates from the form; executeTool fills the form and fires `submit` with
// `agentInvoked === true`; the page answers with SubmitEvent.respondWith(value | promise). Measured here:
//
//   registration  a form the host lists, reported with the host's generated descriptor (kind "form") and, per
//                 control, which element it is and what the descriptor lint needs (described, labeled, ...)
//   a call        from the agent-invoked `submit` (it precedes `toolactivated` in Chromium 156) to the settling
//                 of what respondWith was given; a form without `toolautosubmit` is filled at `toolactivated`
//                 and then waits for the user's submit: that wait is its own state (a `start` marked waiting)
//                 and is kept apart as `waitedMs`, not tool time
//   refusals      a `toolactivated` for an autosubmit form with no submit after it: the host refused the input
//                 (a value outside the form's constraints) before any page code ran: an error span
//   navigation    a submission nobody prevented leaves the document: outcome "navigated", written at once
//   removal       the form leaves the DOM while its call runs: the host cancels it, and so do we
//
// Values are read only to count bytes (inputBytes) and dropped; the page's answer is measured by the collector.

const { describeTool, toolName } = __m["page/interceptor"];
const { safely, cap, listenWhile } = __m["shared/util"];
const MAX_FIELDS = 64
const FIELD_TAGS = new Set(["INPUT", "SELECT", "TEXTAREA"])
const NOT_PARAMS = new Set(["submit", "button", "reset", "image"])
const WATCHED = ["toolname", "tooldescription", "toolautosubmit", "toolparamdescription", "name", "required"]

/** A short, value-free name for a control: `input[type=number][name=guests]#g`. */
function elementLabel(el) {
  const tag = String(el.tagName || "").toLowerCase() || "element"
  let s = tag
  const type = safely(() => el.getAttribute("type"), null)
  if (tag === "input") s += `[type=${cap(type || "text", 24)}]`
  const name = safely(() => el.getAttribute("name"), null)
  if (name) s += `[name=${cap(name, 48)}]`
  const id = safely(() => el.id, "")
  if (id) s += `#${cap(id, 48)}`
  return cap(s, 128)
}

function isLabeled(el) {
  if (safely(() => el.labels && el.labels.length > 0, false)) return true
  const aria = (k) => safely(() => (el.getAttribute(k) || "").trim() !== "", false)
  return aria("aria-label") || aria("aria-labelledby") || aria("title")
}

/**
 * The lint facts of a form tool, one entry per control (radio groups once): which parameter it feeds (its
 * name, null when it has none and so feeds nothing), its element, and whether it is described, labeled,
 * required. No values.
 */
function formFacts(form, schema) {
  const props = schema && typeof schema === "object" && schema.properties && typeof schema.properties === "object" ? schema.properties : {}
  const fields = []
  const seen = new Set()
  const els = safely(() => Array.from(form.elements), [])
  for (const el of els) {
    if (fields.length >= MAX_FIELDS) break
    if (!el || !FIELD_TAGS.has(el.tagName)) continue
    const type = String(safely(() => el.type, "") || "").toLowerCase()
    if (NOT_PARAMS.has(type)) continue
    const name = String(safely(() => el.getAttribute("name"), "") || "").trim()
    if (name && seen.has(name)) continue
    if (name) seen.add(name)
    fields.push({
      param: name ? cap(name, 128) : null,
      element: elementLabel(el),
      type: cap(type || String(el.tagName).toLowerCase(), 32),
      inSchema: !!name && Object.prototype.hasOwnProperty.call(props, name),
      described: safely(() => (el.getAttribute("toolparamdescription") || "").trim() !== "", false),
      labeled: type === "hidden" ? true : isLabeled(el),
      required: !!safely(() => el.required, false),
    })
  }
  return {
    autosubmit: safely(() => form.hasAttribute("toolautosubmit"), false),
    navigates: formNavigates(form),
    fields,
  }
}

function formNavigates(form) {
  return safely(() => String(form.getAttribute("method") || "get").toLowerCase() !== "dialog", true)
}

/** The form's values as the host filled them, typed by the generated schema (for inputBytes only). */
function filledValues(form, schema) {
  const props = schema && schema.properties && typeof schema.properties === "object" ? schema.properties : {}
  const out = {}
  for (const name of Object.keys(props)) {
    const el = safely(() => form.elements.namedItem(name), null)
    if (!el) continue
    const spec = props[name] || {}
    let v
    if (typeof el.length === "number" && !el.tagName) {
      // a RadioNodeList (radio group or checkboxes sharing a name)
      const boxes = Array.from(el)
      v = boxes.every((b) => b.type === "checkbox") ? boxes.filter((b) => b.checked).map((b) => b.value) : el.value
    } else if (el.type === "checkbox") v = !!el.checked
    else if (el.tagName === "SELECT" && el.multiple) v = Array.from(el.selectedOptions, (o) => o.value)
    else v = el.value
    if (typeof v === "string" && v === "") continue
    if (spec.type === "number" && typeof v === "string") {
      const n = Number(v)
      v = Number.isFinite(n) ? n : v
    }
    out[name] = v
  }
  return out
}

class FormTools {
  /**
   * @param {import("./collector.js").Collector} collector
   * @param {object} o
   * @param {object} o.global  the window
   * @param {(fn: Function) => void} o.schedule  a macrotask: runs after the current event's dispatch
   * @param {(entry: object) => void} [o.onNavigated]  a call left the document: deliver now
   */
  constructor(collector, { global: g, schedule, onNavigated }) {
    this.c = collector
    this.g = g
    this.schedule = schedule
    this.onNavigated = onNavigated || (() => {})
    /** name -> {form, rec, schema} of the form tools the host lists */
    this.tools = new Map()
    /** open calls: entry {name, call, form, responded, done, activated, waiting} */
    this.open = new Set()
    /** submit events of our calls -> entry (respondWith finds its call here) */
    this.byEvent = new WeakMap()
    /** name -> an entry submitted (or activated) in this task, not yet paired with its other half */
    this.unpaired = new Map()
    /** name -> an entry filled for a non-autosubmit form, waiting for the user's submit */
    this.waiting = new Map()
    this.invalidSeen = false
    this.restores = []
    this.host = null
    this.patchedRespond = false
    this.observer = null
    /** the `toolactivated` listeners, on the host and the window (listenActivations) */
    this.activations = []
    this.syncQueued = false
    this.resync = null
    /** names a host registered through registerTool (a polyfill's forms): the interceptor measures those */
    /** @type {(name: string) => boolean} set by the registry: is this tool already wrapped? */
    this.wrapped = (_name) => false
  }

  get doc() {
    return safely(() => this.g.document, null)
  }

  /** The form that declares `name`, or null. */
  formOf(name) {
    const forms = safely(() => this.doc && this.doc.forms, null)
    if (!forms) return null
    for (const f of Array.from(forms)) if (safely(() => f.getAttribute("toolname"), null) === name) return f
    return null
  }

  /** The lint facts of `form` (for a polyfill's form registered through registerTool). */
  factsOf(form, schema) {
    return formFacts(form, schema)
  }

  /** Is `name` a declarative tool (so not one "registered before the agent")? */
  owns(name) {
    return this.tools.has(name) || this.formOf(name) !== null
  }

  /** The document's host was found: listen for submissions, activations, and form changes. */
  attach(host, resync) {
    if (this.host) return
    this.host = host
    this.resync = resync
    const g = this.g
    const on = (target, type, fn, capture) => {
      if (!target || typeof target.addEventListener !== "function") return
      safely(() => {
        target.addEventListener(type, fn, capture)
        this.restores.push(() => target.removeEventListener(type, fn, capture))
      })
    }
    on(g, "submit", (e) => safely(() => this.onSubmit(e)), true)
    on(g, "invalid", () => {
      this.invalidSeen = true
    }, true)
    // Heard only while a form tool is listed (listenActivations): Chromium fires toolactivated for every call.
    // The polyfill fires it on window; Chromium on document.modelContext.
    const onActivated = (e) => safely(() => this.onActivated(e))
    this.activations = [host, host !== g ? g : null].filter(Boolean).map((t) => listenWhile(t, "toolactivated", onActivated))
    this.restores.push(() => this.activations.forEach((l) => l.want(false)))
    this.patchRespond()
    const MO = safely(() => g.MutationObserver, null)
    const doc = this.doc
    if (typeof MO === "function" && doc) {
      safely(() => {
        const obs = new MO(() => safely(() => this.domChanged()))
        obs.observe(doc, { subtree: true, childList: true, attributes: true, attributeFilter: WATCHED })
        this.observer = obs
      })
    }
  }

  /** Wrap SubmitEvent.prototype.respondWith (never define it: a polyfill checks for it before adding its own). */
  patchRespond() {
    if (this.patchedRespond) return
    const proto = safely(() => this.g.SubmitEvent && this.g.SubmitEvent.prototype, null)
    if (!proto) return
    const own = Object.getOwnPropertyDescriptor(proto, "respondWith")
    const original = own && typeof own.value === "function" ? own.value : null
    if (!original) return
    const self = this
    const patched = function respondWith(value) {
      const ret = original.apply(this, arguments)
      safely(() => self.responded(this, value))
      return ret
    }
    try {
      Object.defineProperty(proto, "respondWith", { ...own, value: patched })
    } catch {
      return
    }
    this.patchedRespond = true
    this.restores.push(() => {
      if (proto.respondWith === patched) Object.defineProperty(proto, "respondWith", own)
    })
  }

  domChanged() {
    this.cancelRemoved()
    if (this.syncQueued || !this.resync) return
    this.syncQueued = true
    this.schedule(() => {
      this.syncQueued = false
      safely(() => this.resync())
    })
  }

  /**
   * The host's current list (from the interceptor's reconcile): register the forms it lists, withdraw the
   * ones it stopped listing. Returns nothing; reports through the collector.
   */
  sync(list) {
    this.patchRespond()
    const listed = new Set()
    for (const t of list) {
      if (!t || typeof t.name !== "string" || !t.name) continue
      const form = this.formOf(t.name)
      if (!form || this.wrapped(t.name)) continue
      const name = toolName(t.name)
      listed.add(name)
      const desc = describeTool({ name: t.name, title: t.title || undefined, description: t.description, inputSchema: t.inputSchema })
      const facts = formFacts(form, t.inputSchema)
      const prev = this.tools.get(name)
      const factsText = JSON.stringify(facts)
      if (prev && prev.form === form && prev.rec.descriptor === desc.descriptor && prev.factsText === factsText) continue
      const rec = { name, ...desc, annotationsKept: null, internal: false, kind: "form", form: facts }
      this.tools.set(name, { form, rec, schema: t.inputSchema, factsText })
      this.c.registered(rec)
    }
    for (const name of Array.from(this.tools.keys())) {
      if (listed.has(name)) continue
      this.tools.delete(name)
      this.c.unregistered(name)
    }
    this.listenActivations()
    this.cancelRemoved()
  }

  // ---- calls ---------------------------------------------------------------------------------------------

  onSubmit(e) {
    if (!e || e.agentInvoked !== true || !this.c.active) return
    const form = e.target
    const name = safely(() => form.getAttribute("toolname"), null)
    const tool = name && this.tools.get(name)
    if (!tool) return
    const t = this.c.clock()
    let entry = this.waiting.get(name)
    if (entry && entry.form === form) {
      this.waiting.delete(name)
      entry.waiting = false
      if (entry.call) this.c.resumed(entry.call, t)
    } else {
      entry = this.unpaired.get(name)
      if (entry && !entry.submitted) this.unpaired.delete(name)
      else {
        entry = this.newEntry(name, form, false)
        this.unpaired.set(name, entry)
        this.schedule(() => this.unpaired.get(name) === entry && this.unpaired.delete(name))
      }
    }
    entry.submitted = true
    entry.event = e
    if (entry.call) entry.call.input = safely(() => filledValues(form, tool.schema), undefined)
    this.byEvent.set(e, entry)
    this.schedule(() => safely(() => this.afterDispatch(entry)))
  }

  newEntry(name, form, waiting) {
    const call = this.c.enter(name, undefined, "form", waiting ? { waiting: true } : undefined)
    const entry = { name, call, form, responded: false, done: false, submitted: false, waiting, event: null }
    this.open.add(entry)
    return entry
  }

  /** `toolactivated` tells a form tool's call from a refusal: listened for only while there is a form tool. */
  listenActivations() {
    const wanted = this.tools.size > 0
    for (const l of this.activations) l.want(wanted)
  }

  onActivated(e) {
    const name = e && typeof e.toolName === "string" ? e.toolName : ""
    if (!this.c.active || !this.tools.has(name)) return
    const paired = this.unpaired.get(name)
    if (paired && paired.submitted) {
      this.unpaired.delete(name) // its submit came first, in this task
      return
    }
    const form = this.formOf(name)
    if (!form) return
    if (!safely(() => form.hasAttribute("toolautosubmit"), false)) {
      const prev = this.waiting.get(name)
      if (prev) this.finish(prev, false, { name: "AbortError", message: "superseded by another call before the user submitted" })
      this.waiting.set(name, this.newEntry(name, form, true))
      return
    }
    // Activated, no submit: the host refused the input, unless a submit follows in this task.
    const entry = this.newEntry(name, form, false)
    const invalid = this.invalidSeen
    this.unpaired.set(name, entry)
    this.schedule(() =>
      safely(() => {
        this.invalidSeen = false
        if (entry.submitted) return
        if (this.unpaired.get(name) === entry) this.unpaired.delete(name)
        const why = invalid || this.invalidSeen ? "Form validation failed" : "a value outside the form's constraints"
        if (entry.call) {
          entry.call.refused = true // a fact for the diagnosis (facts.js): refused by the browser
          entry.call.outcome = "refused" // on the span: a call without page time (stats keep it out of durations)
        }
        this.finish(entry, false, { name: "UnknownError", message: `refused by the browser before the page ran: ${why}` })
      }),
    )
  }

  responded(event, value) {
    const entry = this.byEvent.get(event)
    if (!entry || entry.responded || entry.done) return
    entry.responded = true
    let then = null
    if (value !== null && (typeof value === "object" || typeof value === "function")) then = safely(() => value.then, null)
    if (typeof then === "function") {
      try {
        then.call(
          value,
          (v) => this.finish(entry, true, v),
          (err) => this.finish(entry, false, err),
        )
      } catch (err) {
        this.finish(entry, false, err)
      }
    } else this.finish(entry, true, value)
  }

  /** Right after the submit's dispatch: answered, prevented without an answer, or leaving the document. */
  afterDispatch(entry) {
    if (entry.done || entry.responded) return
    const e = entry.event
    if (e && e.defaultPrevented) {
      this.finish(entry, false, { name: "UnknownError", message: "the page called preventDefault() on the submit without respondWith()" })
      return
    }
    this.navigated(entry)
  }

  navigated(entry) {
    if (entry.done) return
    if (entry.call) entry.call.outcome = "navigated"
    this.finish(entry, true, null)
    safely(() => this.onNavigated(entry))
  }

  /** The document is going away: every submitted call still open left with it. */
  pagehide() {
    let any = false
    for (const entry of Array.from(this.open)) {
      if (!entry.submitted || entry.responded) continue
      this.navigated(entry)
      any = true
    }
    return any
  }

  cancelRemoved() {
    for (const entry of Array.from(this.open)) {
      if (entry.done || safely(() => entry.form.isConnected, true)) continue
      this.finish(entry, false, { name: "AbortError", message: "the form was removed while the call ran" })
    }
  }

  finish(entry, ok, value) {
    if (entry.done) return
    if (entry.waiting && entry.call) this.c.resumed(entry.call, this.c.clock()) // the wait was never tool time
    entry.waiting = false
    entry.done = true
    entry.event = null
    this.open.delete(entry)
    if (this.waiting.get(entry.name) === entry) this.waiting.delete(entry.name)
    this.c.settle(entry.call, ok, value)
  }

  restore() {
    if (this.observer) safely(() => this.observer.disconnect())
    this.observer = null
    for (const f of this.restores.reverse()) safely(f)
    this.restores = []
    this.host = null
  }
}
return { elementLabel, formFacts, filledValues, FormTools };
})();

// ---- page/bloat.js ----
__m["page/bloat"] = (function () {
// @ts-check
// Result bloat: how much of a text/JSON result is insignificant whitespace, keys repeated across the rows of
// an array of objects, and base64 inside strings. Counts and byte totals only: the text never leaves.
//
// One pass over the text, no parse (a capped prefix is not valid JSON, and a parse would build the whole
// value again). Definitions (docs/diagnosis-facts.md; vectors in tests/vectors/facts/bloat.json):
//   textBytes         UTF-8 bytes of the text examined (the first BLOAT_MAX_CHARS UTF-16 units)
//   whitespaceBytes   space, tab, LF, CR outside strings: what JSON.stringify without indentation drops
//   repeatedKeyBytes  for each array whose first element is an object: in every later object element whose key
//                     set equals the first's, the UTF-8 bytes of each quoted key as written plus its colon
//   repeatedKeyRows   how many such later rows
//   base64Bytes       total length of runs of [A-Za-z0-9+/] (then up to two "=") of >= BASE64_MIN_RUN
//                     characters inside string values (not keys), as written in the text
//   base64Runs        how many such runs
// Text that is not JSON (prose, a truncated or broken document) is counted as one string value: no
// whitespace or key figures, only its base64 runs.

const { utf8Length } = __m["shared/util"];
const BLOAT_MAX_CHARS = 262144
const BASE64_MIN_RUN = 256

/**
 * @typedef {{textBytes:number, whitespaceBytes:number, repeatedKeyBytes:number, repeatedKeyRows:number,
 *   base64Bytes:number, base64Runs:number, truncated?:boolean}} Bloat
 */

/** @returns {Bloat} */
function empty() {
  return { textBytes: 0, whitespaceBytes: 0, repeatedKeyBytes: 0, repeatedKeyRows: 0, base64Bytes: 0, base64Runs: 0 }
}

const B64 = new Uint8Array(128)
for (const c of "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/") B64[c.charCodeAt(0)] = 1

/**
 * Base64 runs in text[from, to): [bytes, runs].
 * @param {string} s @param {number} from @param {number} to @returns {[number, number]}
 */
function base64In(s, from, to) {
  let bytes = 0
  let runs = 0
  let i = from
  while (i < to) {
    const c = s.charCodeAt(i)
    if (c >= 128 || !B64[c]) {
      i++
      continue
    }
    const start = i
    while (i < to) {
      const d = s.charCodeAt(i)
      if (d >= 128 || !B64[d]) break
      i++
    }
    let pad = 0
    while (pad < 2 && i < to && s.charCodeAt(i) === 61 /* = */) {
      i++
      pad++
    }
    const len = i - start
    if (len >= BASE64_MIN_RUN) {
      bytes += len
      runs++
    }
  }
  return [bytes, runs]
}

/**
 * The bloat figures of one text (a result string, an envelope's text item, or an object's JSON text).
 * @param {string} text
 * @returns {Bloat}
 */
function bloatOf(text) {
  const out = empty()
  const truncated = text.length > BLOAT_MAX_CHARS
  const s = truncated ? text.slice(0, BLOAT_MAX_CHARS) : text
  out.textBytes = utf8Length(s)
  if (truncated) out.truncated = true
  if (!scanJson(s, out, truncated)) {
    const [b, r] = base64In(s, 0, s.length)
    out.whitespaceBytes = 0
    out.repeatedKeyBytes = 0
    out.repeatedKeyRows = 0
    out.base64Bytes = b
    out.base64Runs = r
  }
  return out
}

/**
 * @typedef {{array:boolean, expectKey:boolean, keys:string[]|null, keyBytes:number, index:number,
 *   first:Set<string>|null, firstIsObject:boolean}} Frame
 */

/**
 * Scan JSON text, filling `out`. False when the text is not JSON (then `out`'s figures are discarded).
 * @param {string} s @param {Bloat} out @param {boolean} truncated @returns {boolean}
 */
function scanJson(s, out, truncated) {
  let i = 0
  const n = s.length
  while (i < n && isWs(s.charCodeAt(i))) i++
  if (i >= n) return false
  const c0 = s.charCodeAt(i)
  if (c0 !== 123 && c0 !== 91) return false // a bare string, number or prose: not a document with structure
  /** @type {Frame[]} */
  const stack = []
  let ws = i
  let b64Bytes = 0
  let b64Runs = 0
  let keyBytes = 0
  let keyRows = 0
  let done = false
  while (i < n) {
    const c = s.charCodeAt(i)
    if (done) {
      if (!isWs(c)) return false
      ws++
      i++
      continue
    }
    if (isWs(c)) {
      ws++
      i++
      continue
    }
    const top = stack.length ? stack[stack.length - 1] : null
    if (c === 34 /* " */) {
      const start = i
      i = stringEnd(s, i + 1)
      const closed = i < n
      if (!closed && !truncated) return false
      const end = Math.min(i, n) // the closing quote, or the cut
      if (closed) i++
      if (top && !top.array && top.expectKey) {
        // a key: its quoted text as written, and its colon
        const raw = s.slice(start, i)
        if (top.keys) top.keys.push(raw)
        top.keyBytes += utf8Length(raw) + 1
        top.expectKey = false
        while (i < n && isWs(s.charCodeAt(i))) {
          ws++
          i++
        }
        if (i < n && s.charCodeAt(i) !== 58 /* : */) return false
        i++
      } else if (end - start - 1 >= BASE64_MIN_RUN) {
        // a shorter string cannot hold a run
        const [b, r] = base64In(s, start + 1, end)
        b64Bytes += b
        b64Runs += r
      }
      continue
    }
    if (c === 123 /* { */ || c === 91 /* [ */) {
      const parent = top
      if (parent && parent.array && parent.index === 0) parent.firstIsObject = c === 123
      stack.push({ array: c === 91, expectKey: c === 123, keys: c === 123 ? [] : null, keyBytes: 0, index: 0, first: null, firstIsObject: false })
      i++
      continue
    }
    if (c === 125 /* } */ || c === 93 /* ] */) {
      if (!top || top.array !== (c === 93)) return false
      stack.pop()
      const parent = stack.length ? stack[stack.length - 1] : null
      if (!top.array && parent && parent.array && parent.firstIsObject && top.keys) {
        if (parent.index === 0) parent.first = new Set(top.keys)
        else if (parent.first && sameKeys(parent.first, top.keys)) {
          keyBytes += top.keyBytes
          keyRows++
        }
      }
      if (!stack.length) done = true
      i++
      continue
    }
    if (c === 44 /* , */) {
      if (!top) return false
      if (top.array) top.index++
      else top.expectKey = true
      i++
      continue
    }
    // a number or a literal
    if (!top || (!top.array && top.expectKey)) return false
    const start = i
    while (i < n && isLiteral(s.charCodeAt(i))) i++
    if (i === start) return false
  }
  if (!done && !truncated) return false
  out.whitespaceBytes = ws
  out.repeatedKeyBytes = keyBytes
  out.repeatedKeyRows = keyRows
  out.base64Bytes = b64Bytes
  out.base64Runs = b64Runs
  return true
}

const indexOf = String.prototype.indexOf // captured: a page that patches it later does not change a count

/**
 * The index of the quote that closes the string whose content starts at `i` (s.length when none): a native
 * search for each quote, and a quote after an odd run of backslashes is escaped.
 * @param {string} s @param {number} i @returns {number}
 */
function stringEnd(s, i) {
  for (;;) {
    const q = indexOf.call(s, '"', i)
    if (q < 0) return s.length
    let k = q - 1
    while (k >= i && s.charCodeAt(k) === 92) k--
    if ((q - 1 - k) % 2 === 0) return q
    i = q + 1
  }
}

/** @param {Set<string>} first @param {string[]} keys */
function sameKeys(first, keys) {
  if (keys.length !== first.size) return false
  for (const k of keys) if (!first.has(k)) return false
  return true
}

/** @param {number} c */
const isWs = (c) => c === 32 || c === 10 || c === 13 || c === 9

/** @param {number} c  digits, letters (true/false/null, exponents), + - . */
const isLiteral = (c) => (c >= 48 && c <= 57) || (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 43 || c === 45 || c === 46

/**
 * Add one text's figures into a running total (an envelope with several text items).
 * @param {Bloat} into @param {Bloat} b
 */
function addBloat(into, b) {
  into.textBytes += b.textBytes
  into.whitespaceBytes += b.whitespaceBytes
  into.repeatedKeyBytes += b.repeatedKeyBytes
  into.repeatedKeyRows += b.repeatedKeyRows
  into.base64Bytes += b.base64Bytes
  into.base64Runs += b.base64Runs
  if (b.truncated) into.truncated = true
}
return { emptyBloat: empty, BLOAT_MAX_CHARS, BASE64_MIN_RUN, bloatOf, addBloat };
})();

// ---- page/schema_check.js ----
__m["page/schema_check"] = (function () {
// @ts-check
// Does a call's input keep to its tool's own inputSchema? A small JSON-Schema subset, run off the call path:
// Chromium 156 validates form tools only, so a model's bad input to an imperative tool runs unnoticed.
// Only the count of broken constraints, the first one's keyword and its JSON Pointer into the SCHEMA leave
// the page, never the input. Vectors: tests/vectors/facts/schema.json.
//
// Checked: type (string or list; "integer" is a whole number), enum, const, required, properties,
// additionalProperties (false, or a schema), items (a schema), minimum, maximum, exclusiveMinimum/Maximum
// (numbers, reported as "minimum"/"maximum"), minLength/maxLength (code points), pattern (the u flag),
// minItems, maxItems, format (date-time, date, time, email, uri, uuid; others are not checked).
// Not checked (skipped, so they never count as broken): allOf/anyOf/oneOf/not/if, dependent* and the rest.
// A schema holding "$ref" anywhere is not checkable: no facts at all (a skipped $ref could hide a constraint
// an additionalProperties:false beside it depends on). Walks at most MAX_NODES schema nodes and MAX_DEPTH levels.

const MAX_NODES = 2000
const MAX_DEPTH = 32
const MAX_POINTER = 256
const MAX_PATTERN_INPUT = 10000 // strings longer than this are not tested against a pattern (page regexes may be slow)

/** @typedef {{violations:number, constraint?:string, path?:string}} SchemaFacts */

const FORMATS = /** @type {Record<string, RegExp>} */ ({
  "date-time": /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/,
  date: /^\d{4}-\d{2}-\d{2}$/,
  time: /^\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})?$/,
  email: /^[^\s@]+@[^\s@]+$/,
  uri: /^[A-Za-z][A-Za-z0-9+.-]*:[^\s]*$/,
  uuid: /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/,
})

/** @param {unknown} v */
const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v)

/** @param {string} token  RFC 6901 escaping */
const esc = (token) => token.replace(/~/g, "~0").replace(/\//g, "~1")

/** @param {unknown} v @returns {string} */
function typeOf(v) {
  if (v === null) return "null"
  if (Array.isArray(v)) return "array"
  return typeof v
}

/** @param {unknown} v @param {string} t */
function hasType(v, t) {
  const actual = typeOf(v)
  if (t === "integer") return typeof v === "number" && Number.isInteger(v)
  if (t === "number") return typeof v === "number" && Number.isFinite(v)
  return actual === t
}

/** Structural equality of JSON values (enum, const). @param {unknown} a @param {unknown} b @returns {boolean} */
function same(a, b) {
  if (a === b) return true
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false
  if (Array.isArray(a) !== Array.isArray(b)) return false
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => same(x, b[i]))
  const ka = Object.keys(a)
  const kb = Object.keys(b)
  return ka.length === kb.length && ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && same(/** @type {any} */ (a)[k], /** @type {any} */ (b)[k]))
}

/** @param {unknown} schema @param {number} depth @returns {boolean} */
function hasRef(schema, depth) {
  if (depth > MAX_DEPTH || schema === null || typeof schema !== "object") return false
  if (!Array.isArray(schema) && Object.prototype.hasOwnProperty.call(schema, "$ref")) return true
  for (const v of Object.values(schema)) if (hasRef(v, depth + 1)) return true
  return false
}

/** @type {WeakMap<object, boolean>} schema object -> holds a $ref */
const refs = new WeakMap()

/** @param {string} s */
const codePoints = (s) => {
  let n = 0
  for (const _ of s) n++
  return n
}

/**
 * Check `input` against `schema`. Null when the call is not checkable (no schema object, a $ref, an input
 * that is not JSON); otherwise the count of broken constraints and the first one.
 * @param {unknown} schema
 * @param {unknown} input
 * @returns {SchemaFacts|null}
 */
function checkInput(schema, input) {
  if (!isObject(schema)) return null
  const o = /** @type {object} */ (schema)
  let ref = refs.get(o)
  if (ref === undefined) refs.set(o, (ref = hasRef(schema, 0))) // the agent hands the same parsed schema each call
  if (ref) return null
  let value = input
  if (value === undefined) value = {} // a call without arguments: the host passes an empty object
  if (typeof value === "function" || typeof value === "symbol" || typeof value === "bigint") return null
  const st = { violations: 0, constraint: /** @type {string|undefined} */ (undefined), path: /** @type {string|undefined} */ (undefined), nodes: 0 }
  try {
    walk(/** @type {Record<string, any>} */ (schema), value, "", 0, st)
  } catch {
    return null // a getter threw, a page regex failed: not checkable
  }
  /** @type {SchemaFacts} */
  const out = { violations: st.violations }
  if (st.constraint) {
    out.constraint = st.constraint
    out.path = st.path
  }
  return out
}

/**
 * @param {Record<string, any>} s  a schema object
 * @param {unknown} v  the value at this place of the input
 * @param {string} at  JSON Pointer of `s` in the tool's schema
 * @param {number} depth
 * @param {{violations:number, constraint:string|undefined, path:string|undefined, nodes:number}} st
 */
function walk(s, v, at, depth, st) {
  if (depth > MAX_DEPTH || ++st.nodes > MAX_NODES) return
  /** @param {string} keyword @param {string} [pointer] */
  const broke = (keyword, pointer) => {
    st.violations++
    if (st.constraint === undefined) {
      st.constraint = keyword
      const p = pointer ?? `${at}/${keyword}`
      st.path = p.length > MAX_POINTER ? p.slice(0, MAX_POINTER) : p
    }
  }
  if ("type" in s) {
    const types = Array.isArray(s.type) ? s.type : [s.type]
    if (types.every((t) => typeof t === "string") && types.length && !types.some((t) => hasType(v, t))) {
      broke("type")
      return // the other keywords describe a value of another type
    }
  }
  if (Array.isArray(s.enum) && !s.enum.some((/** @type {unknown} */ e) => same(e, v))) broke("enum")
  if ("const" in s && !same(s.const, v)) broke("const")
  if (typeof v === "number") {
    if (typeof s.minimum === "number" && v < s.minimum) broke("minimum")
    if (typeof s.exclusiveMinimum === "number" && v <= s.exclusiveMinimum) broke("minimum", `${at}/exclusiveMinimum`)
    if (typeof s.maximum === "number" && v > s.maximum) broke("maximum")
    if (typeof s.exclusiveMaximum === "number" && v >= s.exclusiveMaximum) broke("maximum", `${at}/exclusiveMaximum`)
  }
  if (typeof v === "string") {
    const needLength = typeof s.minLength === "number" || typeof s.maxLength === "number"
    const len = needLength ? codePoints(v) : 0
    if (typeof s.minLength === "number" && len < s.minLength) broke("minLength")
    if (typeof s.maxLength === "number" && len > s.maxLength) broke("maxLength")
    if (typeof s.pattern === "string" && v.length <= MAX_PATTERN_INPUT) {
      let re = null
      try {
        re = new RegExp(s.pattern, "u")
      } catch {
        re = null // not a pattern this engine reads: not checked
      }
      if (re && !re.test(v)) broke("pattern")
    }
    if (typeof s.format === "string" && Object.prototype.hasOwnProperty.call(FORMATS, s.format) && !FORMATS[s.format].test(v)) broke("format")
  }
  if (Array.isArray(v)) {
    if (typeof s.minItems === "number" && v.length < s.minItems) broke("minItems")
    if (typeof s.maxItems === "number" && v.length > s.maxItems) broke("maxItems")
    if (isObject(s.items)) for (let i = 0; i < v.length && st.nodes <= MAX_NODES; i++) walk(s.items, v[i], `${at}/items`, depth + 1, st)
  }
  if (isObject(v)) {
    const obj = /** @type {Record<string, unknown>} */ (v)
    const props = isObject(s.properties) ? s.properties : {}
    if (Array.isArray(s.required)) {
      for (const k of s.required) if (typeof k === "string" && !Object.prototype.hasOwnProperty.call(obj, k)) broke("required")
    }
    for (const k of Object.keys(obj)) {
      if (Object.prototype.hasOwnProperty.call(props, k)) {
        if (isObject(props[k])) walk(props[k], obj[k], `${at}/properties/${esc(k)}`, depth + 1, st)
      } else if (s.additionalProperties === false) broke("additionalProperties")
      else if (isObject(s.additionalProperties)) walk(s.additionalProperties, obj[k], `${at}/additionalProperties`, depth + 1, st)
    }
  }
}
return { MAX_NODES, MAX_DEPTH, checkInput };
})();

// ---- page/images.js ----
__m["page/images"] = (function () {
// @ts-check
// Image facts: the format, pixel size and bytes of a result's largest image, and what the same pixels weigh
// re-encoded as JPEG (quality JPEG_QUALITY), as they are and scaled so the longer side is at most FIT_MAX_SIDE
// (the largest side a model takes without scaling it down itself). Measured by really re-encoding in the
// page (createImageBitmap, OffscreenCanvas.convertToBlob), never on the call path (facts.js runs it in an
// idle callback) and sampled (facts.js: one image per tool per IMAGE_EVERY_MS). The image never leaves.

const JPEG_QUALITY = 0.8
const FIT_MAX_SIDE = 1568
const MAX_IMAGE_BASE64 = 16 * 1024 * 1024 // larger images are not re-encoded
const MAX_PIXELS = 40_000_000

/** @typedef {{mime:string, width:number, height:number, bytes:number, jpegBytes:number, fitBytes:number, fitWidth:number, fitHeight:number}} ImageFacts */

/**
 * The largest image item ({type:"image", data: base64}) of an MCP envelope (an object, or its JSON text),
 * or null. @param {unknown} value @returns {string|null}
 */
function largestImage(value) {
  let v = value
  if (typeof v === "string") {
    if (v.charCodeAt(0) !== 123 || !v.includes('"image"')) return null
    try {
      v = JSON.parse(v)
    } catch {
      return null
    }
  }
  if (v === null || typeof v !== "object" || !Array.isArray(/** @type {any} */ (v).content)) return null
  let best = null
  for (const item of /** @type {any} */ (v).content) {
    if (!item || typeof item !== "object" || item.type !== "image") continue
    const data = item.data
    if (typeof data === "string" && data.length && (best === null || data.length > best.length)) best = data
  }
  return best
}

/**
 * The format read from the bytes themselves (never the page's own mimeType text).
 * @param {Uint8Array} b @returns {string}
 */
function sniffMime(b) {
  const at = (/** @type {number[]} */ sig, off = 0) => sig.every((x, i) => b[off + i] === x)
  if (at([0x89, 0x50, 0x4e, 0x47])) return "image/png"
  if (at([0xff, 0xd8, 0xff])) return "image/jpeg"
  if (at([0x47, 0x49, 0x46, 0x38])) return "image/gif"
  if (at([0x52, 0x49, 0x46, 0x46]) && at([0x57, 0x45, 0x42, 0x50], 8)) return "image/webp"
  if (at([0x42, 0x4d])) return "image/bmp"
  if (at([0x66, 0x74, 0x79, 0x70], 4) && (at([0x61, 0x76, 0x69, 0x66], 8) || at([0x61, 0x76, 0x69, 0x73], 8))) return "image/avif"
  return "image/unknown"
}

/**
 * Decode one image and re-encode it: the work itself. The fitted size scales the longer side to maxSide
 * (FIT_MAX_SIDE), each side rounded to the nearest pixel and at least 1. Self-contained (it runs in a worker from its own source
 * text): it reads only its parameters and the globals of `g`. Resolves {facts, syncMs} (facts null where the
 * browser cannot decode it or it is too large); syncMs is the time of its own synchronous steps.
 * @param {string} data  base64
 * @param {{quality:number, maxSide:number, maxPixels:number, mime:string}} o  `mime` as sniffMime read it
 * @param {any} g
 * @returns {Promise<{facts: ImageFacts|null, syncMs: number}>}
 */
async function reencode(data, o, g) {
  const clock = () => g.performance.now()
  let syncMs = 0
  let t = clock()
  let bytes = null
  try {
    if (typeof g.Uint8Array.fromBase64 === "function") bytes = g.Uint8Array.fromBase64(data.replace(/\s+/g, ""))
    else {
      const bin = g.atob(data)
      bytes = new g.Uint8Array(bin.length)
      for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i)
    }
  } catch {
    bytes = null
  }
  if (!bytes) return { facts: null, syncMs: clock() - t }
  const blob = new g.Blob([bytes], o.mime === "image/unknown" ? {} : { type: o.mime })
  syncMs += clock() - t
  let bitmap
  try {
    bitmap = await g.createImageBitmap(blob)
  } catch {
    return { facts: null, syncMs }
  }
  const encode = (/** @type {number} */ w, /** @type {number} */ h) => {
    const canvas = new g.OffscreenCanvas(w, h)
    canvas.getContext("2d").drawImage(bitmap, 0, 0, w, h)
    return canvas.convertToBlob({ type: "image/jpeg", quality: o.quality })
  }
  try {
    const width = bitmap.width
    const height = bitmap.height
    if (!width || !height || width * height > o.maxPixels) return { facts: null, syncMs }
    const side = Math.max(width, height)
    const k = side > o.maxSide ? o.maxSide / side : 1
    const fitWidth = k === 1 ? width : Math.max(1, Math.round(width * k))
    const fitHeight = k === 1 ? height : Math.max(1, Math.round(height * k))
    t = clock()
    const full = encode(width, height)
    syncMs += clock() - t
    const jpeg = await full
    let fit = jpeg
    if (k !== 1) {
      t = clock()
      const scaled = encode(fitWidth, fitHeight)
      syncMs += clock() - t
      fit = await scaled
    }
    return { facts: { mime: o.mime, width, height, bytes: bytes.length, jpegBytes: jpeg.size, fitBytes: fit.size, fitWidth, fitHeight }, syncMs }
  } finally {
    try {
      bitmap.close()
    } catch {
      /* already closed */
    }
  }
}

// The worker's whole program: reencode, and a message loop. Made once, from reencode's own source.
const WORKER_SOURCE = `"use strict";const reencode = ${reencode.toString().replace(/^async function reencode/, "async function")};
onmessage = (e) => { const m = e.data; reencode(m.data, m.o, self).then((r) => postMessage({ id: m.id, r }), () => postMessage({ id: m.id, r: { facts: null, syncMs: 0 } })) }`
const WORKER_TIMEOUT_MS = 20_000

/** @type {WeakMap<object, {broken: boolean}>} per global: the worker could not be made (CSP, Trusted Types, no Worker) */
const workerState = new WeakMap()

/**
 * Run `reencode` in a worker (a Blob URL): the decoding and both encodings leave the page's main thread, which
 * only copies the base64 text into the message. Null where the page allows no such worker.
 * @param {any} g @param {string} data @param {object} o
 * @returns {Promise<{facts: ImageFacts|null, syncMs: number}>|null}
 */
function inWorker(g, data, o) {
  const state = workerState.get(g) || { broken: false }
  workerState.set(g, state)
  if (state.broken || typeof g.Worker !== "function" || !g.URL || typeof g.URL.createObjectURL !== "function") return null
  let worker
  let url = null
  try {
    url = g.URL.createObjectURL(new g.Blob([WORKER_SOURCE], { type: "text/javascript" }))
    worker = new g.Worker(url)
  } catch {
    state.broken = true
    return null
  } finally {
    if (url) {
      try {
        g.URL.revokeObjectURL(url)
      } catch {
        /* nothing to free */
      }
    }
  }
  return new Promise((resolve) => {
    let done = false
    const finish = (/** @type {{facts: ImageFacts|null, syncMs: number}|null} */ r) => {
      if (done) return
      done = true
      g.clearTimeout(timer)
      try {
        worker.terminate()
      } catch {
        /* gone */
      }
      resolve(r)
    }
    const timer = g.setTimeout(() => finish({ facts: null, syncMs: 0 }), WORKER_TIMEOUT_MS)
    worker.onmessage = (/** @type {MessageEvent} */ e) => finish(e.data && e.data.r ? e.data.r : { facts: null, syncMs: 0 })
    // A worker the page's policy refused fails here, before any answer: this page gets the in-page path from now.
    worker.onerror = (/** @type {Event} */ e) => {
      try {
        e.preventDefault()
      } catch {
        /* not cancelable */
      }
      state.broken = true
      finish(null)
    }
    try {
      worker.postMessage({ id: 1, data, o })
    } catch {
      state.broken = true
      finish(null)
    }
  })
}

/**
 * Re-encode one image and measure it: in a worker where the page allows one, else on the main thread (still in
 * an idle callback). Resolves null where the browser cannot. `cost.ms` gets the main thread's share of the time
 * of our own synchronous steps (in a worker: none of the decoding or encoding).
 * @param {string} data  base64
 * @param {{g?: any, cost?: {ms:number, images:number, inPage?: number}, worker?: boolean}} [o]
 * @returns {Promise<ImageFacts|null>}
 */
async function measureImage(data, o = {}) {
  const g = o.g || globalThis
  const cost = o.cost || { ms: 0, images: 0 }
  if (typeof g.createImageBitmap !== "function" || typeof g.OffscreenCanvas !== "function" || typeof g.Blob !== "function") return null
  if (data.length > MAX_IMAGE_BASE64) return null
  const t = g.performance.now()
  // The format from the first bytes only (a dozen base64 characters), never the page's own mimeType text.
  let head = null
  try {
    const bin = g.atob(data.slice(0, 16).replace(/[^A-Za-z0-9+/]/g, ""))
    head = new Uint8Array(bin.length)
    for (let i = 0; i < bin.length; i++) head[i] = bin.charCodeAt(i)
  } catch {
    head = null
  }
  if (!head) return null
  const opts = { quality: JPEG_QUALITY, maxSide: FIT_MAX_SIDE, maxPixels: MAX_PIXELS, mime: sniffMime(head) }
  const pending = o.worker === false ? null : inWorker(g, data, opts)
  cost.ms += g.performance.now() - t
  let r = pending ? await pending : null
  if (r === null) {
    r = await reencode(data, opts, g)
    cost.ms += r.syncMs
    cost.inPage = (cost.inPage || 0) + 1
  }
  if (r.facts) cost.images++
  return r.facts
}
return { JPEG_QUALITY, FIT_MAX_SIDE, MAX_IMAGE_BASE64, MAX_PIXELS, largestImage, sniffMime, reencode, measureImage };
})();

// ---- page/facts.js ----
__m["page/facts"] = (function () {
// @ts-check
// Facts about each call, for the diagnosis (docs/diagnosis-facts.md): result bloat, the input against the
// tool's inputSchema, a repeat of an earlier call, a refusal by the browser, and (sampled) the largest image
// re-encoded. Computed off the call path: the collector hands each accounted call here (`take`, a push), and
// the work runs in an idle callback later; at most one `facts` frame per span leaves, after the span. Only
// numbers, a keyword, a pointer into the schema and an earlier seq leave: never an input, a result or an image.

const { bloatOf, addBloat, emptyBloat } = __m["page/bloat"];
const { checkInput } = __m["page/schema_check"];
const { largestImage, measureImage } = __m["page/images"];
const { safely } = __m["shared/util"];
const IMAGE_EVERY_MS = 30_000 // at most one image re-encoded per tool in this interval
// Bloat is one pass over the text: a 128 KB result took 170 us a call (0.5 ms pretty-printed), at 100 calls/s
// more than the page's own work. Results up to BLOAT_ALWAYS_CHARS are measured on every call; a longer one at
// most once per tool in BLOAT_EVERY_MS. The diagnosis averages the calls that carry bloat (a tool's results
// are alike), so sampling changes its numbers by no more than the results differ.
const BLOAT_ALWAYS_CHARS = 16_384
const BLOAT_EVERY_MS = 1000
const MAX_QUEUED = 64 // calls awaiting facts; beyond this a call gets none (counted in `dropped`)
const MAX_REPEAT_KEYS = 4096 // remembered (tool, input) hashes per session, oldest forgotten first
const MAX_CANONICAL = 262144 // inputs whose canonical text is longer are not checked for repeats
const IDLE_TIMEOUT_MS = 1000
const IDLE_FALLBACK_MS = 50

/**
 * @typedef {object} Job
 * @property {number} seq
 * @property {string} tool
 * @property {unknown} input
 * @property {unknown} value  the result (undefined for a thrown call)
 * @property {boolean} ok
 * @property {string|undefined} profile
 * @property {boolean} refused  a form call the browser refused before the page ran
 */

/**
 * The canonical text of an input: JSON with every object's keys sorted, so {a,b} and {b,a} are one input.
 * Null for what is not JSON (a cycle, a bigint) or too long.
 * @param {unknown} v @returns {string|null}
 */
function canonical(v) {
  const seen = new Set()
  let size = 0
  /** @param {unknown} x @returns {string} */
  const go = (x) => {
    if (++size > MAX_CANONICAL) throw new Error("long")
    if (x === null || typeof x !== "object") {
      const t = JSON.stringify(x)
      if (t === undefined) return "null"
      size += t.length
      return t
    }
    if (seen.has(x)) throw new Error("cycle")
    seen.add(x)
    let out
    if (Array.isArray(x)) out = "[" + x.map(go).join(",") + "]"
    else {
      const keys = Object.keys(x).sort()
      const parts = []
      for (const k of keys) {
        const val = /** @type {any} */ (x)[k]
        if (val === undefined || typeof val === "function" || typeof val === "symbol") continue
        parts.push(JSON.stringify(k) + ":" + go(val))
      }
      out = "{" + parts.join(",") + "}"
    }
    seen.delete(x)
    return out
  }
  try {
    const text = go(v === undefined ? {} : v)
    return text.length > MAX_CANONICAL ? null : text
  } catch {
    return null
  }
}

/**
 * A keyed hash (two seeded 32-bit murmur-style lanes and the length): the key is made per session and never
 * leaves the page, nor does the hash; only the seq of the earlier call does.
 * @param {string} s @param {Uint32Array} key @returns {string}
 */
function keyedHash(s, key) {
  let h1 = key[0] >>> 0
  let h2 = key[1] >>> 0
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    h1 = Math.imul(h1 ^ c, 0x85ebca6b)
    h1 = (h1 << 13) | (h1 >>> 19)
    h2 = Math.imul(h2 ^ c, 0xc2b2ae35)
    h2 = (h2 << 17) | (h2 >>> 15)
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 0x85ebca6b) ^ key[2]
  h2 = Math.imul(h2 ^ (h2 >>> 13), 0xc2b2ae35) ^ key[3]
  return `${h1 >>> 0}.${h2 >>> 0}.${s.length}`
}

/** @param {any} g @returns {Uint32Array} */
function newKey(g) {
  const key = new Uint32Array(4)
  const c = g.crypto
  if (c && typeof c.getRandomValues === "function") safely(() => c.getRandomValues(key))
  else for (let i = 0; i < 4; i++) key[i] = Math.floor(Math.random() * 0x100000000)
  return key
}

/**
 * The texts a result's bloat is measured on: an MCP envelope's text items (the model reads each as a
 * document), a string result as itself, any other object or array as its JSON text.
 * @param {unknown} value @param {string|undefined} profile @returns {string[]|null}
 */
function textsOf(value, profile) {
  let v = value
  if (typeof v === "string") {
    if (v.charCodeAt(0) === 123 && v.includes('"content"')) {
      const inner = safely(() => JSON.parse(/** @type {string} */ (v)), null)
      if (isEnvelope(inner)) return envelopeTexts(inner)
    }
    return v === "" && profile !== "form" ? null : [v]
  }
  if (v === null || typeof v !== "object") return null
  if (isEnvelope(v)) return envelopeTexts(v)
  const text = safely(() => JSON.stringify(v), undefined)
  return typeof text === "string" ? [text] : null
}

/** @param {any} v */
const isEnvelope = (v) => v !== null && typeof v === "object" && !Array.isArray(v) && Array.isArray(v.content)

/** @param {any} env @returns {string[]|null} */
function envelopeTexts(env) {
  const out = []
  for (const item of env.content) if (item && typeof item === "object" && item.type === "text" && typeof item.text === "string") out.push(item.text)
  return out.length ? out : null
}

class FactsTaker {
  /**
   * @param {object} o
   * @param {(seq: number, facts: object) => void} o.send  one call's facts (only called with at least one member)
   * @param {(tool: string) => unknown} o.schemaOf  the tool's inputSchema, or undefined
   * @param {any} [o.global]
   * @param {() => number} [o.clock]
   * @param {boolean} [o.images]  re-encode images (default true)
   * @param {Function} [o.setTimeout]  where the page has no requestIdleCallback
   */
  constructor({ send, schemaOf, global: g = globalThis, clock, images = true, setTimeout: st }) {
    this.send = send
    this.schemaOf = schemaOf
    this.g = g
    this.clock = clock || (() => (g.performance ? g.performance.now() : Date.now()))
    this.images = images
    this.st = st || ((/** @type {Function} */ fn, /** @type {number} */ ms) => g.setTimeout(fn, ms))
    /** @type {Job[]} */
    this.queue = []
    this.scheduled = false
    this.key = newKey(g)
    /** @type {Map<string, number>} keyed hash -> the first seq with it */
    this.seen = new Map()
    /** @type {Map<string, number>} tool -> when its last image was re-encoded */
    this.imageAt = new Map()
    /** @type {Map<string, number>} tool -> when a long result of it was last measured for bloat */
    this.bloatAt = new Map()
    this.cost = { calls: 0, ms: 0, dropped: 0, images: 0, imageMs: 0, bloatSkipped: 0 }
    this.stopped = false
  }

  /** The collector accounted a call: queue it (its bodies are held here until the idle callback). @param {Job} job */
  take(job) {
    if (this.stopped) return
    if (this.queue.length >= MAX_QUEUED) {
      this.cost.dropped++
      return
    }
    this.queue.push(job)
    if (!this.scheduled) {
      this.scheduled = true
      this.later(() => this.run())
    }
  }

  /** @param {() => void} fn  an idle callback where the page has them, else a task a little later */
  later(fn) {
    const g = this.g
    if (typeof g.requestIdleCallback === "function") safely(() => g.requestIdleCallback(() => safely(fn), { timeout: IDLE_TIMEOUT_MS }))
    else safely(() => this.st(() => safely(fn), IDLE_FALLBACK_MS))
  }

  run() {
    this.scheduled = false
    const jobs = this.queue
    this.queue = []
    const t0 = this.clock()
    for (const job of jobs) {
      safely(() => this.one(job))
      // drop the bodies as soon as they are measured
      job.input = undefined
      job.value = undefined
    }
    this.cost.calls += jobs.length
    this.cost.ms += this.clock() - t0
  }

  /** @param {Job} job */
  one(job) {
    /** @type {Record<string, any>} */
    const facts = {}
    if (job.refused) facts.refused = { by: "browser" }
    if (job.ok) {
      const texts = textsOf(job.value, job.profile)
      if (texts && this.bloatDue(job.tool, texts)) {
        const total = emptyBloat()
        for (const t of texts) addBloat(total, bloatOf(t))
        facts.bloat = total
      }
    }
    if (!job.refused && job.profile !== "form" && job.profile !== "mcp-b-form") {
      const schema = safely(() => this.schemaOf(job.tool), undefined)
      if (schema !== undefined) {
        const s = checkInput(schema, job.input)
        if (s) facts.schema = s
      }
      const text = canonical(job.input)
      if (text !== null) {
        const k = keyedHash(JSON.stringify(job.tool) + text, this.key)
        const first = this.seen.get(k)
        if (first !== undefined) facts.repeat = { of: first }
        else {
          this.seen.set(k, job.seq)
          if (this.seen.size > MAX_REPEAT_KEYS) this.seen.delete(this.seen.keys().next().value)
        }
      }
    }
    const data = job.ok && this.images ? largestImage(job.value) : null
    const last = this.imageAt.get(job.tool)
    if (data !== null && (last === undefined || this.clock() - last >= IMAGE_EVERY_MS)) {
      this.imageAt.set(job.tool, this.clock())
      if (this.imageAt.size > 1024) this.imageAt.delete(this.imageAt.keys().next().value)
      const cost = { ms: 0, images: 0 }
      measureImage(data, { g: this.g, cost }).then(
        (image) => {
          this.cost.images += cost.images
          this.cost.imageMs += cost.ms
          if (image) facts.image = image
          this.emit(job.seq, facts)
        },
        () => this.emit(job.seq, facts),
      )
      return
    }
    this.emit(job.seq, facts)
  }

  /** Whether this call's texts are measured for bloat: short ones always, long ones once a tool a BLOAT_EVERY_MS. @param {string} tool @param {string[]} texts */
  bloatDue(tool, texts) {
    let chars = 0
    for (const t of texts) chars += t.length
    if (chars <= BLOAT_ALWAYS_CHARS) return true
    const now = this.clock()
    const last = this.bloatAt.get(tool)
    if (last !== undefined && now - last < BLOAT_EVERY_MS) {
      this.cost.bloatSkipped++
      return false
    }
    this.bloatAt.delete(tool) // re-inserted last: the map forgets the tool measured longest ago
    this.bloatAt.set(tool, now)
    if (this.bloatAt.size > 1024) this.bloatAt.delete(this.bloatAt.keys().next().value)
    return true
  }

  /** @param {number} seq @param {Record<string, any>} facts */
  emit(seq, facts) {
    if (this.stopped) return
    for (const _ in facts) return safely(() => this.send(seq, facts))
  }

  /** The page reset its numbers (the relay drops its facts too): repeats count from here. */
  reset() {
    this.seen.clear()
    this.imageAt.clear()
    this.bloatAt.clear()
  }

  /** Detached: nothing more is taken or sent. */
  stop() {
    this.stopped = true
    this.queue = []
  }
}
return { IMAGE_EVERY_MS, BLOAT_ALWAYS_CHARS, BLOAT_EVERY_MS, MAX_QUEUED, MAX_REPEAT_KEYS, canonical, keyedHash, textsOf, FactsTaker };
})();

// ---- page/gate.js ----
__m["page/gate"] = (function () {
// The ?perf= gate, with webmcp-profiler's values: `1|on|true` and `overlay` are remembered per origin in
// localStorage under `webmcp-perf:mode`, `0|off|false` switch off and forget. allow() has the last word: false
// keeps the agent off and clears a remembered mode. With no query and nothing remembered, `defaultOn`
// decides: true when the script came from the relay (the user pasted the tag on purpose), false otherwise.

const { safely } = __m["shared/util"];
/** The first value of `name` in a query string ("?a=1&perf=0"), or null. No URL API needed. */
function queryParam(search, name) {
  const s = String(search || "").replace(/^\?/, "")
  for (const part of s.split("&")) {
    const i = part.indexOf("=")
    const key = safely(() => decodeURIComponent((i < 0 ? part : part.slice(0, i)).replace(/\+/g, " ")), null)
    if (key === name) return safely(() => decodeURIComponent((i < 0 ? "" : part.slice(i + 1)).replace(/\+/g, " ")), "")
  }
  return null
}

const ON = ["1", "on", "true"]
const OFF = ["0", "off", "false"]

/**
 * webmcp-profiler's gate values. `1|on|true` switch on and remember "1"; `overlay` switches on and remembers
 * "overlay"; `0|off|false` switch off for this load and forget the remembered mode (so a page served by the
 * relay is off now, whatever the default); anything else is `rejected` (the caller warns) and changes nothing.
 * @param {object} o
 * @param {string} [o.search]  location.search
 * @param {Storage|null} [o.storage]  localStorage (null when unavailable)
 * @param {string} [o.param]
 * @param {string} [o.storageKey]
 * @param {() => boolean} [o.allow]
 * @param {boolean} [o.defaultOn]
 * @returns {{on:boolean, mode:"1"|"overlay"|null, rejected:string|null, reason:string}}
 */
function gate({ search = "", storage = null, param = "perf", storageKey = "webmcp-perf:mode", allow, defaultOn = false } = {}) {
  let allowed = true
  if (typeof allow === "function") {
    try {
      allowed = allow() !== false
    } catch {
      allowed = false
    }
  }
  if (!allowed) {
    if (storage) safely(() => storage.removeItem(storageKey))
    return { on: false, mode: null, rejected: null, reason: "allow() said no" }
  }
  const q = queryParam(search, param)
  let rejected = null
  if (q !== null && q !== "") {
    if (OFF.includes(q)) {
      if (storage) safely(() => storage.removeItem(storageKey))
      return { on: false, mode: null, rejected: null, reason: `?${param}=${q}` }
    }
    // The URL wins for this load even where storage is blocked; storage only carries the mode to the next one.
    const mode = ON.includes(q) ? "1" : q === "overlay" ? "overlay" : null
    if (mode) {
      if (storage) safely(() => storage.setItem(storageKey, mode))
      return { on: true, mode, rejected: null, reason: `?${param}=${q}` }
    }
    rejected = q
  }
  let stored = null
  if (storage) safely(() => {
    const v = storage.getItem(storageKey)
    stored = v === "1" || v === "overlay" ? v : null
  })
  if (stored) return { on: true, mode: stored, rejected, reason: `remembered ${stored}` }
  return { on: !!defaultOn, mode: null, rejected, reason: defaultOn ? "default on (loaded from the relay)" : "default off" }
}
return { queryParam, gate };
})();

// ---- page/index.js ----
__m["page/index"] = (function () {
// attach(): compose the collector, interceptor, channel and uplink for this context, and expose the
// console API. maybeAttach(): the same behind the ?perf= gate. Nothing here throws into the page.

const { Collector } = __m["page/collector"];
const { Interceptor } = __m["page/interceptor"];
const { ChannelMirror, postsSpans } = __m["page/channel"];
const { Uplink, Delivery, FLUSH_MS } = __m["transport/uplink"];
const { unwatchedMark } = __m["transport/pacing"];
const frames = __m["transport/frames"];
const { PROTOCOL } = __m["transport/frames"];
const { PromptWatcher } = __m["page/prompt"];
const { FormTools } = __m["page/forms"];
const { FactsTaker } = __m["page/facts"];
const { resultText, errorText } = __m["page/measure"];
const { gate } = __m["page/gate"];
const { makeApi, reportView, reportToolDescriptor, manifest, helpText, overlayNotice } = __m["page/console"];
const { markInternal } = __m["page/wrap"];
const { statusFor } = __m["page/status"];
const { DEFAULTS, BAKED_UPLINK, AGENT, VERSION } = __m["shared/config"];
const { newSessionId, cap, safely, makeTaskScheduler, utf8Length, now } = __m["shared/util"];

const { SessionStats, summaryLine, fmtBytes, fmtCount, fmtDuration, fmtMs, traceEvents } = __m["page/stats"];
const MAX_FOREIGN_SPANS = 500
const MAX_RESULT_TEXT = 256 * 1024 // characters of an invoked tool's result text (the relay's cap)
const COMMAND_ID = /^[\x21-\x7e]{1,32}$/
const NAV_KEY = "wmcp-top:navigated" // sessionStorage: the form call whose submission left the last document
const NAV_NOTE_MS = 60_000
const AGENTS = new WeakMap() // api -> Agent, for tests and tooling
const LIVE = new WeakMap() // global -> the attached api (also under globalName: false): one agent a window
const NOTES = new WeakMap() // api -> adds a hint of the agent's own to its status (watchLateConfig)
// What profilerTool needs of an API, under a registered symbol, so a second copy of the agent (the /agent.mjs
// module imported next to the classic script) can make the report tool of the global API. Only the report's
// view: the Agent itself (its uplink address, with the token) stays out of the page's reach.
const REPORT_KEY = Symbol.for("wmcp-top/report-tool")

/** The Agent behind a console API object (tests and tooling; not a page-facing member). */
function agentOf(api) {
  return AGENTS.get(api) || null
}

/**
 * The uplink (relay WebSocket) to dial: config.uplink (a ws:// URL; false for none), else the address the
 * relay baked in, else globalThis.__WMCP_UPLINK__. `relay` is webmcp-profiler's option and means the
 * BroadcastChannel only, never the socket.
 * @param {{uplink?: string|false|undefined, relay?: boolean}} config
 * @param {any} [g]  the global object the agent runs in (a test's stand-in, or `{}`: none)
 */
function resolveUplink(config, g = globalThis) {
  const pick = (u) => {
    const url = typeof u === "string" ? u : u && typeof u === "object" && typeof u.url === "string" ? u.url : null
    return url && /^wss?:\/\//.test(url) ? { url, protocol: PROTOCOL } : null
  }
  if (config && config.uplink === false) return null
  return pick(config && config.uplink) || pick(BAKED_UPLINK) || pick(safely(() => g.__WMCP_UPLINK__, null))
}

function contextOf(g) {
  if (typeof g.WorkerGlobalScope === "function" && safely(() => g instanceof g.WorkerGlobalScope, false)) return "worker"
  try {
    return g.top && g.top !== g ? "iframe" : "top"
  } catch {
    return "iframe"
  }
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
    const sessionId = newSessionId()
    this.schedule = config.schedule || makeTaskScheduler(g)
    // One pair of timer functions for the collector, the uplink and the channel (tests pass manual ones).
    const timers = {
      setTimeout: config.setTimeout || ((f, ms) => g.setTimeout(f, ms)),
      clearTimeout: config.clearTimeout || ((t) => g.clearTimeout(t)),
    }
    this.relay = resolveUplink(config, g)
    this.pendingStarts = []
    this.lastStatus = null
    this.foreign = new Map()
    this.reportTool = null
    this.listeners = []
    const self = this
    this.collector = new Collector({
      sessionId,
      config,
      clock: config.clock,
      random: config.random,
      schedule: this.schedule,
      ...timers,
      perf: config.performance !== undefined ? config.performance : g.performance,
      // calls are accounted in the batch window they leave in (pacing.js; flushMs 0: none)
      windowMs: config.flushMs,
      sink: {
        start: (call) => self.onStart(call),
        span: (span) => self.onSpan(span),
        update: (seq, ms) => self.onUpdate(seq, ms),
        evicted: (span) => self.feed && self.feed.delivery.evicted(span.seq),
        beforeReset: () => self.uplink && safely(() => self.uplink.flush()),
        tool: (rec, change) => self.onTool(rec, change),
        ledger: () => self.uplink && self.uplink.ledgerDirty(self.collector.sessionId),
        status: () => self.onStatus(),
        event: (e) => self.uplink && self.send(frames.event(self.collector.sessionId, e.at, e.kind, e.detail)),
        // Opt-in payload capture: the socket only (the relay hands it to OpenTelemetry), never the channel.
        payload: (p) => self.uplink && self.uplink.welcome && self.uplink.welcome.payloads && self.send(frames.payload(self.collector.sessionId, { seq: p.seq, arguments: p.arguments, result: p.result, ...(p.error ? { error: p.error } : {}) })),
      },
    })
    // Diagnosis facts (facts.js): computed in idle callbacks, sent to the relay only (never the channel).
    if (config.facts !== false) {
      this.collector.facts = new FactsTaker({
        global: g,
        send: (seq, facts) => self.uplink && self.send(frames.facts(self.collector.sessionId, seq, facts)),
        schemaOf: (tool) => self.schemaOf(tool),
        setTimeout: timers.setTimeout,
        clock: config.clock,
      })
    }
    this.schemas = new Map()
    this.interceptor = new Interceptor(this.collector, {
      global: g,
      pollMs: config.pollMs,
      setInterval: config.setInterval || ((f, ms) => g.setInterval(f, ms)),
      clearInterval: config.clearInterval || ((t) => g.clearInterval(t)),
    })
    this.forms = new FormTools(this.collector, { global: g, schedule: this.schedule, onNavigated: (entry) => this.onNavigated(entry) })
    this.interceptor.forms = this.forms
    this.forms.wrapped = (name) => this.interceptor.pendingNames.has(name) || !!(this.interceptor.live.get(name) || {}).wrapper
    this.interceptor.onFound = (host, location) => {
      if (this.wantReportTool) this.registerReportTool()
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
            send: (step) => self.uplink && self.send(frames.prompt(self.collector.sessionId, step)),
            // Opt-in (capturePayloads) and only to a relay that wants payloads: the prompt's and the answer's text.
            payload:
              config.capturePayloads === true
                ? (p) => self.uplink && self.uplink.welcome && self.uplink.welcome.payloads && self.send(frames.payload(self.collector.sessionId, p))
                : null,
            maxPayload: config.maxPayloadLength,
          })
    if (this.prompts) this.interceptor.onSweep = () => this.prompts.sweep()
    if (this.relay) {
      this.uplink = new Uplink({
        relay: this.relay,
        agent: typeof config.agent === "string" && config.agent ? config.agent : AGENT,
        WebSocket: (config.WebSocket !== undefined ? config.WebSocket : g.WebSocket) || null,
        ...timers,
        schedule: this.schedule,
        flushMs: config.flushMs,
        clock: config.clock,
        alignQuiet: config.alignFlush !== false,
        calling: () => this.collector.calling(),
        mark: unwatchedMark(config.buffer),
      })
      this.feed = this.ownFeed()
      this.collector.lostFn = () => this.feed.delivery.lost
      // Commands come from the relay's socket only: nothing a page posts (channel, window message) reaches this.
      this.uplink.onCommand = (msg) => safely(() => this.onCommand(msg))
    } else {
      this.uplink = null
      this.feed = null
    }
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
        calling: () => this.collector.calling(),
            posts: postsSpans(config, !!this.uplink),
            BroadcastChannel: (config.BroadcastChannel !== undefined ? config.BroadcastChannel : g.BroadcastChannel) || null,
            onSession: (id) => this.foreignSession(id),
            onSpan: (span) => this.foreignSpan(span),
            onUpdate: (u) => this.foreignUpdate(u),
          })
    // Right after the agent accounted a call is the page's quiet moment: batches waiting for it leave (pacing.js),
    // and a batch accounted when its window ran out leaves now: the window was the one it would have waited for.
    this.collector.onAccounted = (windowed) => {
      if (this.channel) windowed ? this.channel.flush() : this.channel.quiet()
      if (this.uplink) windowed ? this.uplink.windowEnded() : this.uplink.quiet()
    }
    this.api = makeApi(this)
  }

  start() {
    const c = this.collector
    const g = this.g
    this.interceptor.start()
    if (this.prompts) safely(() => this.prompts.sweep())
    c.observeLongTasks(this.config.PerformanceObserver || g.PerformanceObserver)
    if (this.uplink) {
      this.uplink.addFeed(this.feed)
      this.uplink.start()
    }
    const doc = safely(() => g.document, null)
    const on = (target, type, fn) => {
      if (!target || typeof target.addEventListener !== "function") return
      safely(() => {
        target.addEventListener(type, fn)
        this.listeners.push(() => target.removeEventListener(type, fn))
      })
    }
    on(doc, "visibilitychange", () => safely(() => c.event("visibility", { state: String(doc.visibilityState) })))
    on(g, "pagehide", (e) =>
      safely(() => {
        // A form submission that is taking the page away: its span leaves before the bye, and so does
        // whatever the uplink's batch window still holds.
        if (this.forms.pagehide() || this.uplink || this.channel) this.deliverNow()
        if (this.uplink) this.uplink.bye(e && e.persisted ? "bfcache" : "pagehide")
        if (this.channel && this.uplink) this.channel.announce(true)
      }),
    )
    on(g, "pageshow", (e) =>
      safely(() => {
        if (!e || !e.persisted) return
        if (this.uplink) this.uplink.resume()
        c.event("navigation", { kind: "bfcache-restore" })
      }),
    )
    on(g, "popstate", () => safely(() => c.event("navigation", { kind: "popstate" })))
    on(g, "hashchange", () => safely(() => c.event("navigation", { kind: "hashchange" })))
    this.linkNavigation()
    const nav = safely(() => g.performance.getEntriesByType("navigation")[0], null)
    if (nav && nav.type === "reload") c.event("reload", {})
    if (this.config.reportTool) this.registerReportTool()
    if (typeof this.config.onSpan === "function") c.spanListeners.add(this.config.onSpan)
    this.onStatus()
    if (this.config.overlay === true) overlayNotice(this.config, g)
    const ann = this.config.announce
    if (typeof ann === "function") safely(() => ann(this.api))
    else if (ann && g.console) safely(() => g.console.info(startLine(this)))
  }

  // ---- calls that navigate ------------------------------------------------------------------------------

  /**
   * A form call's submission is leaving the document: account it and write it to the socket now (the next
   * task may never run), and leave a note in sessionStorage (names and numbers only) so the next document
   * of this tab links its session to this call.
   */
  onNavigated(entry) {
    this.deliverNow()
    const call = entry.call
    if (!call) return
    const note = { session: this.collector.sessionId, seq: call.seq, tool: cap(call.tool, 128), at: Date.now() }
    // The relay links the next document to this session only with this session's secret: sessionStorage is
    // this tab's and this origin's, so no other tab or site can write into this session's timeline.
    const secret = this.uplink ? safely(() => this.uplink.secretOf(note.session), null) : null
    if (secret) note.resume = secret
    safely(() => this.g.sessionStorage.setItem(NAV_KEY, JSON.stringify(note)))
  }

  deliverNow() {
    safely(() => this.collector.flush())
    if (this.channel) safely(() => this.channel.flush())
    if (!this.uplink) return
    safely(() => this.sendStarts())
    safely(() => this.uplink.flush())
  }

  /** The previous document of this tab left through a form call: say so in this session's timeline. */
  linkNavigation() {
    const text = safely(() => this.g.sessionStorage.getItem(NAV_KEY), null)
    if (typeof text !== "string") return
    safely(() => this.g.sessionStorage.removeItem(NAV_KEY))
    const note = safely(() => JSON.parse(text), null)
    if (!note || typeof note !== "object" || !/^[0-9a-f]{8}$/.test(String(note.session)) || !Number.isInteger(note.seq) || note.seq < 0) return
    if (!(Date.now() - Number(note.at) < NAV_NOTE_MS)) return // a stale note from long ago says nothing
    const detail = { session: note.session, seq: note.seq, tool: cap(String(note.tool || ""), 128) }
    if (typeof note.resume === "string" && /^[0-9a-f]{32}$/.test(note.resume)) detail.resume = note.resume
    this.collector.event("navigated-from", detail)
  }

  /** A tool's own inputSchema (for the facts' schema check), parsed once per descriptor text. */
  schemaOf(tool) {
    const rec = this.collector.tools.get(tool)
    const text = rec && rec.registered && !rec.internal ? rec.descriptor : null
    if (typeof text !== "string") return undefined
    let hit = this.schemas.get(tool)
    if (!hit || hit.text !== text) {
      const d = safely(() => JSON.parse(text), null)
      hit = { text, schema: d && typeof d === "object" ? d.inputSchema : undefined }
      this.schemas.set(tool, hit)
      if (this.schemas.size > 1024) this.schemas.delete(this.schemas.keys().next().value)
    }
    return hit.schema
  }

  // ---- sink -------------------------------------------------------------------------------------------

  /** A call began: its `start` frame leaves with the uplink's next flush (the feed's drain) if it still runs then. */
  onStart(call) {
    const u = this.uplink
    if (!u || !u.open) return
    this.pendingStarts.push(call)
    u.kick()
  }

  sendStarts() {
    const id = this.collector.sessionId
    // A call that settled within the window needs no start: its span (same seq, depth and parent) says it all,
    // and at a busy page's rate most calls settle before their window ends. A form call the relay saw waiting
    // for the user still says when the user submitted (its start again, no longer waiting).
    const running = this.pendingStarts.filter((c) => c.settledAt === null || (c.waitingSent && !c.waiting))
    this.pendingStarts = []
    for (const c of running) if (c.waiting) c.waitingSent = true
    while (running.length) {
      const calls = running.splice(0, 500).map((c) => ({ seq: c.seq, tool: c.tool, invokedAt: c.invokedAt, depth: c.depth, parent: c.parent, ...(c.terminal ? { invokedBy: "terminal" } : {}), ...(c.waiting ? { waiting: true } : {}) }))
      this.uplink.send(id, frames.start(id, calls))
    }
  }

  onSpan(span) {
    if (this.channel) this.channel.span(span)
    if (this.uplink) this.uplink.spansReady()
  }

  /** A frame of our own session: its `session` is the one the frame names (frames.js stamps it). */
  send(frame) {
    this.uplink.send(frame.session, frame)
  }

  /**
   * The relay refused our first hello: another socket holds this session id (a page that says it is us, or a
   * rare collision). The session carries on under a new id, never under the other's.
   * @returns {string} the new id
   */
  renameSession() {
    const c = this.collector
    const old = c.sessionId
    let id = newSessionId()
    while (id === old) id = newSessionId()
    c.rename(id)
    if (this.prompts) this.prompts.sessionId = id
    this.lastStatus = null
    if (this.channel) {
      this.channel.sessionId = id
      safely(() => this.channel.announce())
    }
    return id
  }

  onUpdate(seq, blockingMs) {
    const id = this.collector.sessionId
    if (this.channel) this.channel.update(id, seq, blockingMs)
    if (this.uplink) this.uplink.send(id, frames.update(id, seq, blockingMs))
  }

  toolFrame(rec, change) {
    const at = (change === "unregistered" ? rec.unregisteredAt : rec.registeredAt) ?? this.collector.clock()
    return frames.tool(this.collector.sessionId, rec, change, at)
  }

  onTool(rec, change) {
    if (this.uplink) this.uplink.send(this.collector.sessionId, this.toolFrame(rec, change))
  }

  statusFrame() {
    const s = this.collector.status(false)
    return frames.status(this.collector.sessionId, s)
  }

  onStatus() {
    if (!this.uplink) return
    const f = this.statusFrame()
    const key = JSON.stringify(f)
    if (key === this.lastStatus) return
    this.lastStatus = key
    this.uplink.send(this.collector.sessionId, f)
  }

  // ---- uplink feeds -----------------------------------------------------------------------------------

  ownFeed() {
    const c = this.collector
    const g = this.g
    return {
      id: c.sessionId,
      rename: () => this.renameSession(),
      delivery: new Delivery(),
      hello: () => ({
        session: {
          id: c.sessionId,
          origin: this.env.origin,
          path: this.env.path,
          title: cap(safely(() => g.document.title, "") || "", 512),
          userAgent: this.env.userAgent,
          context: this.env.context,
          visibility: cap(safely(() => g.document.visibilityState, "visible") || "visible", 64),
          attachedAt: c.attachedAt,
          timeOrigin: safely(() => g.performance.timeOrigin, 0) || 0,
        },
        config: { sample: c.config.sample, buffer: c.stats.buffer, errorPolicy: c.config.errorPolicy },
      }),
      spans: () => c.stats.ring.values(),
      seqs: () => c.openSeqs(),
      drain: () => this.sendStarts(),
      replay: () => {
        const out = []
        for (const rec of c.tools.values()) if (rec.registered) out.push(this.toolFrame(rec, "registered"))
        const st = this.statusFrame()
        this.lastStatus = JSON.stringify(st)
        out.push(st)
        out.push(frames.ledger(c.sessionId, c.ledgerRev, c.ledger()))
        this.pendingStarts = []
        const calls = Array.from(c.inFlight.values()).map((x) => ({ seq: x.seq, tool: x.tool, invokedAt: x.invokedAt, depth: x.depth, parent: x.parent, ...(x.waiting ? { waiting: true } : {}) }))
        if (calls.length) out.push(frames.start(c.sessionId, calls.slice(0, 500)))
        return out
      },
      ledgerFrame: () => frames.ledger(c.sessionId, c.ledgerRev, c.ledger()),
    }
  }

  foreignSession(id) {
    if (!this.uplink) return
    const ring = new Map()
    const feed = {
      id,
      ring,
      delivery: new Delivery(),
      hello: () => ({
        session: { id, origin: this.env.origin, context: "relayed", via: this.collector.sessionId, visibility: "unknown" },
        config: {},
      }),
      spans: () => ring.values(),
      replay: () => [],
    }
    this.foreign.set(id, feed)
    this.uplink.addFeed(feed)
  }

  foreignSpan(span) {
    const feed = this.foreign.get(span.sessionId)
    if (!feed || feed.ring.has(span.seq)) return
    feed.ring.set(span.seq, span)
    if (feed.ring.size > MAX_FOREIGN_SPANS) {
      const [seq] = feed.ring.keys()
      feed.ring.delete(seq)
      feed.delivery.evicted(seq)
    }
    this.uplink.spansReady()
  }

  foreignUpdate(u) {
    const feed = this.foreign.get(u.sessionId)
    const span = feed && feed.ring.get(u.seq)
    if (!span) return
    span.blockingMs = u.blockingMs
    this.uplink.send(u.sessionId, frames.update(u.sessionId, u.seq, u.blockingMs))
  }

  // ---- commands from the terminal (relay socket only) ------------------------------------------------

  /**
   * `invoke` {tool, input}: call the tool through the browser's own executeTool where the host has one, else
   * through the registered tool's (wrapped) execute, and answer with the text the agent would read. The text
   * goes into the one `result` frame and nowhere else: not kept, not logged, not on the channel.
   */
  async onCommand(msg) {
    const c = this.collector
    const id = c.sessionId
    if (!this.uplink || !c.active || !msg || typeof msg.id !== "string" || !COMMAND_ID.test(msg.id) || msg.session !== id) return
    const answer = (f) => this.uplink.send(id, frames.result(id, msg.id, f))
    if (msg.name !== "invoke") return answer({ ok: false, error: cap(`unknown command: ${String(msg.name)}`, 200) })
    const args = msg.args && typeof msg.args === "object" ? msg.args : {}
    const tool = typeof args.tool === "string" ? args.tool : ""
    let inv = null
    try {
      inv = tool ? await this.interceptor.invoker(tool) : null
    } catch {
      inv = null
    }
    if (!inv) return answer({ ok: false, error: cap(`unknown tool: ${tool || "(none)"}`, 200) })
    const input = args.input && typeof args.input === "object" ? args.input : {}
    const t0 = now()
    let value
    // The wrapped execute this reaches marks its call as the terminal's, not the agent's (see expectTerminal).
    const unmark = c.expectTerminal(tool)
    try {
      value = await inv.call(input)
    } catch (e) {
      return answer({ ok: false, error: cap(`${errorText(e, "name")}: ${errorText(e, "message")}`, 200), wallMs: Math.max(0, now() - t0) })
    } finally {
      unmark()
    }
    const wallMs = Math.max(0, now() - t0)
    let text = inv.text ? (typeof value === "string" ? value : safely(() => String(value), null)) : resultText(value, inv.profile)
    if (text === null) return answer({ ok: false, error: "UnknownError: the result could not be serialised", wallMs })
    const resultBytes = utf8Length(text)
    answer({ ok: true, text: text.length > MAX_RESULT_TEXT ? cap(text, MAX_RESULT_TEXT) : text, resultBytes, wallMs })
    text = null
    value = null
  }

  // ---- report tool, detach ----------------------------------------------------------------------------

  /** Register get_perf_report on the host through its original (unpatched) registerTool: never measured. */
  registerReportTool() {
    if (!this.collector.active || this.reportTool) return !!this.reportTool
    this.wantReportTool = true
    let host = null
    for (const [h, e] of this.interceptor.hosts) if (!host || e.location === "document") host = [h, e]
    if (!host) return false
    const [h, entry] = host
    const register = entry.originals.registerTool
    if (typeof register !== "function") return false
    const ac = typeof this.g.AbortController === "function" ? new this.g.AbortController() : null
    const tool = markInternal(reportToolDescriptor((input) => reportView(this, input)))
    this.collector.reportToolName = tool.name
    try {
      const r = register.call(h, tool, ac ? { signal: ac.signal } : undefined)
      if (r && typeof r.then === "function") r.then(null, () => {})
    } catch {
      return false
    }
    this.reportTool = { host: h, entry, ac }
    const rec = this.interceptor.record(tool, true)
    this.collector.registered(rec)
    return true
  }

  unregisterReportTool() {
    const rt = this.reportTool
    if (!rt) return
    this.reportTool = null
    safely(() => {
      if (rt.ac) rt.ac.abort()
      if (typeof rt.entry.originals.unregisterTool === "function") rt.entry.originals.unregisterTool.call(rt.host, this.collector.reportToolName)
    })
  }

  detach() {
    const c = this.collector
    if (!c.active) return false
    safely(() => c.flush()) // calls still waiting for their window are accounted, and leave below
    safely(() => this.sendStarts())
    safely(() => this.unregisterReportTool())
    this.forms.restore()
    this.interceptor.restore()
    if (this.prompts) safely(() => this.prompts.restore())
    c.stop()
    if (this.uplink) {
      safely(() => this.onStatus())
      safely(() => this.uplink.flush())
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

function normalise(config) {
  const cfg = { ...DEFAULTS, ...config }
  cfg.buffer = Number.isInteger(cfg.buffer) && cfg.buffer >= 1 ? Math.min(cfg.buffer, 100000) : DEFAULTS.buffer
  // 000 clamps: 5 measures every call, -1 none.
  cfg.sample = typeof cfg.sample === "number" && !Number.isNaN(cfg.sample) ? Math.min(1, Math.max(0, cfg.sample)) : 1
  if (!["message", "name", "none"].includes(cfg.errorPolicy)) cfg.errorPolicy = "message"
  cfg.pollMs = Number.isFinite(cfg.pollMs) && cfg.pollMs > 0 ? cfg.pollMs : 250
  // The batch window of the uplink and the channel mirror (0: every task flushes, as the unit tests drive it;
  // pacing.js); junk gets the default.
  cfg.flushMs = Number.isFinite(cfg.flushMs) && cfg.flushMs >= 0 ? Math.min(cfg.flushMs, 250) : FLUSH_MS
  cfg.capturePayloads = cfg.capturePayloads === true
  cfg.maxPayloadLength = Number.isInteger(cfg.maxPayloadLength) && cfg.maxPayloadLength > 0 ? Math.min(cfg.maxPayloadLength, 65536) : DEFAULTS.maxPayloadLength
  cfg.fingerprintHandler = cfg.fingerprintHandler === true
  return cfg
}

/**
 * Attach unconditionally. Returns the console API (also exposed as globalThis[globalName] unless
 * globalName is false). A second attach returns the live one.
 */
function attach(config = {}) {
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
      safely(() => g.console.warn("[wmcp-top] already attached: this call returns the running agent; detach() it first to attach with another configuration"))
    }
    return existing
  }
  const agent = new Agent(cfg)
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
  return `[wmcp-top] profiling on \u2014 ${handle}.help() \u00b7 ?${cfg.param}=0 to disable \u00b7 ${agent.collector.status().message} (session ${agent.collector.sessionId}, ${to})`
}

/**
 * No window and no document, and not a worker: server-side rendering (Node, an edge runtime). SSR frameworks
 * call attachProfiler() there too and rely on webmcp-profiler's frozen no-op: nothing patched, nothing dialled.
 */
function serverSide(g) {
  return !safely(() => g.document, null) && !safely(() => g.window, null) && contextOf(g) !== "worker"
}

const NOOP_ID = "00000000"

/** The frozen no-op profiler of server-side rendering: every member of the console API, doing nothing. */
function noop(cfg) {
  const ledger = () => ({
    sessionId: NOOP_ID, attachedAt: 0, hostFoundAt: null, hostLocation: null, firstRegistrationAt: null, registeredTools: [], tools: {}, firstCallAt: null, lastSettledAt: null,
    totals: { calls: 0, unsampledCalls: 0, overlappingCalls: 0, errors: 0, wallMs: 0, blockingMs: 0, resultBytes: 0, estTokens: 0, estInputTokens: 0, hostGapMs: 0, schemaBytes: 0, estSchemaTokens: 0 },
  })
  const status = () => ({ ...statusFor({ inactive: true, reasons: [] }), message: SSR_MESSAGE, hints: [SSR_HINT], hostLocation: null, hostFoundAt: null, toolCount: 0, callCount: 0, lastCallAt: null, coverage: null })
  const report = () => ({ format: "webmcp-perf-report/2", session: { id: NOOP_ID, origin: null, userAgent: null, generatedAt: new Date().toISOString(), version: VERSION }, ledger: ledger(), tools: [], spans: [] })
  const none = () => undefined
  const off = () => none
  return Object.freeze({
    active: false, sessionId: NOOP_ID,
    spans: () => [], aggregates: () => [], ledger, onSpan: off, onSpanUpdate: off, status,
    help: () => Promise.resolve(undefined), summary: () => SSR_MESSAGE, describe: () => Promise.resolve(manifest(cfg)),
    table: none, report, export: none, exportTrace: none, overlay: none, instrument: () => 0, synthetic: () => false, reset: none,
    detach: () => false, registerReportTool: () => false, relay: () => null, overhead: () => ({ accounted: 0, ms: 0, perSpanMs: 0 }),
    channel: () => null, recordConsent: () => false, prompts: () => [],
  })
}

const SSR_MESSAGE = "Server-side no-op: there is no window here, so nothing is measured."
const SSR_HINT = "attach in the browser (the same call runs there), before the page registers its tools"

/** The inert object left when the gate is closed: status() says why and how to switch on. */
function inert(cfg, decision) {
  const g = cfg.global || globalThis
  const notes = []
  const status = () => ({
    ...statusFor({ inactive: true, reasons: [], hints: notes }),
    hostLocation: null,
    hostFoundAt: null,
    toolCount: 0,
    callCount: 0,
    lastCallAt: null,
    reason: decision.reason,
  })
  const api = {
    active: false,
    sessionId: null,
    status,
    describe: () => Promise.resolve(manifest(cfg)),
    overlay: () => overlayNotice(cfg, g),
    recordConsent: () => false,
    prompts: () => [],
    help() {
      safely(() => g.console.info(`${helpText(status())}\n(inactive: ${decision.reason})`))
      return Promise.resolve(undefined)
    },
  }
  NOTES.set(api, (hint) => notes.push(hint))
  return api
}

const LATE_CONFIG_HINT = "window.__WMCP_CONFIG__ was set after the agent's script ran, so it was ignored: set it in a <script> above the agent's tag"

/**
 * The script tag read no window.__WMCP_CONFIG__: one set later (the tag is meant to be first in <head>) would
 * be silently ignored. Catch that assignment: the page keeps its value, the console gets one warning, and the
 * status (console and dashboard) a hint naming the fix.
 */
function watchLateConfig(g, api) {
  let value
  let told = false
  safely(() =>
    Object.defineProperty(g, "__WMCP_CONFIG__", {
      configurable: true,
      get: () => value,
      set: (v) => {
        value = v
        if (told || !v || typeof v !== "object") return
        told = true
        safely(() => g.console.warn(`[wmcp-top] ${LATE_CONFIG_HINT}`))
        const note = NOTES.get(api)
        if (note) safely(() => note(LATE_CONFIG_HINT))
      },
    }),
  )
}

/**
 * The ?perf= gate (webmcp-profiler's values), then attach. `defaultOn` defaults to true when an uplink address
 * was baked in by the relay (the user pasted its tag on purpose) and false otherwise. An unknown value is
 * warned about once and otherwise ignored; `?perf=overlay` (given or remembered) also prints the terminal pointer.
 */
function maybeAttach(config = {}) {
  const cfg = normalise(config)
  const g = cfg.global || globalThis
  if (serverSide(g)) return noop(cfg)
  const defaultOn = cfg.defaultOn !== undefined ? !!cfg.defaultOn : !!resolveUplink({ uplink: BAKED_UPLINK || undefined }, {})
  const decision = gate({
    search: safely(() => g.location.search, "") || "",
    storage: safely(() => g.localStorage, null),
    param: cfg.param,
    storageKey: cfg.storageKey,
    allow: cfg.allow,
    defaultOn,
  })
  if (decision.rejected !== null) safely(() => g.console.warn(`[wmcp-top] ignoring ?${cfg.param}=${cap(decision.rejected, 64)}: use 1, on, true, overlay, 0, off or false`))
  if (decision.on) return attach(decision.mode === "overlay" ? { ...cfg, overlay: true } : cfg)
  const api = inert(cfg, decision)
  if (cfg.globalName && !safely(() => g[cfg.globalName], null)) safely(() => Object.defineProperty(g, cfg.globalName, { value: api, configurable: true, writable: true, enumerable: false }))
  return api
}

/**
 * webmcp-profiler's report-tool factory (`profilerTool(profiler)` from "webmcp-profiler/tool"): a descriptor
 * the page registers itself; the agent lists it as internal and never measures it.
 * @param {object} api  the console API attach() returned
 * @param {{name?:string, title?:string}} [options]
 */
function profilerTool(api, options = {}) {
  const hook = (api && typeof api === "object" && safely(() => api[REPORT_KEY], null)) || null
  const name = typeof options.name === "string" && options.name ? options.name : "get_perf_report"
  const execute = hook
    ? (input) => hook.view(input)
    : () => ({ content: [{ type: "text", text: api && typeof api.status === "function" ? api.status().message : "wmcp-top agent not attached" }], isError: false })
  if (hook) hook.named(name)
  return markInternal(reportToolDescriptor(execute, { name, title: typeof options.title === "string" ? options.title : undefined }))
}

/** webmcp-profiler's entry names: `attachProfiler(config)` and the gate `maybeAttachProfiler(config)`. */

/** Detach the agent exposed under globalName, if any. */
function detach(globalName = DEFAULTS.globalName, g = globalThis) {
  const api = safely(() => g[globalName], null)
  return api && typeof api.detach === "function" ? api.detach() : false
}
return { SessionStats, summaryLine, fmtBytes, fmtCount, fmtDuration, fmtMs, traceEvents, VERSION, gate, attachProfiler: attach, maybeAttachProfiler: maybeAttach, agentOf, resolveUplink, attach, LATE_CONFIG_HINT, watchLateConfig, maybeAttach, profilerTool, detach };
})();

// ---- transport/binding.js ----
__m["transport/binding"] = (function () {
// The `open` lane's transport, main-world side: a class shaped like WebSocket (what the Uplink needs of one:
// constructor(url), send, close, readyState, onopen/onmessage/onclose/onerror) whose frames go through a
// Playwright binding (`wmcp-top open` exposes it; its other end is Python, which holds the relay's address and
// token and dials the relay itself, with the frame's origin as the socket's Origin). So the token is never in
// the page: a page that patches WebSocket, fetch or postMessage sees no socket of ours at all.
//
// The binding is read once, at document_start, before any page script: a page that replaces the global later
// does not reach the agent's copy. A page may call the binding itself; that opens a relay socket of its own
// origin, no more than a page's own script tag could (the relay checks every hello against that origin).

/** The binding's name (relay_bridge/lanes/open/pipe.py exposes it under the same name). */
const OPEN_BINDING = "__wmcpTopOpen"
/** A placeholder relay address: the Uplink needs one; Python knows the real one. */
const OPEN_RELAY_URL = "ws://open.wmcp-top.invalid/relay"

/**
 * A WebSocket-shaped class over the binding of window `g`, or null when `open` exposed none.
 * @param {any} g  the window
 */
function bindingSocketClass(g) {
  const pipe = typeof g[OPEN_BINDING] === "function" ? g[OPEN_BINDING] : null
  if (!pipe) return null
  // One id per document: Python closes the sockets of a frame's previous document when the next one connects.
  const doc = Math.random().toString(16).slice(2, 14)

  return class BindingSocket {
    constructor(url) {
      this.url = String(url)
      this.readyState = 0
      this.onopen = null
      this.onmessage = null
      this.onclose = null
      this.onerror = null
      this.id = null
      pipe({ t: "connect", doc }).then(
        (id) => {
          if (this.readyState !== 0 || typeof id !== "number") {
            if (typeof id === "number") pipe({ t: "close", id }).catch(() => {})
            return this.finish()
          }
          this.id = id
          this.readyState = 1
          if (this.onopen) this.onopen({ type: "open" })
          this.pump()
        },
        () => this.finish(),
      )
    }

    /** Long-poll the relay's frames: Python answers with what arrived, or after a while with nothing. */
    pump() {
      pipe({ t: "recv", id: this.id }).then(
        (r) => {
          if (this.readyState !== 1) return
          const frames = r && Array.isArray(r.m) ? r.m : []
          for (const d of frames) {
            if (typeof d === "string" && this.onmessage) this.onmessage({ type: "message", data: d })
            if (this.readyState !== 1) return
          }
          if (!r || r.closed) return this.finish()
          this.pump()
        },
        () => this.finish(),
      )
    }

    send(text) {
      if (this.readyState !== 1) throw new Error("InvalidStateError")
      pipe({ t: "send", id: this.id, d: String(text) }).catch(() => {})
    }

    close() {
      if (this.readyState >= 2) return
      if (this.id !== null) pipe({ t: "close", id: this.id }).catch(() => {})
      this.finish()
    }

    finish() {
      if (this.readyState >= 2) return
      this.readyState = 3
      if (this.onclose) this.onclose({ type: "close", code: 1006 })
    }
  }
}
return { OPEN_BINDING, OPEN_RELAY_URL, bindingSocketClass };
})();

// ---- page/open_main.js ----
(function () {
// Entry of the `open` lane's agent (dist/open.js): injected by `wmcp-top open` before any page script, with no
// address and no token in it; its socket is a Playwright binding whose other end (Python) holds both
// (binding.js). The agent is otherwise the script tag's, reading the page's __WMCP_CONFIG__ as that one does.
const { maybeAttach } = __m["page/index"];
const { bindingSocketClass, OPEN_RELAY_URL } = __m["transport/binding"];
try {
  if (typeof window !== "undefined") {
    const BindingSocket = bindingSocketClass(window)
    const page = typeof window.__WMCP_CONFIG__ === "object" && window.__WMCP_CONFIG__ ? window.__WMCP_CONFIG__ : {}
    if (BindingSocket) maybeAttach({ ...page, uplink: OPEN_RELAY_URL, WebSocket: BindingSocket, defaultOn: true })
  }
} catch {
  /* never throw into the page */
}
})();
})();
