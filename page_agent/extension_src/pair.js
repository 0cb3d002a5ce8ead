// The pairing page: opened once from the link `wmcp-top extension` prints,
// chrome-extension://ID/pair.html#relay=ws%3A%2F%2F127.0.0.1%3APORT%2Frelay&t=TOKEN. The fragment never
// leaves the browser; it is handed to the service worker (which validates and stores it) and then wiped
// from the address bar.
const out = document.getElementById("out")
const fragment = location.hash
history.replaceState(null, "", location.pathname)
chrome.runtime.sendMessage({ q: "pair", fragment }).then(
  (r) => {
    if (r && r.ok) {
      out.className = "ok"
      out.textContent = `Paired with the relay at ${new URL(r.relay).host}. Pages you open from now on are watched; reload the ones already open. You can close this tab.`
      document.documentElement.dataset.paired = "1"
    } else {
      out.className = "bad"
      out.textContent = "This pairing link is not valid. Run `wmcp-top extension` and open the link it prints."
      document.documentElement.dataset.paired = "0"
    }
  },
  () => {
    out.className = "bad"
    out.textContent = "The extension did not answer; reload it in chrome://extensions and open the link again."
    document.documentElement.dataset.paired = "0"
  },
)
