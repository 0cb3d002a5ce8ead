// PURE statistics: spans in, numbers out. No clocks, no DOM, no I/O.
//
// One definition with relay_bridge/core/stats.py and relay_bridge/core/units.py; tests/vectors/ holds both to the
// digit. Rounding to one decimal is Math.floor(x * 10 + 0.5) / 10, never toFixed (which rounds binary
// halves differently from Python and from itself).

/** ceil(bytes / 4): input and text tokens. */
export const tokensForBytes = (n) => Math.ceil(n / 4)
/** Images are paid at decoded size: base64 length x 0.75. */
export const imageTokens = (imageBytes) => Math.ceil((imageBytes * 0.75) / 4)

/**
 * Token estimates for one call.
 * @returns {{estInputTokens:number, estTextTokens:number, estImageTokens:number, estTokens:number}}
 */
export function callTokens(inputBytes, resultBytes, imageBytes) {
  const estInputTokens = tokensForBytes(inputBytes)
  const estTextTokens = tokensForBytes(Math.max(0, resultBytes - imageBytes))
  const estImageTokens = imageTokens(imageBytes)
  return { estInputTokens, estTextTokens, estImageTokens, estTokens: estInputTokens + estTextTokens + estImageTokens }
}

/**
 * webmcp-profiler's quantile over ascending values: sorted[min(n-1, floor(p*n))] for p in 0..1; null when
 * empty. Same in relay_bridge/core/stats.py, so p50/p95 of the same spans agree with 000's everywhere.
 */
export function quantile(sorted, p) {
  if (!sorted.length) return null
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]
}

// ---- formatting (arithmetic-identical to relay_bridge/core/units.py) -------------------------------------------

export const round1 = (x) => Math.floor(x * 10 + 0.5) / 10
export const round0 = (x) => Math.floor(x + 0.5)
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
export function fmtBytes(n) {
  if (n < 1000) return round0(n) + "B"
  return scaled(n, ["KB", "MB", "GB"], 1000)
}

/** Counts: 950, 2.5K, 78K, 1.2M. */
export function fmtCount(n) {
  if (n < 1000) return String(round0(n))
  return scaled(n, ["K", "M", "B"], 1000)
}

/**
 * Three significant digits (as relay_bridge/core/units.py): 8.5ms, 127ms, 1.27s, 12.7s, 127s, then minutes. Each step
 * counts whole units of its last digit, so a value rounding up into the next step is written there.
 */
export function fmtDuration(ms) {
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
export function fmtMs(ms) {
  if (ms === null || ms === undefined) return "–"
  return fmtDuration(ms)
}

/** `schemas 9.8KB (~2.5K tok) · tools 0.3s · payloads 310KB (~78K tok) · host gaps 39s` */
export function summaryLine(schemaBytes, wallMs, resultBytes, estTokens, hostGapMs, schemaTokens = Math.ceil(schemaBytes / 4)) {
  return (
    `schemas ${fmtBytes(schemaBytes)} (~${fmtCount(schemaTokens)} tok)` +
    ` · tools ${fmtDuration(wallMs)}` +
    ` · payloads ${fmtBytes(resultBytes)} (~${fmtCount(estTokens)} tok)` +
    ` · host gaps ${fmtDuration(hostGapMs)}`
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
export class SessionStats {
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
export function assignLanes(spans) {
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
export function spanEvents(spans, timeOrigin, pid = 1) {
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
export function traceEvents(spans, session) {
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
