// How the relay's token reaches the agent and goes back to the relay, never in a URL (docs/security.md, "The
// token"). A script URL appears in every stack through the wrapper, in resource timing and in error reports, and
// Chromium's console line for a failed WebSocket names its URL. So the relay's script tag carries the token in a
// data- attribute the agent reads once and removes, the import() line hands it to start(), and the agent offers
// it to the relay as a WebSocket subprotocol, which no console line or performance entry shows.

/** The tag's attribute (`<script src="…/agent.js?v=HASH" data-wmcp="…">`). */
const TOKEN_ATTRIBUTE = "data-wmcp"
/** The subprotocol the relay selects; the token rides beside it as `wmcp-top.token.<token>`, never selected. */
const SUBPROTOCOL = "wmcp-top"
const TOKEN_PROTOCOL_PREFIX = "wmcp-top.token."

/**
 * 32 lowercase hex digits. Read character by character, not by a regular expression: the agent checks the tag's
 * token at load, where compiling one costs a cold page's main thread about 0.05 ms.
 * @param {unknown} token
 */
export function validToken(token) {
  if (typeof token !== "string" || token.length !== 32) return false
  for (let i = 0; i < 32; i++) {
    const c = token.charCodeAt(i)
    if (!((c >= 48 && c <= 57) || (c >= 97 && c <= 102))) return false
  }
  return true
}

/**
 * The token on the script element running now, removed from it so nothing that reads the DOM later finds it.
 * @param {Element|null|undefined} script  document.currentScript
 * @returns {string|null}
 */
export function takeToken(script) {
  if (!script || typeof script.getAttribute !== "function") return null
  const token = script.getAttribute(TOKEN_ATTRIBUTE)
  if (token === null) return null
  script.removeAttribute(TOKEN_ATTRIBUTE)
  return validToken(token) ? token : null
}

/**
 * tokenSocketClass(g.WebSocket, token), made at the first dial (the uplink comes with the rest of the agent), not
 * when the agent's tag runs: reading `g.WebSocket` makes the engine build the WebSocket interface, heap a page
 * that never opens a socket before its load event would not pay. A page with no WebSocket: the dial throws.
 * @param {any} g
 * @param {() => string|null} token
 */
export function lazyTokenSocket(g, token) {
  let made = null
  return function TokenSocket(url) {
    made ||= tokenSocketClass(g.WebSocket, token)
    if (!made) throw new Error("this page has no WebSocket")
    return new made(url)
  }
}

/**
 * A WebSocket class that offers the token as a subprotocol. `token()` is read at each dial: until it gives one
 * (an import() whose start(token) has not run yet) the dial fails and the uplink tries again after its backoff.
 * @param {any} WS  the page's WebSocket
 * @param {() => string|null} token
 */
function tokenSocketClass(WS, token) {
  if (typeof WS !== "function") return null
  return class TokenSocket extends WS {
    /** @param {string} url */
    constructor(url) {
      const t = token()
      if (!validToken(t)) {
        const e = new Error("the relay token has not been handed over yet")
        e.name = "awaiting token"
        throw e
      }
      super(url, [SUBPROTOCOL, TOKEN_PROTOCOL_PREFIX + t])
    }
  }
}
