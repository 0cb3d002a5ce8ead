// Entry of the extension's main-world script (extension/agent.js): injected by the browser at document_start in
// every frame, before any page script, through any Content-Security-Policy. Only the eager part (eager.js): the
// rest is the extension's second main-world script (extension/rest.js, at document_idle), which hands itself over.
// The agent is the same as the script tag's; only its socket differs (port.js: frames go to the extension's
// service worker, which holds the relay connection). The page's own __WMCP_CONFIG__ is not read: the page does not
// configure the user's extension.
import { maybeAttach, restFrom } from "./eager.js"
import { portSocketClass, EXTENSION_RELAY_URL } from "../transport/port.js"
import { EXTENSION_AGENT } from "../shared/config.js"
import { terminalRoute } from "./route.js"

try {
  if (typeof window !== "undefined" && typeof window.MessageChannel === "function") {
    let api = null
    const PortSocket = portSocketClass(window, { onDetach: () => api && api.detach && api.detach() })
    restFrom(window, { handoff: true })
    api = maybeAttach(terminalRoute({ uplink: EXTENSION_RELAY_URL, WebSocket: PortSocket, defaultOn: true, agent: EXTENSION_AGENT, announce: false }))
  }
} catch {
  /* never throw into the page */
}
