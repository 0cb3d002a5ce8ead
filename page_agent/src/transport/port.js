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
export const BRIDGE_KEY = "wmcp-top:bridge/1"
/** A placeholder relay address: the Uplink needs one; the service worker knows the real one. */
export const EXTENSION_RELAY_URL = "ws://extension.wmcp-top.invalid/relay"
/** The name of the chrome.runtime port from the bridge to the service worker. */
export const PIPE_PORT_NAME = "wmcp-top:pipe/1"
/** Bridge-to-page messages: {t:"bridged"} | {t:"open"} | {t:"msg", d} | {t:"close"} | {t:"detach"}. */
const KEEPALIVE_MS = 20000 // a message from the page keeps an extension service worker from idling out (30 s)
const BRIDGE_TIMEOUT_MS = 5000 // no bridge answered: the extension is gone (reloaded, removed)

/**
 * A WebSocket-shaped class bound to one window. Built once at document_start, so later page scripts that
 * replace postMessage or MessageChannel do not reach it.
 * @param {object} g  the window
 * @param {{onDetach?: () => void}} [hooks]  the extension asked the agent to stop (site switched off)
 */
export function portSocketClass(g, hooks = {}) {
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
