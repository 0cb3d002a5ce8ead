// Entry of the extension's isolated-world script (extension/bridge.js), injected at document_start in every
// frame just before the main-world agent. It takes the agent's one handshake message (a window message from
// this same window carrying a MessagePort), hides it from the page's own listeners, and carries frames
// between that MessagePort and a chrome.runtime port to the service worker. It holds no address, no token
// and no state: the page world can reach the relay only through it, and only as one more page agent would.
import { BRIDGE_KEY, PIPE_PORT_NAME } from "../transport/port.js"


const MAX_FRAME_CHARS = 1 << 20
const MAX_PORTS = 16 // per frame: a page that opens more gets no more
let ports = 0

function bridge(mp) {
  let port
  try {
    port = chrome.runtime.connect({ name: PIPE_PORT_NAME })
  } catch {
    // The extension was reloaded or removed: this frame's script is orphaned.
    mp.postMessage({ t: "close" })
    return mp.close()
  }
  ports++
  let done = false
  const end = () => {
    if (done) return
    done = true
    ports--
    try {
      mp.postMessage({ t: "close" })
    } catch {
      /* closed */
    }
    mp.onmessage = null
    mp.close()
  }
  port.onMessage.addListener((m) => {
    if (done || !m || typeof m !== "object") return
    if (m.t === "open" || m.t === "detach" || (m.t === "msg" && typeof m.d === "string")) mp.postMessage(m.t === "msg" ? { t: "msg", d: m.d } : { t: m.t })
  })
  port.onDisconnect.addListener(end)
  mp.onmessage = (e) => {
    const m = e.data
    if (done || !m || typeof m !== "object") return
    if (m.t === "send" && typeof m.d === "string" && m.d.length <= MAX_FRAME_CHARS) port.postMessage({ t: "send", d: m.d })
    else if (m.t === "ping") port.postMessage({ t: "ping" })
    else if (m.t === "close") {
      try {
        port.disconnect()
      } catch {
        /* gone */
      }
      end()
    }
  }
  mp.postMessage({ t: "bridged" })
}

addEventListener(
  "message",
  (e) => {
    const d = e.data
    if (e.source !== window || !d || typeof d !== "object" || d[BRIDGE_KEY] !== "connect") return
    e.stopImmediatePropagation()
    const mp = e.ports && e.ports[0]
    if (!mp) return
    if (ports >= MAX_PORTS) return mp.close()
    bridge(mp)
  },
  true,
)
