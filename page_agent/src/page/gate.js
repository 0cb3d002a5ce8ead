// The ?perf= gate, with webmcp-profiler's values: `1|on|true` and `overlay` are remembered per origin in
// localStorage under `webmcp-perf:mode`, `0|off|false` switch off and forget. allow() has the last word: false
// keeps the agent off and clears a remembered mode. With no query and nothing remembered, `defaultOn`
// decides: true when the script came from the relay (the user pasted the tag on purpose), false otherwise.

import { safely, read } from "../shared/util.js"

/**
 * The first value of `name` in a query string ("?a=1&perf=0"), or null. No URL API and no regular expression: it
 * runs in every page at load, where either costs the main thread more than the whole reading.
 */
export function queryParam(search, name) {
  let s = String(search || "")
  if (s.startsWith("?")) s = s.slice(1)
  const decode = (text) => decodeURIComponent(text.replaceAll("+", " "))
  for (const part of s.split("&")) {
    const i = part.indexOf("=")
    const key = safely((() => decode(i < 0 ? part : part.slice(0, i))), null)
    if (key === name) return safely(() => decode(i < 0 ? "" : part.slice(i + 1)), "")
  }
  return null
}

/**
 * The page's `location.search`, read from `document.URL` (a string the document already holds) and not through
 * `location`: reading Location in a page that never touched it builds that interface, about 3.5 KB of its heap at
 * load.
 */
export function searchOf(g) {
  const url = String(read(read(g, "document"), "URL", "")).split("#")[0]
  const q = url.indexOf("?")
  return q < 0 ? "" : url.slice(q)
}

const ON = ["1", "on", "true"]
const OFF = ["0", "off", "false"]

/**
 * webmcp-profiler's gate values. `1|on|true` switch on and remember "1"; `overlay` switches on and remembers
 * "overlay"; `0|off|false` switch off for this load and forget the remembered mode (so a page served by the
 * relay is off now, whatever the default); anything else is `rejected` (the caller warns) and changes nothing.
 * @param {object} o
 * @param {string} [o.search]  location.search
 * @param {Storage|null} [o.storage]  localStorage (null when unavailable)
 * @param {string} [o.param]
 * @param {string} [o.storageKey]
 * @param {() => boolean} [o.allow]
 * @param {boolean} [o.defaultOn]
 * @returns {{on:boolean, mode:"1"|"overlay"|null, rejected:string|null, reason:string}}
 */
export function gate({ search = "", storage = null, param = "perf", storageKey = "webmcp-perf:mode", allow, defaultOn = false } = {}) {
  let allowed = true
  if (typeof allow === "function") {
    try {
      allowed = allow() !== false
    } catch {
      allowed = false
    }
  }
  if (!allowed) {
    if (storage) safely(() => storage.removeItem(storageKey))
    return { on: false, mode: null, rejected: null, reason: "allow() said no" }
  }
  const q = queryParam(search, param)
  let rejected = null
  if (q !== null && q !== "") {
    if (OFF.includes(q)) {
      if (storage) safely(() => storage.removeItem(storageKey))
      return { on: false, mode: null, rejected: null, reason: `?${param}=${q}` }
    }
    // The URL wins for this load even where storage is blocked; storage only carries the mode to the next one.
    const mode = ON.includes(q) ? "1" : q === "overlay" ? "overlay" : null
    if (mode) {
      if (storage) safely(() => storage.setItem(storageKey, mode))
      return { on: true, mode, rejected: null, reason: `?${param}=${q}` }
    }
    rejected = q
  }
  let stored = null
  if (storage) safely(() => {
    const v = storage.getItem(storageKey)
    stored = v === "1" || v === "overlay" ? v : null
  })
  if (stored) return { on: true, mode: stored, rejected, reason: `remembered ${stored}` }
  return { on: !!defaultOn, mode: null, rejected, reason: defaultOn ? "default on (loaded from the relay)" : "default off" }
}
