// Entry of the classic script (dist/agent.js): run the gate on load and expose window.__webmcpPerf.
import { maybeAttach } from "./index.js"

try {
  if (typeof window !== "undefined") maybeAttach(typeof window.__WMCP_CONFIG__ === "object" && window.__WMCP_CONFIG__ ? window.__WMCP_CONFIG__ : {})
} catch {
  /* never throw into the page */
}
