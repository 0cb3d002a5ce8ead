// The toolbar popup: the relay's address and whether it is reached, this tab's sessions and phases, site
// access, and the switch that stops watching this site. All page-derived text goes in with textContent.
const $ = (id) => document.getElementById(id)

function say(id, text, cls = "") {
  $(id).textContent = text
  $(id).className = cls
}

/** The tab the popup describes: the active one, or `popup.html#tab=ID` when the popup is opened in a tab. */
async function currentTab() {
  const m = /^#tab=(\d+)$/.exec(location.hash)
  if (m) return chrome.tabs.get(Number(m[1]))
  const [tab] = await chrome.tabs.query({ active: true, currentWindow: true })
  return tab
}

async function main() {
  const tab = await currentTab()
  if (!tab) return
  const v = await chrome.runtime.sendMessage({ q: "tab", tabId: tab.id })
  let origin = ""
  let host = ""
  try {
    const u = new URL(tab.url || "")
    if (u.protocol === "http:" || u.protocol === "https:") {
      origin = u.origin
      host = u.hostname
    }
  } catch {
    /* no URL for this tab */
  }
  say("relay", v.relay ? new URL(v.relay).host : "not paired")
  if (!v.paired) say("advice", "Not paired: run `wmcp-top extension` in a terminal and open the link it prints, once.", "bad")
  else if (v.open) say("reached", "reached", "ok")
  else if (v.pipes) {
    say("reached", "not reached", "bad")
    say("advice", "Relay down: start `wmcp-top` (same port as when you paired), or pair again.", "bad")
  }
  say("calls", `${v.calls} call${v.calls === 1 ? "" : "s"} measured · ${v.sessions.length} session${v.sessions.length === 1 ? "" : "s"}`)
  for (const s of v.sessions) {
    const li = document.createElement("li")
    li.textContent = `${s.id} · ${s.phase}${s.frameId ? " · frame " + s.frameId : ""}`
    $("sessions").append(li)
  }
  if (!origin) {
    $("watch").disabled = true
    say("note", "Only http and https pages are watched.", "muted")
    return
  }
  say("site", host)
  const granted = await chrome.permissions.contains({ origins: [`${origin}/*`] })
  if (!granted) {
    say("access", "Site access not granted for this site (Chrome's site access is 'on click' or limited).", "bad")
    const b = document.createElement("button")
    b.textContent = "Allow on this site"
    b.onclick = async () => {
      if (await chrome.permissions.request({ origins: [`${origin}/*`] })) {
        say("access", "Allowed: reload the tab to watch it from its first script.", "ok")
        chrome.tabs.reload(tab.id)
      }
    }
    $("access").append(b)
  }
  const { off = [] } = await chrome.storage.local.get("off")
  $("watch").checked = !off.includes(host)
  $("watch").onchange = async () => {
    const cur = (await chrome.storage.local.get("off")).off || []
    const next = $("watch").checked ? cur.filter((h) => h !== host) : [...new Set([...cur, host])]
    await chrome.storage.local.set({ off: next })
    say("note", $("watch").checked ? "Watching again from the next load of this tab." : "Stopped: the agent detached from this site's pages and is not injected there any more; nothing is sent.", "muted")
    if ($("watch").checked) chrome.tabs.reload(tab.id)
  }
}

main().finally(() => (document.documentElement.dataset.ready = "1"))
