// Calls that navigate: a form call whose submission leaves the document leaves a note in sessionStorage (names
// and numbers only), so the next document of this tab links its session to that call.

import { cap, safely } from "../shared/util.js"

const NAV_KEY = "wmcp-top:navigated" // sessionStorage: the form call whose submission left the last document
const NAV_NOTE_MS = 60_000

/**
 * The note a leaving form call writes for the next document of this tab.
 * @param {any} g
 * @param {string} session
 * @param {{seq: number, tool: string}} call
 * @param {{secretOf: (id: string) => string|null}|null} uplink
 */
export function leaveNote(g, session, call, uplink) {
  const note = { session, seq: call.seq, tool: cap(call.tool, 128), at: Date.now() }
  // The relay links the next document to this session only with this session's secret: sessionStorage is
  // this tab's and this origin's, so no other tab or site can write into this session's timeline.
  const secret = uplink ? safely(() => uplink.secretOf(note.session), null) : null
  if (secret) note.resume = secret
  safely(() => g.sessionStorage.setItem(NAV_KEY, JSON.stringify(note)))
}

/**
 * The previous document of this tab left through a form call: say so in this session's timeline.
 * @param {any} g
 * @param {{event: (kind: string, detail: object) => void}} collector
 */
export function linkNavigation(g, collector) {
  const text = safely(() => g.sessionStorage.getItem(NAV_KEY), null)
  if (typeof text !== "string") return
  safely(() => g.sessionStorage.removeItem(NAV_KEY))
  const note = safely(() => JSON.parse(text), null)
  if (!note || typeof note !== "object" || !/^[0-9a-f]{8}$/.test(String(note.session)) || !Number.isInteger(note.seq) || note.seq < 0) return
  if (!(Date.now() - Number(note.at) < NAV_NOTE_MS)) return // a stale note from long ago says nothing
  const detail = { session: note.session, seq: note.seq, tool: cap(String(note.tool || ""), 128) }
  if (typeof note.resume === "string" && /^[0-9a-f]{32}$/.test(note.resume)) detail.resume = note.resume
  collector.event("navigated-from", detail)
}
