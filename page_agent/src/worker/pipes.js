// The extension's service worker, its logic without chrome.* (sw_main.js wires it): one relay WebSocket per
// page-agent connection (a chrome.runtime port from a frame's bridge), frames carried both ways unchanged
// except one: a `hello` is stamped by the worker from what the browser says of the port's sender (its origin,
// top frame or not) and gets the extension's agent name, whatever the page world claims. Any script of the
// page can reach the bridge, so the page can speak only for itself here, and for a few sessions at most.
//
// Delivery stays the page agent's: its Uplink keeps the spans in the page's ring buffer until the relay acks
// them, and on every new connection says hello again (with the relay's resume secret) and replays what was
// not acked. So this worker holds nothing that must survive it: stopped, suspended or restarted, its ports
// close, each page's Uplink reconnects (which wakes the worker again) and replays. What the worker keeps in
// memory (session ids, phases, acked seqs for the badge) is rebuilt from the frames of the new connection.

import { EXTENSION_AGENT } from "../shared/config.js"
import { PIPE_PORT_NAME } from "../transport/port.js"
import * as frames from "../transport/frames.js"

export { PIPE_PORT_NAME }


const MAX_FRAME_CHARS = 1 << 20 // the relay's frame cap; a bigger one is dropped here
const MAX_PIPES_PER_TAB = 64
const MAX_SESSIONS_PER_PIPE = 16 // the relay's own cap per connection
// What one tab, and one frame of it, may hold in the relay's session table through the extension: a page
// that opens many frames or ports cannot fill the table (64) for everyone else.
const MAX_SESSIONS_PER_TAB = 16
const MAX_SESSIONS_PER_FRAME = 8
const RETRY_MS = [250, 500, 1000, 2000, 4000, 5000]

/**
 * Settings from the pairing page: {relay: "ws://127.0.0.1:PORT/relay", token: 32 hex} and the hosts the
 * user switched off.
 * @typedef {{relay: string|null, token: string|null, off: string[]}} Settings
 */

/** A relay address the extension accepts: ws:// to a loopback host, path /relay. */
export function validRelay(url) {
  let u
  try {
    u = new URL(String(url))
  } catch {
    return false
  }
  const host = u.hostname.replace(/^\[|\]$/g, "")
  return u.protocol === "ws:" && u.pathname === "/relay" && !u.search && !u.hash && (host === "127.0.0.1" || host === "localhost" || host === "::1")
}

export const validToken = (t) => typeof t === "string" && /^[0-9a-f]{32}$/.test(t)

/** Pairing settings from the pairing link's fragment: `#relay=ws%3A…&t=…`. null when invalid. */
export function pairingFrom(fragment) {
  const q = new URLSearchParams(String(fragment || "").replace(/^#/, ""))
  const relay = q.get("relay")
  const token = q.get("t")
  return relay && validRelay(relay) && validToken(token) ? { relay, token } : null
}

/**
 * The origin a hello from this sender is stamped with: the browser's `sender.origin` (a frame's real origin,
 * "null" for an opaque one), else the origin of its URL.
 * @param {{origin?: string, url?: string}} sender
 */
export function senderOrigin(sender) {
  if (typeof sender.origin === "string" && sender.origin) return sender.origin
  try {
    return new URL(String(sender.url)).origin
  } catch {
    return "null"
  }
}

/** The site a frame belongs to, for the "stop watching this site" switch: the host of its URL. */
export function siteOf(url) {
  try {
    const u = new URL(String(url))
    return u.protocol === "http:" || u.protocol === "https:" ? u.hostname : ""
  } catch {
    return ""
  }
}

/** The badge text for a call count: 0..999, then 1k..99k, then 99k+. */
export function badgeCount(n) {
  if (n < 1000) return String(n)
  if (n < 100000) return `${Math.floor(n / 1000)}k`
  return "99k+"
}

class Pipe {
  constructor(hub, port, tabId, frameId, site, origin) {
    this.hub = hub
    this.port = port
    this.tabId = tabId
    this.frameId = frameId
    this.site = site
    this.origin = origin // the browser's word for the sender's origin: every hello of this pipe carries it
    this.ws = null
    this.state = "waiting" // waiting (not paired) | connecting | retrying (relay not reached) | open | closed
    this.attempt = 0
    this.timer = null
    this.sessions = new Map() // id -> {phase, acked}
  }

  /** Connect when paired and the site is on; else hold the port (the page waits quietly). */
  start() {
    const s = this.hub.settings
    if (this.state === "closed") return
    if (this.site && s.off.includes(this.site)) return this.detach()
    if (!s.relay || !s.token) {
      this.state = "waiting"
      return this.hub.changed(this.tabId)
    }
    this.dial(s)
  }

  /**
   * Dial the relay. Until it answers, the page's socket stays "connecting" and this pipe retries on its own
   * (the page's backoff is for connections that were open and dropped: those need a fresh hello).
   */
  dial(s) {
    this.state = "connecting"
    let ws
    try {
      ws = new this.hub.WebSocket(`${s.relay}?t=${s.token}`)
    } catch {
      return this.close()
    }
    this.ws = ws
    ws.onopen = () => {
      if (this.ws !== ws) return
      this.state = "open"
      this.attempt = 0
      this.post({ t: "open" })
      this.hub.changed(this.tabId)
    }
    ws.onmessage = (e) => {
      if (this.ws !== ws || typeof e.data !== "string") return
      this.fromRelay(e.data)
      this.post({ t: "msg", d: e.data })
    }
    ws.onclose = () => {
      if (this.ws !== ws) return
      this.ws = null
      if (this.state === "open") return this.close()
      this.state = "retrying"
      this.hub.changed(this.tabId)
      const delay = RETRY_MS[Math.min(this.attempt++, RETRY_MS.length - 1)]
      this.timer = this.hub.setTimeout(() => {
        this.timer = null
        if (this.state === "retrying") this.start()
      }, delay)
    }
    ws.onerror = () => {}
  }

  post(m) {
    try {
      this.port.postMessage(m)
    } catch {
      this.close()
    }
  }

  /** A message from the page's bridge. */
  fromPage(m) {
    if (!m || typeof m !== "object") return
    if (m.t === "close") return this.close()
    if (m.t !== "send" || typeof m.d !== "string" || m.d.length > MAX_FRAME_CHARS || this.state !== "open") return
    let text = m.d
    let frame = null
    try {
      frame = JSON.parse(text)
    } catch {
      frame = null
    }
    if (frame && typeof frame === "object") {
      if (frame.type === "hello" && frame.session && typeof frame.session === "object" && typeof frame.session.id === "string") {
        const id = frame.session.id
        if (!this.sessions.has(id)) {
          const full = this.sessions.size >= MAX_SESSIONS_PER_PIPE ? "connection" : this.hub.sessionCount(this.tabId) >= MAX_SESSIONS_PER_TAB ? "tab" : this.hub.sessionCount(this.tabId, this.frameId) >= MAX_SESSIONS_PER_FRAME ? "frame" : null
          if (full) return this.refuse(id, `at most ${{ connection: MAX_SESSIONS_PER_PIPE, tab: MAX_SESSIONS_PER_TAB, frame: MAX_SESSIONS_PER_FRAME }[full]} sessions a ${full} through the extension`)
          this.sessions.set(id, { phase: "", acked: -1, relayed: frame.session.context === "relayed" })
        }
        this.stamp(frame)
        text = JSON.stringify(frame)
      } else if (frame.type === "bye" && this.sessions.has(frame.session)) {
        this.sessions.delete(frame.session) // ended: its place in the tab's share is free again
        this.hub.changed(this.tabId)
      } else if (frame.type === "status" && this.sessions.has(frame.session) && typeof frame.phase === "string") {
        this.sessions.get(frame.session).phase = frame.phase.slice(0, 32)
        this.hub.changed(this.tabId)
      }
    }
    try {
      this.ws.send(text)
    } catch {
      this.close()
    }
  }

  /**
   * What the browser, not the page, says of a hello: the sender's origin, whether it is the tab's top frame,
   * and the extension's agent name. A relayed session (heard on the page's BroadcastChannel, same origin) stays
   * relayed, forwarded by a session of this pipe or by none.
   */
  stamp(frame) {
    const s = frame.session
    const relayed = s.context === "relayed"
    frame.agent = EXTENSION_AGENT
    s.origin = this.origin
    s.context = relayed ? "relayed" : this.frameId === 0 ? "top" : "iframe"
    const via = this.sessions.get(s.via)
    if (!relayed || !via || via.relayed) delete s.via
  }

  /** Answer the page as the relay would, without troubling it: the agent backs off and tries again later. */
  refuse(id, message) {
    this.post({ t: "msg", d: JSON.stringify(frames.error("session_limit", message, false, id)) })
  }

  /** Acks from the relay give this tab's call count: the highest contiguous seq stored, plus one. */
  fromRelay(text) {
    const taken = text.startsWith('{"type":"error","code":"session_taken"')
    if (!taken && !text.startsWith('{"type":"ack"')) return
    let msg
    try {
      msg = JSON.parse(text)
    } catch {
      return
    }
    const s = this.sessions.get(msg.session)
    if (taken) {
      // Not this pipe's: its place is free for the agent's next hello (under a new id, or again after a backoff).
      if (s) this.sessions.delete(msg.session)
      return
    }
    if (s && typeof msg.seq === "number" && msg.seq > s.acked) {
      s.acked = msg.seq
      this.hub.changed(this.tabId)
    }
  }

  /** Settings changed before the relay answered: start over with them. */
  redial() {
    this.letGo()
    this.attempt = 0
    this.start()
  }

  /** Cancel a pending redial and close the relay socket, if any. */
  letGo() {
    if (this.timer !== null) this.hub.clearTimeout(this.timer)
    this.timer = null
    const ws = this.ws
    this.ws = null
    if (ws)
      try {
        ws.close(1000)
      } catch {
        /* closed */
      }
  }

  /** The site was switched off: tell the page agent to detach, then let go. */
  detach() {
    this.post({ t: "detach" })
    this.close()
  }

  close() {
    if (this.state === "closed") return
    this.state = "closed"
    this.letGo()
    try {
      this.port.disconnect()
    } catch {
      /* gone */
    }
    this.hub.remove(this)
  }
}

/** Every pipe of the worker, grouped by tab; `changed(tabId)` feeds the badge. */
export class PipeHub {
  /**
   * @param {object} o
   * @param {Function} o.WebSocket
   * @param {(tabId:number, view:object) => void} o.onTab  a tab's view changed (badge)
   * @param {Function} [o.setTimeout]
   * @param {Function} [o.clearTimeout]
   */
  constructor({ WebSocket: WS, onTab, setTimeout: st = globalThis.setTimeout, clearTimeout: ct = globalThis.clearTimeout }) {
    this.WebSocket = WS
    this.setTimeout = (fn, ms) => st(fn, ms) // unbound: a worker's timers refuse another `this`
    this.clearTimeout = (t) => ct(t)
    this.onTab = onTab
    /** @type {Settings} */
    this.settings = { relay: null, token: null, off: [] }
    this.ready = false
    this.pending = []
    this.tabs = new Map() // tabId -> Set<Pipe>
  }

  /** New settings (first load, pairing, a site switched off): re-plan every pipe. */
  configure(settings) {
    const old = this.settings
    this.settings = { relay: settings.relay || null, token: settings.token || null, off: Array.isArray(settings.off) ? settings.off.slice(0, 1000) : [] }
    const moved = old.relay !== this.settings.relay || old.token !== this.settings.token
    this.ready = true
    for (const pipe of this.all()) {
      if (pipe.site && this.settings.off.includes(pipe.site)) pipe.detach()
      else if (moved && pipe.state === "open") pipe.close() // the page reconnects to the new relay
      else if (moved || pipe.state === "waiting") pipe.redial()
    }
    const pending = this.pending
    this.pending = []
    for (const p of pending) p.start()
  }

  /**
   * A bridge connected.
   * @param {{postMessage:Function, disconnect:Function, onMessage:{addListener:Function}, onDisconnect:{addListener:Function}}} port
   * @param {{tabId:number, frameId:number, url:string, origin?:string}} sender  what the browser says of the port's sender
   */
  connect(port, sender) {
    const tab = this.tabs.get(sender.tabId) || new Set()
    if (tab.size >= MAX_PIPES_PER_TAB) {
      try {
        port.disconnect()
      } catch {
        /* gone */
      }
      return null
    }
    const pipe = new Pipe(this, port, sender.tabId, sender.frameId, siteOf(sender.url), senderOrigin(sender))
    tab.add(pipe)
    this.tabs.set(sender.tabId, tab)
    port.onMessage.addListener((m) => pipe.fromPage(m))
    port.onDisconnect.addListener(() => pipe.close())
    if (this.ready) pipe.start()
    else this.pending.push(pipe)
    return pipe
  }

  /**
   * Sessions a tab (or one frame of it) holds through the extension now.
   * @param {number} tabId
   * @param {number} [frameId]
   */
  sessionCount(tabId, frameId) {
    let n = 0
    for (const p of this.tabs.get(tabId) || []) if (frameId === undefined || p.frameId === frameId) n += p.sessions.size
    return n
  }

  remove(pipe) {
    const tab = this.tabs.get(pipe.tabId)
    if (tab) {
      tab.delete(pipe)
      if (!tab.size) this.tabs.delete(pipe.tabId)
    }
    this.pending = this.pending.filter((p) => p !== pipe)
    this.changed(pipe.tabId)
  }

  *all() {
    for (const tab of this.tabs.values()) yield* Array.from(tab)
  }

  /** What the badge and the popup show for one tab. */
  view(tabId) {
    const pipes = Array.from(this.tabs.get(tabId) || [])
    const sessions = []
    let calls = 0
    for (const p of pipes)
      for (const [id, s] of p.sessions) {
        sessions.push({ id, phase: s.phase || "connecting", frameId: p.frameId, site: p.site })
        calls += s.acked + 1
      }
    const paired = !!(this.settings.relay && this.settings.token)
    const open = pipes.filter((p) => p.state === "open").length
    const retrying = pipes.filter((p) => p.state === "retrying").length
    return { paired, relay: this.settings.relay, pipes: pipes.length, open, retrying, calls, sessions }
  }

  changed(tabId) {
    if (typeof this.onTab === "function") this.onTab(tabId, this.view(tabId))
  }
}

/** A host the popup's switch may name and a match pattern may hold (anything else is left out). */
const HOST_RE = /^(?:[a-z0-9-]+\.)*[a-z0-9-]+$|^\[[0-9a-f:.]+\]$/

/**
 * The main world agent's content-script registration (chrome.scripting): every frame of every page, the eager
 * part at document_start (about:blank, srcdoc and other opaque frames through matchOriginAsFallback) and its rest
 * at document_idle (`part` "rest"), except the hosts switched off.
 * @param {string[]} off
 * @param {"agent"|"rest"} [part]
 */
export function agentScript(off, part = "agent") {
  const script = {
    id: part === "rest" ? "wmcp-top-rest" : "wmcp-top-agent",
    js: [part === "rest" ? "rest.js" : "agent.js"],
    matches: ["<all_urls>"],
    runAt: part === "rest" ? "document_idle" : "document_start",
    allFrames: true,
    matchOriginAsFallback: true,
    world: "MAIN",
    persistAcrossSessions: true,
  }
  // Always present, even empty: an update leaves unnamed properties as they were, so [] is how excludes go away.
  script.excludeMatches = off.filter((h) => typeof h === "string" && HOST_RE.test(h)).map((h) => `*://${h}/*`)
  return script
}

/** The badge for a tab's view: text, colour and tooltip. Nothing on tabs without an agent. */
export function badgeFor(v) {
  if (!v.pipes) return { text: "", color: "#5f6368", title: "wmcp-top: no page agent in this tab" }
  if (!v.paired) return { text: "?", color: "#b06000", title: "wmcp-top: not paired with a relay (run `wmcp-top extension`)" }
  if (!v.open && !v.retrying) return { text: "…", color: "#5f6368", title: "wmcp-top: connecting to the relay" }
  if (!v.open) return { text: "!", color: "#c5221f", title: `wmcp-top: relay not reached at ${v.relay} (is wmcp-top running?)` }
  return { text: badgeCount(v.calls), color: "#188038", title: `wmcp-top: relay reached · ${v.calls} call${v.calls === 1 ? "" : "s"} in this tab` }
}
