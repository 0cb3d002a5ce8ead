// page/inert.js alone: the agent measuring nothing (server-side rendering's no-op, a closed ?perf= gate).
import { test } from "node:test"
import assert from "node:assert/strict"
import { noop, inert } from "../src/page/inert.js"

test("the server-side no-op: frozen, inactive, every console member there and harmless", async () => {
  const api = noop({ globalName: "__webmcpPerf" })
  assert.equal(Object.isFrozen(api), true)
  assert.deepEqual([api.active, api.sessionId], [false, "00000000"])
  assert.deepEqual(api.spans(), [])
  assert.equal(api.status().phase, "inactive")
  assert.match(api.summary(), /Server-side no-op/)
  assert.equal(api.ledger().totals.calls, 0)
  assert.equal(api.report().format, "webmcp-perf-report/2")
  assert.equal(typeof api.onSpan(() => {}), "function", "onSpan still returns an unsubscribe")
  assert.equal(api.detach(), false)
  assert.equal(await api.help(), undefined)
})

test("the closed gate's object: inactive, its status says why, and a note adds a hint", () => {
  const { api, note } = inert({ global: { console: { info() {} } } }, { reason: "?perf=0" })
  assert.equal(api.active, false)
  assert.equal(api.status().reason, "?perf=0")
  const before = api.status().hints.length
  note("a late window.__WMCP_CONFIG__ was ignored")
  assert.equal(api.status().hints.length, before + 1)
  assert.ok(api.status().hints.includes("a late window.__WMCP_CONFIG__ was ignored"))
})
