// How the relay's token reaches the agent and goes back to the relay, never in a URL (docs/security.md, "The
// token"). A script URL appears in every stack through the wrapper, in resource timing and in error reports, and
// Chromium's console line for a failed WebSocket names its URL. So the relay's script tag carries the token in a
// data- attribute the agent reads once and empties, and the import() line hands it to start(); the agent offers
// it to the relay as a WebSocket subprotocol (transport/token_socket.js), which no console line or performance
// entry shows.

import { safely } from "./util.js"

/** The tag's attribute (`<script src="…/agent.js?v=HASH" data-wmcp="…">`). */
const TOKEN_ATTRIBUTE = "data-wmcp"

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
 * The running tag's token and `src` (as written), the token emptied from the attribute so nothing that reads the
 * DOM later finds it; null when no tag holds one (a module, an init script, a tag without the attribute).
 * Read with no element in JavaScript's hands: the first element a page's script holds makes the engine build the
 * HTMLElement and Element interfaces, 77 KB of heap on a page that holds none yet, where an XPath result and an
 * attribute node cost 4 KB (Chromium 156). The tag running now is the last element whose attribute still holds a
 * value (in any namespace: XHTML too): the parser has reached no later tag, and an agent that ran before emptied
 * its own. `src` is as written and `base` the document's base URL then: a relative `src` is resolved when the rest
 * is fetched, after the load event (a URL object at load builds the URL interface: 3 KB of the page's heap).
 * @param {any} doc
 * @returns {{token: string|null, src: string, base: string}|null}
 */
export function takeTagToken(doc) {
  return safely(() => {
    // 9: FIRST_ORDERED_NODE_TYPE, 2: STRING_TYPE (numbers: the XPathResult interface is not read at load)
    const attr = doc.evaluate(`(//*[@${TOKEN_ATTRIBUTE}!=""])[last()]/@${TOKEN_ATTRIBUTE}`, doc, null, 9, null).singleNodeValue
    if (!attr) return null
    const token = attr.value
    attr.value = ""
    const src = doc.evaluate("string(../@src)", attr, null, 2, null).stringValue
    return { token: validToken(token) ? token : null, src, base: doc.baseURI }
  }, null)
}
