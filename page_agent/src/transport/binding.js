// The `open` lane's transport, main-world side: a class shaped like WebSocket (what the Uplink needs of one:
// constructor(url), send, close, readyState, onopen/onmessage/onclose/onerror) whose frames go through a
// Playwright binding (`wmcp-top open` exposes it; its other end is Python, which holds the relay's address and
// token and dials the relay itself, with the frame's origin as the socket's Origin). So the token is never in
// the page: a page that patches WebSocket, fetch or postMessage sees no socket of ours at all.
//
// The binding is read once, at document_start, before any page script: a page that replaces the global later
// does not reach the agent's copy. A page may call the binding itself; that opens a relay socket of its own
// origin, no more than a page's own script tag could (the relay checks every hello against that origin).

/** The binding's name (relay_bridge/lanes/open/pipe.py exposes it under the same name). */
export const OPEN_BINDING = "__wmcpTopOpen"
/** A placeholder relay address: the Uplink needs one; Python knows the real one. */
export const OPEN_RELAY_URL = "ws://open.wmcp-top.invalid/relay"

/**
 * A WebSocket-shaped class over the binding of window `g`, or null when `open` exposed none.
 * @param {any} g  the window
 */
export function bindingSocketClass(g) {
  const pipe = typeof g[OPEN_BINDING] === "function" ? g[OPEN_BINDING] : null
  if (!pipe) return null
  // One id per document: Python closes the sockets of a frame's previous document when the next one connects.
  const doc = Math.random().toString(16).slice(2, 14)

  return class BindingSocket {
    constructor(url) {
      this.url = String(url)
      this.readyState = 0
      this.onopen = null
      this.onmessage = null
      this.onclose = null
      this.onerror = null
      this.id = null
      pipe({ t: "connect", doc }).then(
        (id) => {
          if (this.readyState !== 0 || typeof id !== "number") {
            if (typeof id === "number") pipe({ t: "close", id }).catch(() => {})
            return this.finish()
          }
          this.id = id
          this.readyState = 1
          if (this.onopen) this.onopen({ type: "open" })
          this.pump()
        },
        () => this.finish(),
      )
    }

    /** Long-poll the relay's frames: Python answers with what arrived, or after a while with nothing. */
    pump() {
      pipe({ t: "recv", id: this.id }).then(
        (r) => {
          if (this.readyState !== 1) return
          const frames = r && Array.isArray(r.m) ? r.m : []
          for (const d of frames) {
            if (typeof d === "string" && this.onmessage) this.onmessage({ type: "message", data: d })
            if (this.readyState !== 1) return
          }
          if (!r || r.closed) return this.finish()
          this.pump()
        },
        () => this.finish(),
      )
    }

    send(text) {
      if (this.readyState !== 1) throw new Error("InvalidStateError")
      pipe({ t: "send", id: this.id, d: String(text) }).catch(() => {})
    }

    close() {
      if (this.readyState >= 2) return
      if (this.id !== null) pipe({ t: "close", id: this.id }).catch(() => {})
      this.finish()
    }

    finish() {
      if (this.readyState >= 2) return
      this.readyState = 3
      if (this.onclose) this.onclose({ type: "close", code: 1006 })
    }
  }
}
