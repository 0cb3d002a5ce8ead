// The collector: one session's calls, spans, ring buffer, ledger, Long-Task attribution, phases.
//
// The call path (enter/settle) does only clock reads and pushes; results are measured later, the calls of
// one batch window together (`flush`), after the host already has its value. Everything that leaves this
// module goes through `sink` (see index.js): the channel mirror and the uplink.

import { SessionStats, callTokens, tokensForBytes, imageTokens } from "./stats.js"
import { resultFacts, inputBytesOf, errorText, resultText, inputText, errorResultFacts } from "./measure.js"
import { defaultRefusal, refusalOf, consentMismatch, consentDetail, cutPayload } from "./hooks.js"
import { now, safely, cap, makeTaskScheduler } from "../shared/util.js"
import { NATIVE_THEN } from "./wrap.js"
import { statusFor } from "./status.js"
import { batchWindow, QUIET_WAIT_MS } from "../transport/pacing.js"
import { splitLine } from "./console.js"

const RECENT_MAX = 256
const MAX_LEDGER_TOOLS = 1024
const RECENT_MS = 60_000
const HOOK_EVENTS_MAX = 32 // hook-failed events per hook and session; later failures are only counted
const MAX_PAYLOAD = 65536
// Accounting held while the page awaits an executeTool (scheduleFlush): at most this long, this many calls.
const HOLD_MS = 500
const HOLD_CALLS = 64

// A microtask through the engine's own promise machinery: a reaction on a promise already resolved is queued at
// once, exactly where queueMicrotask would queue it, without Blink's binding (about 9 µs a call in Chromium 156
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
 * @property {boolean} [wire]  a tools/call the transport observer saw arrive: it ends with its response (answered)
 * @property {boolean} [joined]  a wire call whose tool function passed the wrapper too
 * @property {boolean} [fnDone]  that function returned (or threw); its outcome is held until the response
 * @property {boolean} [fnOk]
 * @property {any} [fnValue]  held only until the response arrives (then dropped)
 * @property {any} [fnError]  a thrown error, for the span's error text
 * @property {string} [fnProfile]
 */

export class Collector {
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
    /** @type {import("./transport_observer.js").TransportObserver|null} set by the agent */
    this.wire = null
  }

  // ---- the call path ---------------------------------------------------------------------------------

  /**
   * execute() entered (or a form tool's call began). Returns the Call, or null when sampling left it
   * unmeasured. `opts.waiting`: a filled form waiting for the user's submit (forms.js); resumed() ends the wait.
   */
  enter(tool, input, profile, opts) {
    // The transport observer saw this call's tools/call arrive: the function's run is that call, one span.
    if (this.wire !== null && !(opts && opts.wire)) {
      const entry = this.wire.claim(tool)
      if (entry) {
        if (entry.call) {
          entry.call.joined = true
          entry.call.fnProfile = profile
        }
        return entry.call
      }
    }
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
    if (opts && opts.wire) call.wire = true
    if (this.consents.size) {
      const consent = this.consents.get(tool)
      if (consent) {
        this.consents.delete(tool)
        call.consent = consent
      }
    }
    this.inFlight.set(call.seq, call)
    if (this.wire !== null && !call.wire) this.wire.orphan(call, profile)
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

  /** The collector is the agent's rest: a call never waits for it (early.js's restWait, before it is here). */
  restWait() {
    return null
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
    // A call the transport carries ends with its response (answered); the function's outcome waits for it.
    if (call && call.wire) {
      if (call.settledAt !== null || call.fnDone) return
      call.fnDone = true
      call.fnOk = ok
      call.fnValue = value
      if (this.wire !== null) this.wire.functionDone(call)
      return
    }
    if (!this.end(call, ok, value)) return
    this.queue(call)
  }

  /**
   * Ends a call now: the open count and the host-gap clock for every call but the terminal's, the outcome on
   * `call`. False when there is no call to account (`call` null: sampled out).
   */
  end(call, ok, value) {
    const t = this.clock()
    if (!call || !call.terminal) {
      this.open = Math.max(0, this.open - 1)
      this.lastSettledAt = t
    }
    if (!call) return false
    call.settledAt = t
    call.ok = ok
    call.value = value
    return true
  }

  /** A settled call waits for the accounting. */
  queue(call) {
    this.inFlight.delete(call.seq)
    this.pending.push(call)
    // An onSpan listener has its span before the caller's `await execute()` resumes, as webmcp-profiler's
    // (an exporter reads on settle): the accounting runs here, on the call path the page chose to pay. With no
    // listener the call path stays two clock reads and the accounting waits for its batch (scheduleFlush).
    if (this.spanListeners.size) this.flush()
    else this.scheduleFlush()
  }

  /**
   * A function-level call (already entered, maybe settled and awaiting accounting) is the tools/call the
   * transport observer just saw arrive: it becomes that call and ends with the response.
   */
  adopt(call) {
    call.wire = true
    call.joined = true
    call.fnProfile = call.profile
    const i = this.pending.indexOf(call)
    if (i < 0) return
    // Settled already (the server ran the tool before the observer saw the request): its outcome waits too.
    this.pending.splice(i, 1)
    call.fnDone = true
    call.fnOk = call.ok
    call.fnValue = call.value
    call.value = undefined
    call.settledAt = null
    if (!call.terminal) this.open++
    this.inFlight.set(call.seq, call)
  }

  /**
   * The response of a call the transport observer carried reached the client (transport_observer.js): the call
   * settles now, sized from what the client received (`profile` "mcp-b": the CallToolResult as JSON text), or
   * from the function's value when no response came (`profile`: the function's). `call` null: sampled out.
   */
  answered(call, ok, value, profile = "mcp-b") {
    if (call && call.settledAt !== null) return
    if (!this.end(call, ok, value)) return
    call.profile = profile
    // A function that threw names the span's error (per errorPolicy), as a wrapped call's throw does.
    call.fnError = call.fnDone && !call.fnOk ? call.fnValue : null
    call.fnValue = undefined
    this.queue(call)
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
    if (call.fnError) {
      isError = true
      error = errorText(call.fnError, policy)
      if (policy !== "none") errorType = errorText(call.fnError, "name").slice(0, 64)
      call.fnError = null
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
    for (const fn of this.spanListeners) {
      try {
        fn(span)
      } catch (e) {
        this.listenerFailed(e)
      }
    }
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

  /** A tool listed as unwrapped is measured after all (instrument(), or registered again through the hooks). */
  wrappedTool(name) {
    if (this.unwrapped.delete(name)) this.statusChanged()
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

  /** A page's onSpan listener threw: said in the page's console, as webmcp-profiler does (at most HOOK_EVENTS_MAX
   * times a session); the span still reaches the other listeners and the terminal. */
  listenerFailed(err) {
    const n = (this.hookFailures.onSpan = (this.hookFailures.onSpan || 0) + 1)
    if (n > HOOK_EVENTS_MAX) return
    safely(() => (/** @type {any} */ (this.config).global || globalThis).console.error("[wmcp-top] an onSpan listener threw (the span went on to the others):", err))
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

export const measureName = (span) => `webmcp:${span.tool}#${span.seq}`

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
