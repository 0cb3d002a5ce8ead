// Entry of the classic script: the relay's /agent.js (dist/agent-eager.js: the eager part, its rest fetched from
// /agent-rest.js beside it) and dist/agent.js (the same with the rest compiled in), which the relay also serves as
// the module /agent.mjs. Runs the gate on load, exposes window.__webmcpPerf, and, as webmcp-profiler's script tag
// does, window.WebMCPProfiler (its entry points) unless the page already has one. The relay's token comes from the
// tag's data- attribute, or, for the module, from start(token) (shared/token.js); it never is in a script's URL.
import { maybeAttach, attach, profilerTool, detach, watchLateConfig, restFrom, VERSION } from "./eager.js"
import { terminalRoute } from "./route.js"
import { BAKED_UPLINK } from "../shared/config.js"
import { takeTagToken, validToken } from "../shared/token.js"
import { restLoader } from "./rest_script.js"
import { read } from "../shared/util.js"

let token = null
let api = null

/**
 * The module's way to hand over the token (the `import()` line and the bookmarklet:
 * `import(".../agent.mjs?v=HASH").then((m) => m.start("TOKEN"))`). The agent attached on import; its uplink
 * dials the relay once the token is here. Returns the console API.
 * @param {string} given
 */
export function start(given) {
  if (token === null && validToken(given)) token = given
  return api
}

try {
  if (typeof window !== "undefined") {
    if (!("WebMCPProfiler" in window)) {
      Object.defineProperty(window, "WebMCPProfiler", {
        value: Object.freeze({ attachProfiler: attach, maybeAttachProfiler: maybeAttach, profilerTool, detach, version: VERSION }),
        configurable: true,
        writable: true,
      })
    }
    // The tag is read without its element (shared/token.js); the current script is asked for only when no tag
    // holds a token (a module or an init script has none; a tag without the attribute dials as baked).
    const tag = takeTagToken(document)
    const script = tag ? null : read(document, "currentScript")
    if (tag) token = tag.token
    restFrom(window, { load: restLoader(window, tag ? { src: tag.src, base: tag.base } : { script }) })
    const cfg = window.__WMCP_CONFIG__
    const given = typeof cfg === "object" && cfg !== null
    // The relay's own address (baked in when it served this file, no token in it) is dialled with the handed-over
    // token, or, for the module (no current script), once start(token) hands it over. An uplink the page names
    // itself, a tag with no token beside it, and an address a harness baked with its token dial as they are.
    const baked = typeof BAKED_UPLINK === "string" && !BAKED_UPLINK.includes("?t=") && !BAKED_UPLINK.includes("&t=")
    const own = baked && !(given && cfg.uplink !== undefined) && (token !== null || !(tag || script))
    // The relay's script tag and `wmcp-top open`: a terminal route, the channel read but not posted to per span.
    // Its uplink (with the rest) offers the token as it dials (transport/token_socket.js).
    const route = terminalRoute({ ...(given ? cfg : {}), ...(own ? { relayToken: () => token } : {}) })
    api = maybeAttach(route)
    if (!given && cfg === undefined) watchLateConfig(window, api)
  }
} catch {
  /* never throw into the page */
}
