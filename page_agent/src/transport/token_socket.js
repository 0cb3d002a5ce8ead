// The relay's token goes back to the relay as a WebSocket subprotocol, never in the socket's URL (shared/token.js
// says why): the socket class the uplink dials with when the agent's route handed it a token. Part of the rest of
// the agent, made when the uplink is: reading `g.WebSocket` makes the engine build the WebSocket interface.

import { validToken } from "../shared/token.js"

/** The subprotocol the relay selects; the token rides beside it as `wmcp-top.token.<token>`, never selected. */
const SUBPROTOCOL = "wmcp-top"
const TOKEN_PROTOCOL_PREFIX = "wmcp-top.token."

/**
 * A WebSocket class that offers the token as a subprotocol; null where the page has no WebSocket. `token()` is
 * read at each dial: until it gives one (an import() whose start(token) has not run yet) the dial fails and the
 * uplink tries again after its backoff.
 * @param {any} WS  the page's WebSocket
 * @param {() => string|null} token
 */
export function tokenSocketClass(WS, token) {
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
