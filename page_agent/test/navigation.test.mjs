// page/navigation.js alone: the note a form call leaving the document writes, and the next document's link.
import { test } from "node:test"
import assert from "node:assert/strict"
import { leaveNote, linkNavigation } from "../src/page/navigation.js"

function tab() {
  const store = new Map()
  const events = []
  const g = { sessionStorage: { getItem: (k) => (store.has(k) ? store.get(k) : null), setItem: (k, v) => store.set(k, String(v)), removeItem: (k) => store.delete(k) } }
  return { g, store, events, collector: { event: (kind, detail) => events.push([kind, detail]) } }
}

test("a note left by the leaving document links the next one, with the session's secret, once", () => {
  const t = tab()
  leaveNote(t.g, "abcdef01", { seq: 3, tool: "search" }, { secretOf: (id) => (id === "abcdef01" ? "a".repeat(32) : null) })
  const note = JSON.parse([...t.store.values()][0])
  assert.deepEqual(Object.keys(note).sort(), ["at", "resume", "seq", "session", "tool"], "names and numbers only")
  linkNavigation(t.g, t.collector)
  assert.deepEqual(t.events, [["navigated-from", { session: "abcdef01", seq: 3, tool: "search", resume: "a".repeat(32) }]])
  linkNavigation(t.g, t.collector)
  assert.equal(t.events.length, 1, "the note is read once")
})

test("no uplink: no secret; a stale, malformed or foreign-looking note links nothing", () => {
  const t = tab()
  leaveNote(t.g, "abcdef01", { seq: 0, tool: "t" }, null)
  linkNavigation(t.g, t.collector)
  assert.equal("resume" in t.events[0][1], false)
  for (const note of [
    { session: "abcdef01", seq: 1, tool: "t", at: Date.now() - 61_000 },
    { session: "ABCDEF01", seq: 1, tool: "t", at: Date.now() },
    { session: "abcdef01", seq: -1, tool: "t", at: Date.now() },
    "not json",
  ]) {
    t.store.set("wmcp-top:navigated", typeof note === "string" ? note : JSON.stringify(note))
    linkNavigation(t.g, t.collector)
  }
  assert.equal(t.events.length, 1)
  t.store.set("wmcp-top:navigated", JSON.stringify({ session: "abcdef01", seq: 2, tool: "t", at: Date.now(), resume: "not-a-secret" }))
  linkNavigation(t.g, t.collector)
  assert.equal("resume" in t.events[1][1], false, "a malformed secret is not passed on")
})
