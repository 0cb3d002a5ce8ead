// The collector: one session's call path. It composes the jobs around it, each a module of its own: nesting
// (nesting.js: caller, parent, depth), accounting (accounting.js: a settled call -> its span), the registry
// ledger (ledger.js), Long-Task attribution (long_tasks.js), the marks a call carries in (marks.js); the spans it
// accounts go to the ring buffer (stats.js) and the status is assembled from its state (status.js).
//
// The call path (enter/settle) does only clock reads and pushes; results are measured later, the calls of
// one batch window together (`flush`, when the pacer says: transport/pacing.js), after the host already has its
// value. Everything that leaves this module goes one way, through `sink` (sink.js): to the uplink's feed and the
// channel mirror. Nothing is read back; the sink pushes one number in, the loss the relay's acks tell.

import { SessionStats } from "./stats.js"
import { errorText } from "./measure.js"
import { consentMismatch, consentDetail } from "./hooks.js"
import { now, safely, cap } from "../shared/util.js"
import { pageTime } from "./replay.js"
import { makeTaskScheduler } from "../shared/tasks.js"
import { spanOf, payloadOf, estimatorOf, tokensThrough } from "./accounting.js"
import { Nesting, placeUnder } from "./nesting.js"
import { TerminalMarks, ConsentMarks } from "./marks.js"
import { Ledger } from "./ledger.js"
import { attributeLongTasks } from "./long_tasks.js"
import { sessionStatus } from "./status.js"
import { Pacer } from "../transport/pacing.js"
import { splitLine } from "./console.js"

const RECENT_MAX = 256
const RECENT_MS = 60_000
const HOOK_EVENTS_MAX = 32 // hook-failed events per hook and session; later failures are only counted

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
 * @property {boolean} [ok]  execute() resolved (false: it threw or was refused)
 * @property {any} [input]  the arguments, held only until accounting measured them
 * @property {any} [value]  what execute() settled with, likewise
 * @property {{consent: string, mismatch: boolean}|null} [consent]  what the page's recordConsent said of it
 * @property {boolean} [refused]  a form call the browser refused before the page ran (forms.js)
 * @property {"navigated"|"refused"} [outcome]  a form call's end other than an answer (forms.js)
 * @property {number} [waitedMs]  a form's wait for the user's submit
 * @property {boolean} [terminal]  started from wmcp-top, not by the page's agent
 * @property {object|null} begun  what the uplink's feed was handed of it (sink.js), null without an uplink
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
   * @param {((fn: Function) => void) & {close?: () => void}} [o.schedule]  macrotask scheduler (the transport observer's tasks)
   * @param {() => number} [o.random]
   * @param {object} [o.perf]  `performance` (measure/clearMeasures)
   * @param {Pacer} [o.pacer]  when settled calls are accounted (pacing.js; default: a task after each settle)
   */
  constructor({ sessionId, config, sink, clock, schedule, random, perf = globalThis.performance, pacer }) {
    this.sessionId = sessionId
    // The id in async frame names (wrap.js `carry`): fixed for the page's life, so a call still running when the
    // session takes a new id (rename) is still found; never on the wire.
    this.nesting = new Nesting(sessionId)
    this.config = config
    this.sink = sink
    this.clock = clock || now
    this.schedule = schedule || makeTaskScheduler()
    // The pacer reads this collector's clock as it is at each read (early.js's hand-over swaps it while replaying).
    this.pacer = pacer || new Pacer({ clock: () => this.clock(), schedule: this.schedule, setTimeout: (fn, ms) => setTimeout(fn, ms), clearTimeout: (t) => clearTimeout(t) })
    this.pacer.accounts = this
    this.random = random || Math.random
    this.perf = perf
    this.active = true
    this.synthetic = false
    this.estimate = estimatorOf(config.tokenEstimator)
    // One ask per kind through the page's tokenEstimator; the built-in sums otherwise (accounting.js).
    this.tokens = config.tokenEstimator ? tokensThrough(this.estimate) : undefined
    this.stats = new SessionStats(config.buffer, (bytes) => this.estimate("text", bytes))
    this.seq = 0
    /** @type {Map<number, Call>} */
    this.inFlight = new Map()
    /** settled calls kept a while for late Long-Task attribution */
    this.recent = []
    this.open = 0
    this.lastSettledAt = null
    this.unsampled = 0
    this.pending = []
    this.spanListeners = new Set()
    this.updateListeners = new Set()
    this.registry = new Ledger(Date.now())
    this.firstCallAt = null
    // Coverage.
    this.reportToolName = null
    /** spans evicted before the relay stored them, as the uplink's feed last said (sink.js) */
    this.lost = 0
    this.extraReasons = new Set()
    /** hints of the agent's own, ahead of the phase's (a late window.__WMCP_CONFIG__, index.js) */
    this.notes = []
    this.lastPhase = null
    this.observer = null
    this.cost = { accounted: 0, ms: 0 }
    /** calls the terminal asked for that have not entered yet (see expectTerminal; marks.js) */
    this.terminalMarks = new TerminalMarks()
    /** the consent recorded for each tool's next call (recordConsent; marks.js) */
    this.consents = new ConsentMarks()
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
    const terminal = this.terminalMarks.pending.size > 0 && this.terminalMarks.take(tool)
    const overlapped = !terminal && this.open > 0
    if (!terminal) this.open++
    const gap = terminal || overlapped || this.lastSettledAt === null ? null : Math.max(0, t - this.lastSettledAt)
    const sample = this.config.sample
    if (!terminal && sample < 1 && !(this.random() < sample)) {
      this.unsampled++
      this.stats.setUnsampled(this.unsampled)
      // The first call seen makes the phase `measuring`, sampled or not: a reconnect's status says so.
      if (this.unsampled === 1 && this.firstCallAt === null) this.sink.restateStatus()
      if (overlapped) this.stats.totals.overlappingCalls++
      return null
    }
    const place = placeUnder(this.nesting.parentOf(tool))
    /** @type {Call} */
    const call = {
      seq: this.seq++,
      tool,
      invokedAt: t,
      settledAt: null,
      gap,
      overlapped,
      depth: place.depth,
      parent: place.parent,
      blocking: 0,
      span: null,
      input,
      ok: true,
      value: undefined,
      synthetic: this.synthetic,
      profile,
      consent: null,
      terminal,
      begun: null,
    }
    if (opts && opts.waiting) call.waiting = true
    if (opts && opts.wire) call.wire = true
    if (this.consents.next.size) call.consent = this.consents.take(tool)
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

  // ---- nesting across executeTool() and awaits (nesting.js) ------------------------------------------------

  /** The synchronous execute() stack wrap.js pushes on (early.js's hand-over sets it while it replays). */
  get stack() {
    return this.nesting.stack
  }

  set stack(stack) {
    this.nesting.stack = stack
  }

  /** The name of the async frame that carries a call's promise (wrap.js `carry`). */
  frameName(seq) {
    return this.nesting.frameName(seq)
  }

  /** The collector is the agent's rest: a call never waits for it (early.js's restWait, before it is here). */
  restWait() {
    return null
  }

  /** Page code is calling `executeTool(tool)`: a release for when it settles, or null (nesting.js). */
  nestedCall(tool) {
    return this.nesting.nestedCall(tool, this.inFlight)
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
    this.sink.settled(call)
    this.pending.push(call)
    // An onSpan listener has its span before the caller's `await execute()` resumes, as webmcp-profiler's
    // (an exporter reads on settle): the accounting runs here, on the call path the page chose to pay. With no
    // listener the call path stays two clock reads and the accounting waits for its batch (pacing.js, Pacer.due).
    if (this.spanListeners.size) this.flush()
    else this.pacer.due()
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
    this.sink.reopened(call)
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

  // ---- pacing (pacing.js): the early buffer (early.js) and the interceptor reach the pacer through these ------

  /** `executeTool` calls the page is awaiting (Pacer.pageWaits). */
  get pageWaits() {
    return this.pacer.pageWaits
  }

  set pageWaits(n) {
    this.pacer.pageWaits = n
  }

  /** Settled calls await accounting (Pacer.due; `force`: the page just had its answer). */
  scheduleFlush(force = false) {
    this.pacer.due(force)
  }

  /** The page called `executeTool` and awaits it: returns the function to call when it has its answer. */
  pageWait() {
    return this.pacer.pageWait()
  }

  /**
   * The terminal is about to call `tool` (an `invoke` command): its next call of that tool is marked
   * `invokedBy: "terminal"`. Returns a function that withdraws the mark if the call never entered.
   */
  expectTerminal(tool) {
    return this.terminalMarks.expect(tool)
  }

  // ---- deferred accounting ---------------------------------------------------------------------------

  /** Measure every settled call: serialise, count, emit. Runs as its own task, after the host has the value. */
  flush() {
    this.pacer.flushScheduled = false
    const batch = this.pending
    if (!batch.length) return
    this.pending = []
    const t0 = now()
    const windowed = this.pacer.accounting()
    for (const call of batch) safely(() => this.account(call))
    this.sink.accounted(batch)
    this.ledgerChanged(true)
    // The agent's own cost, off the call path (overhead() reports it).
    this.cost.accounted += batch.length
    this.cost.ms += now() - t0
    this.pacer.accounted(windowed)
  }

  /** A settled call becomes its span (accounting.js), which goes to the ring, the page's listeners and the sink. */
  account(call) {
    const cfg = this.config
    const { span, failed } = spanOf(call, { sessionId: this.sessionId, errorPolicy: cfg.errorPolicy, isErrorResult: cfg.isErrorResult, isRefusal: cfg.isRefusal, tokens: this.tokens })
    for (const [hook, err] of failed) this.hookFailed(hook, call, err)
    call.fnError = null
    // Opt-in payload capture: the text goes to the relay's OpenTelemetry lane, ahead of the span.
    if (cfg.capturePayloads === true && this.sink.payload) {
      const p = payloadOf(call, cfg.maxPayloadLength)
      safely(() => this.sink.payload(p))
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
   * no millisecond counts twice (long_tasks.js). Calls already emitted get a late `update`.
   * @param {{startTime:number, duration:number}[]} entries
   */
  longTasks(entries) {
    const touched = attributeLongTasks(entries, [Array.from(this.inFlight.values()), this.pending, this.recent])
    for (const c of touched.values()) {
      if (!c.span) continue
      this.stats.updateBlocking(c.seq, c.blocking)
      c.span.blockingMs = c.blocking
      for (const fn of this.updateListeners) safely(() => fn({ sessionId: this.sessionId, seq: c.seq, blockingMs: c.blocking }))
      this.sink.update(c.seq, c.blocking)
    }
    if (touched.size) this.ledgerChanged()
  }

  // ---- registry (the ledger, ledger.js) -----------------------------------------------------------------

  hostFound(location) {
    if (!this.registry.hostFound(location, this.clock())) return
    this.ledgerChanged()
    this.statusChanged()
  }

  /**
   * A tool was registered. `rec`: {name, schemaBytes, descriptor (JSON text|null), annotationsSent,
   * annotationsKept, internal}. `frame` false: listed now, its tool frame waits for keptAnnotations().
   */
  registered(rec, frame = true) {
    const t = typeof rec.acceptedAt === "number" ? pageTime(rec.acceptedAt) : this.clock()
    const { full, redefined } = this.registry.registered(rec, t)
    // Redefinition (001): the tool frame says so by carrying the new descriptor; this event names what moved.
    if (redefined) this.event("redefined", { tool: rec.name, ...redefined })
    this.stats.register(rec.name, rec.schemaBytes, !!rec.internal)
    if (frame) this.sink.tool(full, "registered")
    else {
      full.framePending = true
      this.sink.listed(full)
    }
    this.ledgerChanged()
    this.statusChanged()
  }

  /** The host said which annotations it kept of a tool listed with registered(rec, false): its frame leaves now. */
  keptAnnotations(name, kept) {
    const rec = this.registry.keptAnnotations(name, kept)
    if (rec) this.sink.tool(rec, "registered")
  }

  /** Record a registration the host refused (duplicate name, invalid schema): not a tool. */
  rejected(rec, err) {
    this.sink.rejected({ ...rec, rejected: cap(errorText(err, "message") || "rejected", 200) })
  }

  unregistered(name) {
    const rec = this.registry.unregistered(name, this.clock())
    if (!rec) return
    this.stats.unregister(name)
    this.sink.tool(rec, "unregistered")
    this.ledgerChanged()
    this.statusChanged()
  }

  /** A tool the host lists that was registered before the agent could wrap it. */
  unwrappedTool(name) {
    if (this.registry.unwrappedTool(name)) this.statusChanged()
  }

  /** A tool listed as unwrapped is measured after all (instrument(), or registered again through the hooks). */
  wrappedTool(name) {
    if (this.registry.wrappedTool(name)) this.statusChanged()
  }

  wrapFailed(name) {
    this.registry.wrapFailures++
    this.event("wrap-failed", { tool: cap(name, 128) })
    this.statusChanged()
  }

  /**
   * A call of a tool the agent cannot measure (see Interceptor.activated): counted per tool, with its time on
   * the timeline. No span, no timing, no bytes: the tool is "counted, not measured".
   */
  countedCall(name) {
    if (!this.registry.countedCall(name)) return
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
    const rec = this.registry.tools.get(name)
    let descriptor = null
    if (rec && rec.descriptor) descriptor = safely(() => JSON.parse(rec.descriptor), null)
    const mismatch = consentMismatch(shown ?? "", name, descriptor)
    const detail = consentDetail(shown, name, granted, mismatch)
    this.consents.record(name, granted, mismatch)
    this.event("consent", detail)
    return { ...detail }
  }

  event(kind, detail = {}) {
    // Calls that settled before this moment enter the timeline first (their accounting may be waiting
    // behind the page's own continuation, see Pacer.due), so the timeline keeps the page's order.
    if (this.pending.length) this.flush()
    this.sink.event({ at: this.clock(), kind, detail })
  }

  // ---- read --------------------------------------------------------------------------------------------

  /**
   * The session goes on under a new id (the relay refused the first hello: another socket holds this one).
   * Every span in the ring is re-stamped (the uplink's feed holds the same spans), so what the relay did not
   * have yet goes under the new id.
   * @param {string} id
   */
  rename(id) {
    this.sessionId = id
    for (const span of this.stats.ring.values()) span.sessionId = id
  }

  /**
   * Finish pending accounting now, so a read right after `await tool.execute(x)` counts that call (000's
   * quick start). The call path stays as it is: accounting still runs off it, only earlier when someone reads.
   */
  current() {
    if (this.pending.length) this.flush()
    return this
  }

  /** The ledger frame's body (ledger.js), with the calls' side. */
  ledger() {
    return this.registry.frame({ sessionId: this.sessionId, firstCallAt: this.firstCallAt, lastSettledAt: this.lastSettledAt, totals: this.stats.totalsObject() })
  }

  /** `batch`: a batch of calls was just accounted (its ledger frame is made now, not at the end of the task). */
  ledgerChanged(batch = false) {
    this.registry.rev++
    this.sink.ledger(batch)
  }

  /**
   * Phase, sentence, hints and coverage, from the state alone. `split`: the measuring sentence carries the
   * split (the console's and the report tool's); the status frame leaves it out, so it changes with the phase only.
   */
  status(split = true) {
    return sessionStatus(this, split ? splitLine(this.stats) : null)
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
    this.registry.counted.clear()
    this.lastSettledAt = null
    this.unsampled = 0
    this.recent = []
    this.event("reset", { nextSeq: this.seq })
    this.ledgerChanged()
    // Counted calls went with the totals: a reconnect's status says what is left.
    this.sink.restateStatus()
  }

  stop() {
    this.active = false
    this.pacer.stop()
    if (this.observer) safely(() => this.observer.disconnect())
    this.observer = null
    if (this.facts) safely(() => this.facts.stop())
    if (this.schedule.close) safely(() => this.schedule.close())
  }
}

export const measureName = (span) => `webmcp:${span.tool}#${span.seq}`
