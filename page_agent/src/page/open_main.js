// Entry of the `open` lane's agent (dist/open.js): injected by `wmcp-top open` before any page script, with no
// address and no token in it; its socket is a Playwright binding whose other end (Python) holds both
// (binding.js). The eager part runs at load; the rest is compiled into the same file and composed off the
// critical path (eager.js). The agent is otherwise the script tag's, reading the page's __WMCP_CONFIG__ as that
// one does.
import { maybeAttach } from "./eager.js"
import { bindingSocketClass, OPEN_RELAY_URL } from "../transport/binding.js"

try {
  if (typeof window !== "undefined") {
    const BindingSocket = bindingSocketClass(window)
    const page = typeof window.__WMCP_CONFIG__ === "object" && window.__WMCP_CONFIG__ ? window.__WMCP_CONFIG__ : {}
    if (BindingSocket) maybeAttach({ ...page, uplink: OPEN_RELAY_URL, WebSocket: BindingSocket, defaultOn: true })
  }
} catch {
  /* never throw into the page */
}
