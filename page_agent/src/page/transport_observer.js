// The transport observer: MCP `tools/call` requests and their responses as the MCP-B postMessage transports
// carry them into and out of this document (@mcp-b/transports 5.x: TabServerTransport, IframeChildTransport,
// and the extension's, whose content script reaches the page's TabServerTransport the same way). Every one
// of them posts `{channel, type: "mcp", direction, payload}` with the JSON-RPC message as `payload`:
//   tab:          both directions are posted to this window (event.source === window)
//   iframe child: the request arrives from the parent (event.source === parent); the response is posted to
//                 the parent's window, watched there when it is same-origin (event.source === this window)
// Whatever runs the tool (@mcp-b/global, @mcp-b/webmcp-ts-sdk's BrowserMcpServer, a hand-rolled McpServer),
// the call is one span, timed request to response, sized from the JSON-RPC `result` the client receives.
// Where the page function passes the agent's wrapper too, the two are one span (Collector.enter joins them)
// and each is the other's referee: a call one path sees and the other does not marks coverage incomplete.
// A passive capture listener reads metadata: no message is delayed, changed or swallowed, and the bodies
// (arguments, result) are held only until the collector has sized them, exactly as a wrapped call's are.

import { safely, cap } from "../shared/util.js"

const TO_SERVER = "client-to-server"
const TO_CLIENT = "server-to-client"
const MAX_OPEN = 256 // requests awaiting their response; older ones are given up (and said so)
export const ANSWER_WAIT_MS = 10_000 // a joined call whose function returned waits this long for its response

const isObject = (v) => v !== null && typeof v === "object"
const ID = (id) => (typeof id === "string" ? `s${cap(id, 256)}` : typeof id === "number" && Number.isFinite(id) ? `n${id}` : null)

/** A browser's own MessageEvent (its `data` and `source` run no page code); any event where there is none (tests).
 * `ME`: the window's MessageEvent as it was when the observer started (a page replacing it later changes nothing). */
const isMessageEvent = (e, ME) => typeof ME !== "function" || e instanceof ME
/** Is a message event being dispatched (its listeners, or the microtasks after one)? `window.event` says. */
const inMessageDispatch = (g) => safely(() => {
  const e = g.event
  return !!e && e.type === "message"
}, false)

/** The MCP-B envelope's JSON-RPC payload, when `data` is one going `direction`; else null. */
function payloadOf(data, direction) {
  if (!isObject(data) || data.type !== "mcp" || data.direction !== direction || typeof data.channel !== "string") return null
  const p = data.payload
  return isObject(p) && p.jsonrpc === "2.0" ? p : null
}

export class TransportObserver {
  /**
   * @param {import("./collector.js").Collector} collector
   * @param {{global: any, name: (n: unknown) => string, setTimeout?: Function}} opts
   */
  constructor(collector, { global, name, setTimeout }) {
    this.c = collector
    this.g = global
    this.name = name
    this.st = setTimeout || ((f, ms) => global.setTimeout(f, ms))
    /** `${route}|${channel}|${id}` -> entries awaiting a response, oldest first */
    this.open = new Map()
    this.size = 0
    this.parentWatched = false
    this.undo = []
    /** referee counts, each one reason in the status while non-zero */
    this.counts = { transportOnly: 0, early: 0, unanswered: 0, blind: 0, unseen: 0, given: 0 }
    this.reasons = new Map()
    /** function-level calls of this task the transport has not carried (yet): a listener registered after the
     * server's sees the request only once the server's microtasks have run the tool */
    this.orphans = []
    this.sweepTimer = null
    /** an MCP-B envelope was seen (an MCP client's first tools/call follows its initialize and tools/list) */
    this.seen = false
    this.publishing = false
    this.ownME = undefined
    this.parentME = undefined
  }

  start() {
    const g = this.g
    const listen = (target, fn) =>
      safely(() => {
        target.addEventListener("message", fn, { capture: true, passive: true })
        this.undo.push(() => target.removeEventListener("message", fn, { capture: true }))
        return true
      }, false)
    this.ownME = safely(() => g.MessageEvent, undefined)
    listen(g, (e) => safely(() => this.onOwnWindow(e)))
    // An iframe's server answers on its parent's window: readable from here only when same-origin.
    const parent = safely(() => (g.parent && g.parent !== g ? g.parent : null), null)
    if (parent) {
      this.parentME = safely(() => parent.MessageEvent, undefined)
      this.parentWatched = listen(parent, (e) => safely(() => this.onParentWindow(e)))
    }
  }

  stop() {
    for (const f of this.undo.splice(0)) safely(f)
  }

  onOwnWindow(e) {
    if (!isMessageEvent(e, this.ownME)) return
    const src = e.source
    const data = e.data
    const g = this.g
    if (src === g) {
      const req = payloadOf(data, TO_SERVER)
      if (req) return this.request("tab", data.channel, req)
      const res = payloadOf(data, TO_CLIENT)
      if (res) this.response("tab", data.channel, res)
      return
    }
    if (src !== null && src === safely(() => g.parent, null) && src !== g) {
      const req = payloadOf(data, TO_SERVER)
      if (!req) return
      if (this.parentWatched) this.request("frame", data.channel, req)
      else if (req.method === "tools/call") this.note("blind")
    }
  }

  onParentWindow(e) {
    if (!isMessageEvent(e, this.parentME) || e.source !== this.g) return
    const data = e.data
    const res = payloadOf(data, TO_CLIENT)
    if (res) this.response("frame", data.channel, res)
  }

  request(route, channel, msg) {
    this.seen = true
    if (msg.method !== "tools/call" || !this.c.active) return
    const id = ID(msg.id)
    const params = msg.params
    if (id === null || !isObject(params) || typeof params.name !== "string") return
    const tool = this.name(params.name)
    const k = this.orphans.findIndex((o) => o.call.tool === tool)
    let entry
    if (k >= 0) {
      const call = this.orphans.splice(k, 1)[0].call
      this.c.adopt(call)
      if (call.fnDone && call.settledAt === null) this.functionDone(call)
      entry = { tool, call, claimed: true }
    } else {
      const call = this.c.enter(tool, params.arguments === undefined ? {} : params.arguments, "mcp-b", { wire: true })
      entry = { tool, call, claimed: false }
    }
    const key = `${route}|${cap(channel, 128)}|${id}`
    const list = this.open.get(key)
    if (list) list.push(entry)
    else this.open.set(key, [entry])
    if (++this.size > MAX_OPEN) this.giveUpOldest()
  }

  response(route, channel, msg) {
    this.seen = true
    const id = ID(msg.id)
    if (id === null || "method" in msg) return
    const key = `${route}|${cap(channel, 128)}|${id}`
    const list = this.open.get(key)
    if (!list) return
    const entry = list.shift()
    if (!list.length) this.open.delete(key)
    this.size--
    if (!entry.call) return this.c.answered(null)
    if (!entry.claimed) this.note("transportOnly")
    else if (!entry.call.fnDone) this.note("early")
    if (isObject(msg.result)) this.c.answered(entry.call, true, msg.result)
    else this.c.answered(entry.call, false, rpcError(msg.error))
  }

  /**
   * The wrapper entered `tool`: the oldest request for it still awaiting its response and not yet joined is this
   * call. Returns that entry (its `call` is null when sampling left it out), or null when the transport saw none.
   */
  claim(tool) {
    for (const list of this.open.values()) {
      for (const entry of list) {
        if (entry.claimed || entry.tool !== tool) continue
        entry.claimed = true
        return entry
      }
    }
    return null
  }

  /** A joined call's function returned: its response is due; one that never comes is said, not waited for. */
  functionDone(call) {
    safely(() =>
      this.st(() => {
        if (call.settledAt !== null) return
        this.note("unanswered")
        this.forget(call)
        this.c.answered(call, call.fnOk, call.fnValue, call.fnProfile)
      }, ANSWER_WAIT_MS),
    )
  }

  /**
   * A function-level call no request claimed: the transport may still show its request in this task. After it,
   * one an MCP client made (by the host's account: profile "mcp") with no tools/call seen to carry it is said.
   */
  orphan(call, profile) {
    // A request can only come after its call within the dispatch of the message that carried it (the server's
    // listener ran first): a call entered outside one is nobody's orphan, and needs no timer. No transport carries
    // a tools/call before its client's initialize, so where no envelope was seen yet the page's `window.event` is
    // not read (2.5 µs a call in Chromium 156). One an MCP client's host made is looked at after the task whatever
    // carried it, to say when no transport was seen.
    if (profile !== "mcp" && !(this.seen && inMessageDispatch(this.g))) return
    this.orphans.push({ call, profile })
    if (this.orphans.length > MAX_OPEN) this.orphans.shift()
    if (this.sweepTimer !== null) return
    this.sweepTimer = safely(() =>
      this.st(() => {
        this.sweepTimer = null
        const left = this.orphans.splice(0)
        if (left.some((o) => o.profile === "mcp")) this.note("unseen")
      }, 0),
    )
  }

  forget(call) {
    for (const [key, list] of this.open) {
      const i = list.findIndex((x) => x.call === call)
      if (i < 0) continue
      list.splice(i, 1)
      this.size--
      if (!list.length) this.open.delete(key)
      return
    }
  }

  giveUpOldest() {
    const first = this.open.keys().next()
    if (first.done) return
    const list = this.open.get(first.value)
    const entry = list.shift()
    this.size--
    if (!list.length) this.open.delete(first.value)
    this.note("given")
    // Settled now, so nothing given up stays in flight for good: the function's outcome when it ran, else an error.
    const call = entry.call
    if (!call || call.settledAt !== null) return
    if (call.fnDone) this.c.answered(call, call.fnOk, call.fnValue, call.fnProfile)
    else this.c.answered(call, false, { name: "TransportError", message: `no response seen on the transport before ${MAX_OPEN} later requests` })
  }

  /** Count one referee finding; the status is rewritten in a task of its own, off the message's dispatch. */
  note(kind) {
    this.counts[kind]++
    if (this.publishing) return
    this.publishing = true
    safely(() =>
      this.c.schedule(() => {
        this.publishing = false
        for (const k of Object.keys(this.counts)) {
          if (!this.counts[k]) continue
          const old = this.reasons.get(k)
          if (old) this.c.extraReasons.delete(old)
          const text = reasonText(k, this.counts[k])
          this.reasons.set(k, text)
          this.c.extraReasons.add(text)
        }
        this.c.statusChanged()
      }),
    )
  }
}

/** The JSON-RPC error as the thrown-error shape the span's error text is taken from (per errorPolicy). */
function rpcError(err) {
  const message = isObject(err) && typeof err.message === "string" ? err.message : "JSON-RPC error response"
  return { name: "McpError", message: cap(message, 400) }
}

/** The referee's reason for each kind, with the fix where there is one. */
function reasonText(kind, n) {
  switch (kind) {
    case "transportOnly":
      return `${n} MCP tools/call(s) over postMessage ran no tool function the agent wraps (the MCP server keeps its own reference to it): each is timed request to response at the transport, with the bytes the client received, but the function's own time and Long Tasks are not attributed; register the tools on document.modelContext before the server takes them, or load the agent before the MCP package (first in <head>)`
    case "early":
      return `${n} MCP tools/call(s) were answered on the transport while the tool function the agent measured for them was still running: the span is the transport's (request to response)`
    case "unanswered":
      return `${n} MCP tools/call(s) ran the tool function but no response was seen on the transport within ${ANSWER_WAIT_MS / 1000} s: sized from the function's value, not from what the client received`
    case "blind":
      return `${n} MCP tools/call(s) reached this frame from a cross-origin parent, which receives the responses out of the agent's sight: only calls through the agent's wrapper are measured; serve the frame from its parent's origin to measure every call`
    case "unseen":
      return `${n} MCP-client call(s) reached a tool function with no tools/call seen on a postMessage transport (another transport carried them, out of the agent's sight): sized as the MCP result the agent expects, not as carried`
    default:
      return `${n} MCP tools/call(s) were still awaiting a response when more than ${MAX_OPEN} were open: given up, recorded as errors without the client's bytes`
  }
}
