// Entry of the classic script (dist/agent.js): run the gate on load, expose window.__webmcpPerf, and, as
// webmcp-profiler's script tag does, window.WebMCPProfiler (its entry points) unless the page already has one.
import { maybeAttach, attach, profilerTool, detach, watchLateConfig, VERSION } from "./index.js"
import { terminalRoute } from "./channel.js"

try {
  if (typeof window !== "undefined") {
    if (!("WebMCPProfiler" in window)) {
      Object.defineProperty(window, "WebMCPProfiler", {
        value: Object.freeze({ attachProfiler: attach, maybeAttachProfiler: maybeAttach, profilerTool, detach, version: VERSION }),
        configurable: true,
        writable: true,
      })
    }
    const cfg = window.__WMCP_CONFIG__
    const given = typeof cfg === "object" && cfg !== null
    // The relay's script tag and `wmcp-top open`: a terminal route, the channel read but not posted to per span.
    const api = maybeAttach(terminalRoute(given ? cfg : {}))
    if (!given && cfg === undefined) watchLateConfig(window, api)
  }
} catch {
  /* never throw into the page */
}
