// The early buffer: what the registry hooks and the wrapper report before the rest of the agent has loaded
// (eager.js). It stands where the collector will stand, answering the call path with two clock reads and a
// push, and keeps raw events in order: registrations, withdrawals, calls entered and settled (a settled call's
// result held by reference until the collector measures it). replay.js's handOver() replays them into the collector,
// with each event's own time, so a call made before the rest arrived is the same span (times, bytes, nesting) it
// would have been; the buffer then forwards to the collector and holds nothing. Bounded: past MAX_CALLS calls
// (or MAX_EVENTS events) it measures no more and counts what it left out; the collector's coverage says so.

import { now, stamp, safely, read } from "../shared/util.js"

export const MAX_CALLS = 512
const MAX_EVENTS = 2048
const REST_WAIT_MS = 2000

// Collector methods the hooks call with no answer expected: each is kept as an event and replayed as is.
const EVENTS = ["hostFound", "registered", "keptAnnotations", "rejected", "unregistered", "unwrappedTool", "wrappedTool", "wrapFailed", "countedCall", "toolCancel", "event", "recordConsent"]

/** A call the buffer holds: entered, maybe settled, not yet replayed. */
class EarlyCall {
  constructor(seq, tool, input, profile, opts, parent, at) {
    this.seq = seq
    this.tool = tool
    this.input = input
    this.profile = profile
    this.opts = opts
    this.parent = parent
    this.at = at
    /** the collector's Call once replayed (null: sampled out) */
    this.real = undefined
  }
}

export class EarlyLog {
  /**
   * @param {object} o
   * @param {string|(() => string)} o.sessionId  the session the agent will have (its async frame names carry
   *   it), or how to make it the first time it is wanted (eager.js: not at load)
   * @param {object} o.config  the agent's configuration (the hooks read fingerprintHandler)
   * @param {() => number} [o.clock]
   * @param {(() => void)|null} [o.onCall]  the first call wants the rest of the agent now
   * @param {((fn: () => void, ms: number) => any)|null} [o.setTimeout]  bounds restWait()
   */
  constructor({ sessionId, config, clock, onCall = null, setTimeout = null }) {
    this.setTimeout = setTimeout
    /** @type {Promise<void>|null} settles when the rest is here (or REST_WAIT_MS have passed) */
    this.arrival = null
    /** @type {(() => void)|null} */
    this.arrived = null
    this.waited = false
    this.session = typeof sessionId === "function" ? sessionId : () => sessionId
    this.config = config
    // Events (and the start) on stamp(): not reading the page's clock at load; a call's times on the clock itself.
    this.clock = clock || stamp
    this.callClock = clock || now
    this.onCall = onCall
    this.attachedAt = Date.now()
    this.startedAt = this.clock()
    this.on = true
    /** @type {any} the collector, once handed over */
    this.real = null
    this.events = []
    this.calls = 0
    this.lost = 0
    this.seq = 0
    /** @type {EarlyCall[]} */
    this.stack = []
    /** executeTool() calls made inside a buffered call: {tool, parent} */
    this.expected = []
    this.waits = 0
    /** @type {RegExp|null} made by the first callerOf() that reads a stack */
    this.frameRe = null
    /** buffered calls still running, by seq (for the async caller of a nested call) */
    this.running = new Map()
    // What the hooks read of the collector's state before it exists.
    this.reportToolName = null
    this.tools = new Map()
    this.unwrapped = new Set()
    this.extraReasons = new Set()
    for (const name of EVENTS) {
      /** @type {any} */ (this)[name] = ((...args) => (this.real ? this.real[name](...args) : this.keep(name, args)))
    }
  }

  get sessionId() {
    return this.session()
  }

  /** Measuring: until detach before the hand-over, then whatever the collector says. */
  get active() {
    return this.real ? this.real.active : this.on
  }

  keep(name, args) {
    if (this.events.length >= MAX_EVENTS) {
      this.lost++
      return undefined
    }
    this.events.push({ name, at: this.clock(), args })
    return undefined
  }

  statusChanged() {
    if (this.real) this.real.statusChanged()
  }

  // ---- the call path (wrap.js) -------------------------------------------------------------------------

  enter(tool, input, profile, opts) {
    if (!this.real && this.onCall && !this.stack.length) safely(this.onCall)
    if (this.real) return this.real.enter(tool, input, profile, opts)
    if (this.calls >= MAX_CALLS || this.events.length >= MAX_EVENTS) {
      this.lost++
      return null
    }
    this.calls++
    const parent = this.stack.length ? this.stack[this.stack.length - 1] : this.takeExpected(tool)
    const call = new EarlyCall(this.seq++, tool, input, profile, opts, parent, this.callClock())
    this.running.set(call.seq, call)
    this.events.push({ name: "enter", at: call.at, args: [call] })
    return call
  }

  settle(call, ok, value) {
    if (this.real) return this.real.settle(call instanceof EarlyCall ? call.real : call, ok, value)
    if (!call) return undefined
    this.running.delete(call.seq)
    this.events.push({ name: "settle", at: this.callClock(), args: [call, ok, value] })
    return undefined
  }

  frameName(seq) {
    return `__wmcp_${this.sessionId}_${seq}`
  }

  /** The buffered call the current code runs inside (the collector's callerOf, over the buffer's calls). */
  callerOf() {
    if (this.stack.length) return this.stack[this.stack.length - 1]
    if (!this.running.size) return null
    const E = Error
    const limit = E.stackTraceLimit
    let text = null
    try {
      E.stackTraceLimit = 64
      text = new E().stack
    } catch {
      text = null
    } finally {
      safely(() => {
        E.stackTraceLimit = limit
      })
    }
    if (typeof text !== "string") return null
    this.frameRe ||= new RegExp(`__wmcp_${this.sessionId}_(\\d+)\\b`)
    const m = this.frameRe.exec(text)
    return m ? this.running.get(Number(m[1])) || null : null
  }

  /** The page calls executeTool (the first call of a declarative form's tool, too): the rest is wanted now. */
  nestedCall(tool) {
    if (!this.real && this.onCall && !this.stack.length) safely(this.onCall)
    if (this.real) return this.real.nestedCall(tool)
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

  /**
   * The page's executeTool before the rest is here: a promise to wait on before the host runs the call, else null.
   * A declarative form's call is measured by forms.js from the submit the host fires in it, so it waits (at most
   * REST_WAIT_MS) for the rest to be listening; a call made inside a buffered call does not (its nesting is kept).
   */
  restWait() {
    if (this.real || !this.on || this.running.size || !this.setTimeout || this.waited) return null
    if (this.onCall) safely(this.onCall)
    if (this.real) return null // compiled in: composed at once
    return (this.arrival ||= new Promise((resolve) => {
      this.arrived = resolve
      this.setTimeout(() => {
        this.waited = true // the rest is late: calls go on unwaited
        resolve()
      }, REST_WAIT_MS)
    }))
  }

  takeExpected(tool) {
    const i = this.expected.findIndex((e) => e.tool === tool)
    return i < 0 ? null : this.expected.splice(i, 1)[0].parent
  }

  pageWait() {
    if (this.real) return this.real.pageWait()
    this.waits++
    let done = false
    return () => {
      if (done) return
      done = true
      if (!this.real) return void this.waits--
      if (this.real.pageWaits > 0) this.real.pageWaits--
      this.real.scheduleFlush(true)
    }
  }

  // ---- the MCP-B transports (transport_observer.js, with the rest) ---------------------------------------

  /**
   * Keep every MCP-B envelope posted to this window (and, from a frame, to its same-origin parent) until the
   * transport observer arrives with the rest: a server that runs its own copy of a tool (webmcp-ts-sdk) calls no
   * wrapper, so its tools/call is seen only here. A tools/call wants the rest now. Passive: nothing is delayed.
   * @param {any} g
   */
  watchTransport(g) {
    this.unwatch = []
    const listen = (target, side) => {
      const fn = (e) => {
        const d = this.real || !this.on ? null : safely(() => e.data, null)
        if (!d || typeof d !== "object" || d.type !== "mcp") return
        this.keep("message", [side, e])
        if (d.direction === "client-to-server" && safely(() => d.payload.method, null) === "tools/call" && this.onCall) safely(this.onCall)
      }
      try {
        target.addEventListener("message", fn, { capture: true, passive: true })
        this.unwatch.push(() => target.removeEventListener("message", fn, { capture: true }))
      } catch {
        // a window whose addEventListener throws: nothing to keep from it
      }
    }
    listen(g, "own")
    // A same-origin parent (a cross-origin one throws on reading its document: none).
    const up = read(g, "parent")
    if (up && up !== g && read(up, "document")) listen(up, "parent")
  }

  stopWatching() {
    for (const f of (this.unwatch || []).splice(0)) safely(f)
  }

}
