// What the document does around the agent: visibility and history navigations go on the timeline; pagehide
// and a bfcache restore are handed to the agent (`leaving`, `restored`). Returns the listeners' removers.

import { safely } from "../shared/util.js"

/**
 * @param {any} g  the global the agent runs in
 * @param {{event: (kind: string, detail: object) => void}} c  the collector
 * @param {{leaving: (persisted: boolean) => void, restored: () => void}} o
 * @returns {(() => void)[]}
 */
export function watchPage(g, c, { leaving, restored }) {
  const offs = []
  const on = (target, type, fn) => {
    if (!target || typeof target.addEventListener !== "function") return
    safely(() => {
      target.addEventListener(type, fn)
      offs.push(() => target.removeEventListener(type, fn))
    })
  }
  const doc = safely(() => g.document, null)
  on(doc, "visibilitychange", () => safely(() => c.event("visibility", { state: String(doc.visibilityState) })))
  on(g, "pagehide", (e) => safely(() => leaving(!!(e && e.persisted))))
  on(g, "pageshow", (e) =>
    safely(() => {
      if (!e || !e.persisted) return
      restored()
      c.event("navigation", { kind: "bfcache-restore" })
    }),
  )
  on(g, "popstate", () => safely(() => c.event("navigation", { kind: "popstate" })))
  on(g, "hashchange", () => safely(() => c.event("navigation", { kind: "hashchange" })))
  return offs
}
