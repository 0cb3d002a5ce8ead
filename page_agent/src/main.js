// Entry of the classic script (dist/agent.js): run the gate on load, expose window.__webmcpPerf, and, as
// webmcp-profiler's script tag does, window.WebMCPProfiler (its entry points) unless the page already has one.
import { maybeAttach, attach, profilerTool, detach, VERSION } from "./index.js"
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
    // The relay's script tag and `wmcp-top open`: a terminal route, the channel read but not posted to per span.
    maybeAttach(terminalRoute(typeof window.__WMCP_CONFIG__ === "object" && window.__WMCP_CONFIG__ ? window.__WMCP_CONFIG__ : {}))
  }
} catch {
  /* never throw into the page */
}
