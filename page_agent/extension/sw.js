// wmcp-top extension 0.1.0: sw.js built by page_agent/build.mjs from page_agent/src/worker/sw_main.js. Do not edit.
(function () {
"use strict";
const __m = {};
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

// ---- transport/port.js ----
__m["transport/port"] = (function () {
// The extension's transport, main-world side: a class shaped like WebSocket (what the Uplink needs of one:
// constructor(url), send, close, readyState, onopen/onmessage/onclose/onerror) that carries the relay's
// frames over a MessagePort to the extension's isolated-world bridge (extension/bridge.js), which carries
// them over a chrome.runtime port to the service worker, which holds the WebSocket to the relay.
//
// The page world never sees the relay's address or token: the URL given here is a placeholder. One
// PortSocket is one relay connection: when the service worker closes it (relay down, the worker stopped or
// restarted), the Uplink reconnects with a new one and replays from the page's ring buffer what the relay
// has not acked, exactly as over a WebSocket.

/** The window-message key of the one handshake message (it carries a MessagePort, nothing else). */
const BRIDGE_KEY = "wmcp-top:bridge/1"
/** A placeholder relay address: the Uplink needs one; the service worker knows the real one. */
const EXTENSION_RELAY_URL = "ws://extension.wmcp-top.invalid/relay"
/** The name of the chrome.runtime port from the bridge to the service worker. */
const PIPE_PORT_NAME = "wmcp-top:pipe/1"
/** Bridge-to-page messages: {t:"bridged"} | {t:"open"} | {t:"msg", d} | {t:"close"} | {t:"detach"}. */
const KEEPALIVE_MS = 20000 // a message from the page keeps an extension service worker from idling out (30 s)
const BRIDGE_TIMEOUT_MS = 5000 // no bridge answered: the extension is gone (reloaded, removed)

/**
 * A WebSocket-shaped class bound to one window. Built once at document_start, so later page scripts that
 * replace postMessage or MessageChannel do not reach it.
 * @param {object} g  the window
 * @param {{onDetach?: () => void}} [hooks]  the extension asked the agent to stop (site switched off)
 */
function portSocketClass(g, hooks = {}) {
  const Channel = g.MessageChannel
  const post = g.postMessage.bind(g)
  const st = g.setTimeout.bind(g)
  const ct = g.clearTimeout.bind(g)
  const si = g.setInterval.bind(g)
  const ci = g.clearInterval.bind(g)

  return class PortSocket {
    constructor(url) {
      this.url = String(url)
      this.readyState = 0
      this.onopen = null
      this.onmessage = null
      this.onclose = null
      this.onerror = null
      this.keepalive = null
      const ch = new Channel()
      this.port = ch.port1
      this.port.onmessage = (e) => this.receive(e && e.data)
      this.timer = st(() => this.finish(), BRIDGE_TIMEOUT_MS)
      post({ [BRIDGE_KEY]: "connect" }, "*", [ch.port2])
    }

    send(text) {
      if (this.readyState !== 1) throw new Error("InvalidStateError")
      this.port.postMessage({ t: "send", d: String(text) })
    }

    close() {
      if (this.readyState >= 2) return
      try {
        this.port.postMessage({ t: "close" })
      } catch {
        /* the bridge is gone already */
      }
      this.finish()
    }

    receive(m) {
      if (!m || typeof m !== "object" || this.readyState >= 2) return
      if (m.t === "bridged") {
        if (this.timer !== null) ct(this.timer)
        this.timer = null
      } else if (m.t === "open" && this.readyState === 0) {
        this.readyState = 1
        this.keepalive = si(() => {
          try {
            this.port.postMessage({ t: "ping" })
          } catch {
            /* closed */
          }
        }, KEEPALIVE_MS)
        if (this.onopen) this.onopen({ type: "open" })
      } else if (m.t === "msg" && this.readyState === 1 && typeof m.d === "string") {
        if (this.onmessage) this.onmessage({ type: "message", data: m.d })
      } else if (m.t === "close") {
        this.finish()
      } else if (m.t === "detach") {
        this.finish()
        if (typeof hooks.onDetach === "function") hooks.onDetach()
      }
    }

    finish() {
      if (this.readyState >= 2) return
      this.readyState = 3
      if (this.timer !== null) ct(this.timer)
      if (this.keepalive !== null) ci(this.keepalive)
      this.timer = this.keepalive = null
      try {
        this.port.onmessage = null
        this.port.close()
      } catch {
        /* already closed */
      }
      if (this.onclose) this.onclose({ type: "close", code: 1006 })
    }
  }
}
return { BRIDGE_KEY, EXTENSION_RELAY_URL, PIPE_PORT_NAME, portSocketClass };
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

// ---- worker/pipes.js ----
__m["worker/pipes"] = (function () {
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

const { EXTENSION_AGENT } = __m["shared/config"];
const { PIPE_PORT_NAME } = __m["transport/port"];
const frames = __m["transport/frames"];

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
function validRelay(url) {
  let u
  try {
    u = new URL(String(url))
  } catch {
    return false
  }
  const host = u.hostname.replace(/^\[|\]$/g, "")
  return u.protocol === "ws:" && u.pathname === "/relay" && !u.search && !u.hash && (host === "127.0.0.1" || host === "localhost" || host === "::1")
}

const validToken = (t) => typeof t === "string" && /^[0-9a-f]{32}$/.test(t)

/** Pairing settings from the pairing link's fragment: `#relay=ws%3A\u2026&t=\u2026`. null when invalid. */
function pairingFrom(fragment) {
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
function senderOrigin(sender) {
  if (typeof sender.origin === "string" && sender.origin) return sender.origin
  try {
    return new URL(String(sender.url)).origin
  } catch {
    return "null"
  }
}

/** The site a frame belongs to, for the "stop watching this site" switch: the host of its URL. */
function siteOf(url) {
  try {
    const u = new URL(String(url))
    return u.protocol === "http:" || u.protocol === "https:" ? u.hostname : ""
  } catch {
    return ""
  }
}

/** The badge text for a call count: 0..999, then 1k..99k, then 99k+. */
function badgeCount(n) {
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
class PipeHub {
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
 * The main world agent's content-script registration (chrome.scripting): every frame of every page at
 * document_start (about:blank, srcdoc and other opaque frames through matchOriginAsFallback), except the
 * hosts switched off.
 * @param {string[]} off
 */
function agentScript(off) {
  const script = {
    id: "wmcp-top-agent",
    js: ["agent.js"],
    matches: ["<all_urls>"],
    runAt: "document_start",
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
function badgeFor(v) {
  if (!v.pipes) return { text: "", color: "#5f6368", title: "wmcp-top: no page agent in this tab" }
  if (!v.paired) return { text: "?", color: "#b06000", title: "wmcp-top: not paired with a relay (run `wmcp-top extension`)" }
  if (!v.open && !v.retrying) return { text: "\u2026", color: "#5f6368", title: "wmcp-top: connecting to the relay" }
  if (!v.open) return { text: "!", color: "#c5221f", title: `wmcp-top: relay not reached at ${v.relay} (is wmcp-top running?)` }
  return { text: badgeCount(v.calls), color: "#188038", title: `wmcp-top: relay reached \u00b7 ${v.calls} call${v.calls === 1 ? "" : "s"} in this tab` }
}
return { PIPE_PORT_NAME, validRelay, validToken, pairingFrom, senderOrigin, siteOf, badgeCount, PipeHub, agentScript, badgeFor };
})();

// ---- worker/sw_main.js ----
__m["worker/sw_main"] = (function () {
// Entry of the extension's service worker (extension/sw.js): chrome.* wiring around PipeHub (pipes.js).
// Settings live in chrome.storage.local under "pairing" ({relay, token}, written by the pairing page) and
// "off" (hosts the user switched off in the popup). Content scripts can read storage.local, but only the
// isolated world has chrome.* at all; the page's main world never sees the token.
const { PipeHub, PIPE_PORT_NAME, badgeFor, pairingFrom, validRelay, validToken, agentScript } = __m["worker/pipes"];
const BADGE_EVERY_MS = 200

const badgeTimers = new Map()
function paintBadge(tabId) {
  if (badgeTimers.has(tabId)) return
  badgeTimers.set(
    tabId,
    setTimeout(() => {
      badgeTimers.delete(tabId)
      const b = badgeFor(hub.view(tabId))
      chrome.action.setBadgeText({ tabId, text: b.text }).catch(() => {})
      chrome.action.setBadgeBackgroundColor({ tabId, color: b.color }).catch(() => {})
      chrome.action.setTitle({ tabId, title: b.title }).catch(() => {})
    }, BADGE_EVERY_MS),
  )
}

const hub = new PipeHub({ WebSocket, onTab: (tabId) => tabId >= 0 && paintBadge(tabId) })

/**
 * The main-world agent is registered here, not in the manifest, so that the sites switched off in the popup
 * are excluded from injection (excludeMatches); the isolated bridge stays in the manifest. Registered
 * scripts persist across browser restarts; this runs on every worker start to match the stored list.
 */
async function syncAgentScript(off) {
  const script = agentScript(off)
  const [current] = await chrome.scripting.getRegisteredContentScripts({ ids: [script.id] })
  if (!current) return chrome.scripting.registerContentScripts([script])
  // A worker wakes often (every reconnect): touch the registration only when the switched-off list changed.
  if (JSON.stringify(current.excludeMatches || []) !== JSON.stringify(script.excludeMatches)) await chrome.scripting.updateContentScripts([script])
}

let scriptReady = Promise.resolve()

async function load() {
  const got = await chrome.storage.local.get(["pairing", "off"])
  const p = got.pairing && typeof got.pairing === "object" ? got.pairing : {}
  const off = Array.isArray(got.off) ? got.off.filter((h) => typeof h === "string") : []
  scriptReady = syncAgentScript(off).catch(() => {})
  hub.configure({ relay: validRelay(p.relay) ? p.relay : null, token: validToken(p.token) ? p.token : null, off })
  await scriptReady
}

chrome.runtime.onConnect.addListener((port) => {
  const s = port.sender
  if (port.name !== PIPE_PORT_NAME || !s || !s.tab || typeof s.tab.id !== "number") return port.disconnect()
  // Origin and frame from the browser (port.sender), never from what the page's frames say.
  hub.connect(port, { tabId: s.tab.id, frameId: s.frameId || 0, url: s.url || "", origin: typeof s.origin === "string" ? s.origin : undefined })
})

chrome.storage.onChanged.addListener((changes, area) => {
  if (area === "local" && (changes.pairing || changes.off)) load()
})

// The popup and the pairing page ask here: extension pages only, never a content script (whose sender.url is
// the page's).
const OWN = `chrome-extension://${chrome.runtime.id}/`
chrome.runtime.onMessage.addListener((msg, sender, reply) => {
  if (sender.id !== chrome.runtime.id || typeof sender.url !== "string" || !sender.url.startsWith(OWN) || !msg || typeof msg !== "object") return false
  if (msg.q === "tab" && typeof msg.tabId === "number") {
    reply(hub.view(msg.tabId))
  } else if (msg.q === "pair" && typeof msg.fragment === "string") {
    const p = pairingFrom(msg.fragment)
    if (!p) reply({ ok: false })
    // Answered once the agent's registration is in place: a page opened after pairing is watched.
    else chrome.storage.local.set({ pairing: p }).then(() => scriptReady).then(() => reply({ ok: true, relay: p.relay }))
    return true
  }
  return false
})

load()
})();
})();
