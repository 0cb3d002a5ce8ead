// page/page_events.js alone: what the document does, on the timeline or handed to the agent, and removed at detach.
import { test } from "node:test"
import assert from "node:assert/strict"
import { watchPage } from "../src/page/page_events.js"

function rig() {
  const g = new EventTarget()
  g.document = Object.assign(new EventTarget(), { visibilityState: "hidden" })
  const said = []
  const c = { event: (kind, detail) => said.push([kind, detail]) }
  const offs = watchPage(g, c, { leaving: (persisted) => said.push(["leaving", persisted]), restored: () => said.push(["restored"]) })
  return { g, said, offs }
}

const ev = (type, extra = {}) => Object.assign(new Event(type), extra)

test("visibility and history on the timeline; pagehide and a bfcache restore handed over", () => {
  const { g, said } = rig()
  g.document.dispatchEvent(ev("visibilitychange"))
  g.dispatchEvent(ev("popstate"))
  g.dispatchEvent(ev("hashchange"))
  g.dispatchEvent(ev("pagehide", { persisted: true }))
  g.dispatchEvent(ev("pageshow", { persisted: false }))
  g.dispatchEvent(ev("pageshow", { persisted: true }))
  assert.deepEqual(said, [
    ["visibility", { state: "hidden" }],
    ["navigation", { kind: "popstate" }],
    ["navigation", { kind: "hashchange" }],
    ["leaving", true],
    ["restored"],
    ["navigation", { kind: "bfcache-restore" }],
  ])
})

test("removed: nothing more is heard; a global without events is no error", () => {
  const { g, said, offs } = rig()
  assert.equal(offs.length, 5)
  for (const off of offs) off()
  g.dispatchEvent(ev("pagehide"))
  g.document.dispatchEvent(ev("visibilitychange"))
  assert.deepEqual(said, [])
  assert.deepEqual(watchPage({}, { event() {} }, { leaving() {}, restored() {} }), [])
})
