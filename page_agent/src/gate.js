// The ?perf= gate. `?perf=1` / `?perf=0` (and `?perf=overlay`, read as 1) are persisted per origin in
// localStorage under `webmcp-perf:mode`. allow() has the last word: false keeps the agent off and clears
// a persisted mode. With no query and nothing persisted, `defaultOn` decides: true when the script came
// from the relay (the user pasted the tag on purpose), false otherwise.

import { safely } from "./util.js"

/** The first value of `name` in a query string ("?a=1&perf=0"), or null. No URL API needed. */
export function queryParam(search, name) {
  const s = String(search || "").replace(/^\?/, "")
  for (const part of s.split("&")) {
    const i = part.indexOf("=")
    const key = safely(() => decodeURIComponent((i < 0 ? part : part.slice(0, i)).replace(/\+/g, " ")), null)
    if (key === name) return safely(() => decodeURIComponent((i < 0 ? "" : part.slice(i + 1)).replace(/\+/g, " ")), "")
  }
  return null
}

/**
 * @param {object} o
 * @param {string} [o.search]  location.search
 * @param {Storage|null} [o.storage]  localStorage (null when unavailable)
 * @param {string} [o.param]
 * @param {string} [o.storageKey]
 * @param {() => boolean} [o.allow]
 * @param {boolean} [o.defaultOn]
 * @returns {{on:boolean, mode:"1"|"0"|null, reason:string}}
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
    return { on: false, mode: null, reason: "allow() said no" }
  }
  let q = queryParam(search, param)
  if (q === "overlay") q = "1"
  if (q === "1" || q === "0") {
    if (storage) safely(() => storage.setItem(storageKey, q))
    return { on: q === "1", mode: q, reason: `?${param}=${q}` }
  }
  let mode = null
  if (storage) safely(() => {
    const v = storage.getItem(storageKey)
    mode = v === "1" || v === "0" ? v : null
  })
  if (mode === "1") return { on: true, mode, reason: "persisted on" }
  if (mode === "0") return { on: false, mode, reason: "persisted off" }
  return { on: !!defaultOn, mode: null, reason: defaultOn ? "default on (loaded from the relay)" : "default off" }
}
