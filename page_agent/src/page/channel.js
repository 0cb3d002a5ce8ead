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

import { CONTENT_TYPES } from "./measure.js"
import { cap, safely } from "../shared/util.js"
import { READ_ONLY, terminalRoute, postsSpans } from "./route.js"
import { FLUSH_MS, Lane, batchWindow } from "../transport/pacing.js"

export const MAX_FOREIGN_SESSIONS = 8
export const MAX_FOREIGN_SPANS = 500
/** Own messages a window may hold; beyond it the oldest is dropped and counted (`outboxDropped`). */
export const MAX_OUTBOX = 1000
const MAX_NUMBER = 1e13
const HEX8 = /^[0-9a-f]{8}$/
const RESULT_TYPES = new Set(["object", "array", "string", "number", "boolean", "null", "undefined", "error", "unserializable"])

const nonNeg = (v) => typeof v === "number" && Number.isFinite(v) && v >= 0 && v <= MAX_NUMBER
const nonNegInt = (v) => nonNeg(v) && Number.isInteger(v)

/**
 * A clean copy of a span with exactly the wire fields, or null when anything is off.
 * @returns {object|null}
 */
export function validateSpan(s) {
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
  // webmcp-profiler caps a message at 200 characters and appends an ellipsis: 201 passes as it is. A longer one
  // (another writer) is cut to 200, as webmcp-profiler's reader does, rather than losing the span.
  if (!(s.error === null || typeof s.error === "string")) return null
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
    error: s.error === null || s.error.length <= 201 ? s.error : cap(s.error, 200),
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

export const PROFILER_FIELDS = [
  "sessionId", "seq", "tool", "invokedAt", "settledAt", "wallMs", "blockingMs", "inputBytes", "resultBytes",
  "contentTypes", "imageBytes", "estInputTokens", "estTextTokens", "estImageTokens", "estTokens", "isError",
  "error", "gapSincePrevCallMs", "synthetic", "serializable",
]

export { READ_ONLY, terminalRoute, postsSpans }

export function profilerSpan(span) {
  const out = {}
  for (const k of PROFILER_FIELDS) out[k] = span[k]
  return out
}

export class ChannelMirror {
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
    this.lastBatchAt = -Infinity
    this.settleMs = settleMs
    /** foreign sessions waiting out settleMs: id -> buffered messages */
    this.pending = new Map()
    /** wmcp-top peers heard from */
    this.peers = new Set()
    this.clock = clock
    /** the window's timer (pacing.js) */
    this.lane = new Lane({ setTimeout: this.st, clearTimeout: this.ct, clock, alignQuiet, calling })
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
    if (this.posts && this.bc) this.queue({ kind: "span", span: profilerSpan(span) })
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
    if (this.lane.armed) return
    // pacing.js: a busy page's batch waits for its next quiet moment (quiet()); no timer to be had: post now
    const wait = batchWindow(this.flushMs, this.clock(), this.lastBatchAt)
    if (!this.lane.arm(wait, () => this.lastBatchAt, () => this.flush())) this.flush()
  }

  /** The page's quiet moment (the agent just accounted a settled call): a batch waiting for it leaves now. */
  quiet() {
    if (this.lane.awaitingQuiet) this.flush()
  }

  /** The agent's accounting window ran out (pacing.js): the batch it held leaves now. */
  windowEnded() {
    this.flush()
  }

  /** Post what the window holds, in order. */
  flush() {
    this.lane.cancel()
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
