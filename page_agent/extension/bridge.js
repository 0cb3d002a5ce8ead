// wmcp-top extension 0.1.0: bridge.js built by page_agent/build.mjs from page_agent/src/isolated/bridge_main.js. Do not edit.
(function () {
"use strict";
const __m = {};
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

// ---- isolated/bridge_main.js ----
__m["isolated/bridge_main"] = (function () {
// Entry of the extension's isolated-world script (extension/bridge.js), injected at document_start in every
// frame just before the main-world agent. It takes the agent's one handshake message (a window message from
// this same window carrying a MessagePort), hides it from the page's own listeners, and carries frames
// between that MessagePort and a chrome.runtime port to the service worker. It holds no address, no token
// and no state: the page world can reach the relay only through it, and only as one more page agent would.
const { BRIDGE_KEY, PIPE_PORT_NAME } = __m["transport/port"];
const MAX_FRAME_CHARS = 1 << 20
const MAX_PORTS = 16 // per frame: a page that opens more gets no more
let ports = 0

function bridge(mp) {
  let port
  try {
    port = chrome.runtime.connect({ name: PIPE_PORT_NAME })
  } catch {
    // The extension was reloaded or removed: this frame's script is orphaned.
    mp.postMessage({ t: "close" })
    return mp.close()
  }
  ports++
  let done = false
  const end = () => {
    if (done) return
    done = true
    ports--
    try {
      mp.postMessage({ t: "close" })
    } catch {
      /* closed */
    }
    mp.onmessage = null
    mp.close()
  }
  port.onMessage.addListener((m) => {
    if (done || !m || typeof m !== "object") return
    if (m.t === "open" || m.t === "detach" || (m.t === "msg" && typeof m.d === "string")) mp.postMessage(m.t === "msg" ? { t: "msg", d: m.d } : { t: m.t })
  })
  port.onDisconnect.addListener(end)
  mp.onmessage = (e) => {
    const m = e.data
    if (done || !m || typeof m !== "object") return
    if (m.t === "send" && typeof m.d === "string" && m.d.length <= MAX_FRAME_CHARS) port.postMessage({ t: "send", d: m.d })
    else if (m.t === "ping") port.postMessage({ t: "ping" })
    else if (m.t === "close") {
      try {
        port.disconnect()
      } catch {
        /* gone */
      }
      end()
    }
  }
  mp.postMessage({ t: "bridged" })
}

addEventListener(
  "message",
  (e) => {
    const d = e.data
    if (e.source !== window || !d || typeof d !== "object" || d[BRIDGE_KEY] !== "connect") return
    e.stopImmediatePropagation()
    const mp = e.ports && e.ports[0]
    if (!mp) return
    if (ports >= MAX_PORTS) return mp.close()
    bridge(mp)
  },
  true,
)
})();
})();
