// The script tag's route to the rest of the agent: a script beside the agent's own URL (the relay's
// /agent-rest.js, pinned by its content hash), inserted when the eager part wants it (eager.js `need`). Only that
// route carries this module: the extension's rest is handed over by a content script of its own, and dist/agent.js
// and open.js compile the rest in.

import { BAKED_UPLINK } from "../shared/config.js"
import { safely, read } from "../shared/util.js"

/** The content hash of this build's rest script (its `?v=`; the build fills it). */
const REST_HASH = /*@WMCP_REST_HASH@*/ ""
/** The relay's path of the rest script, beside its /agent.js. */
const REST_PATH = "agent-rest.js"

/**
 * How to fetch the rest, from where this agent came: `script`, its own element (whose URL names the rest's), or
 * `src`, that URL as its tag wrote it, relative to `base` (the document's base URL at load); with neither (an init
 * script of the relay's /agent.js), beside the relay's address baked in. Null when there is no such URL. The URL is
 * resolved when the rest is fetched, after the load event: a URL object at load builds the URL interface, 3 KB of
 * the page's heap (string methods here, not a regular expression, for the same reason).
 * @param {any} g
 * @param {{script?: any, src?: string, base?: string}} o
 * @returns {(() => any) | null} inserts the rest's script element and returns it (null if it could not)
 */
export function restLoader(g, { script = null, src: written = "", base } = {}) {
  const baked = typeof BAKED_UPLINK === "string" ? (BAKED_UPLINK.startsWith("ws") ? `http${BAKED_UPLINK.slice(2)}` : BAKED_UPLINK) : ""
  const own = written || read(script, "src", "")
  const src = (typeof own === "string" && own) || baked
  if (!src) return null
  return () => {
    const url = safely(() => new URL(`${REST_PATH}?v=${REST_HASH}`, new URL(src, base)).href, null)
    const doc = safely(() => g.document, null)
    return url
      ? safely(() => {
          const s = doc.createElement("script")
          s.src = url
          s.async = true
          s.onerror = () => safely(() => g.console.warn(`[wmcp-top] could not load ${url}: nothing measured`))
          ;(doc.head || doc.documentElement).appendChild(s)
          s.remove()
          return s
        }, null)
      : null
  }
}
