// Entry of the extension's service worker (extension/sw.js): chrome.* wiring around PipeHub (pipes.js).
// Settings live in chrome.storage.local under "pairing" ({relay, token}, written by the pairing page) and
// "off" (hosts the user switched off in the popup). Content scripts can read storage.local, but only the
// isolated world has chrome.* at all; the page's main world never sees the token.
import { PipeHub, PIPE_PORT_NAME, badgeFor, pairingFrom, validRelay, validToken, agentScript } from "./pipes.js"

const BADGE_EVERY_MS = 200

const badgeTimers = new Map()
function paintBadge(tabId) {
  if (badgeTimers.has(tabId)) return
  badgeTimers.set(
    tabId,
    setTimeout(() => {
      badgeTimers.delete(tabId)
      const b = badgeFor(hub.view(tabId))
      chrome.action.setBadgeText({ tabId, text: b.text }).catch(() => {})
      chrome.action.setBadgeBackgroundColor({ tabId, color: b.color }).catch(() => {})
      chrome.action.setTitle({ tabId, title: b.title }).catch(() => {})
    }, BADGE_EVERY_MS),
  )
}

const hub = new PipeHub({ WebSocket, onTab: (tabId) => tabId >= 0 && paintBadge(tabId) })

/**
 * The main-world agent is registered here, not in the manifest, so that the sites switched off in the popup
 * are excluded from injection (excludeMatches); the isolated bridge stays in the manifest. Two scripts: the
 * eager part at document_start and the rest at document_idle (page/eager.js). Registered scripts persist across
 * browser restarts; this runs on every worker start to match the stored list.
 */
async function syncAgentScript(off) {
  for (const part of /** @type {const} */ (["agent", "rest"])) {
    const script = agentScript(off, part)
    const [current] = await chrome.scripting.getRegisteredContentScripts({ ids: [script.id] })
    if (!current) await chrome.scripting.registerContentScripts([script])
    // A worker wakes often (every reconnect): touch the registration only when the switched-off list changed.
    else if (JSON.stringify(current.excludeMatches || []) !== JSON.stringify(script.excludeMatches)) await chrome.scripting.updateContentScripts([script])
  }
}

let scriptReady = Promise.resolve()

async function load() {
  const got = await chrome.storage.local.get(["pairing", "off"])
  const p = got.pairing && typeof got.pairing === "object" ? got.pairing : {}
  const off = Array.isArray(got.off) ? got.off.filter((h) => typeof h === "string") : []
  scriptReady = syncAgentScript(off).catch(() => {})
  hub.configure({ relay: validRelay(p.relay) ? p.relay : null, token: validToken(p.token) ? p.token : null, off })
  await scriptReady
}

chrome.runtime.onConnect.addListener((port) => {
  const s = port.sender
  if (port.name !== PIPE_PORT_NAME || !s || !s.tab || typeof s.tab.id !== "number") return port.disconnect()
  // Origin and frame from the browser (port.sender), never from what the page's frames say.
  hub.connect(port, { tabId: s.tab.id, frameId: s.frameId || 0, url: s.url || "", origin: typeof s.origin === "string" ? s.origin : undefined })
})

chrome.storage.onChanged.addListener((changes, area) => {
  if (area === "local" && (changes.pairing || changes.off)) load()
})

// The popup and the pairing page ask here: extension pages only, never a content script (whose sender.url is
// the page's).
const OWN = `chrome-extension://${chrome.runtime.id}/`
chrome.runtime.onMessage.addListener((msg, sender, reply) => {
  if (sender.id !== chrome.runtime.id || typeof sender.url !== "string" || !sender.url.startsWith(OWN) || !msg || typeof msg !== "object") return false
  if (msg.q === "tab" && typeof msg.tabId === "number") {
    reply(hub.view(msg.tabId))
  } else if (msg.q === "pair" && typeof msg.fragment === "string") {
    const p = pairingFrom(msg.fragment)
    if (!p) reply({ ok: false })
    // Answered once the agent's registration is in place: a page opened after pairing is watched.
    else chrome.storage.local.set({ pairing: p }).then(() => scriptReady).then(() => reply({ ok: true, relay: p.relay }))
    return true
  }
  return false
})

load()
