// page/options.js alone: the page's options clamped, the uplink's address, the context kind, server-side rendering.
import { test } from "node:test"
import assert from "node:assert/strict"
import { normalise, resolveUplink, contextOf, serverSide } from "../src/page/options.js"
import { DEFAULTS } from "../src/shared/config.js"
import { FLUSH_MS } from "../src/transport/pacing.js"

test("normalise: every option clamped, junk gets the default", () => {
  const good = normalise({ buffer: 20, sample: 0.5, errorPolicy: "name", pollMs: 10, flushMs: 0, capturePayloads: true, maxPayloadLength: 100, fingerprintHandler: true })
  assert.deepEqual([good.buffer, good.sample, good.errorPolicy, good.pollMs, good.flushMs, good.capturePayloads, good.maxPayloadLength, good.fingerprintHandler], [20, 0.5, "name", 10, 0, true, 100, true])
  const big = normalise({ buffer: 1e9, sample: 5, flushMs: 1000, maxPayloadLength: 1e9 })
  assert.deepEqual([big.buffer, big.sample, big.flushMs, big.maxPayloadLength], [100000, 1, 250, 65536])
  const junk = normalise({ buffer: 0, sample: NaN, errorPolicy: "stack", pollMs: -1, flushMs: "x", capturePayloads: "yes", maxPayloadLength: 1.5, fingerprintHandler: 1 })
  assert.deepEqual(
    [junk.buffer, junk.sample, junk.errorPolicy, junk.pollMs, junk.flushMs, junk.capturePayloads, junk.maxPayloadLength, junk.fingerprintHandler],
    [DEFAULTS.buffer, 1, "message", 250, FLUSH_MS, false, DEFAULTS.maxPayloadLength, false],
  )
  assert.equal(normalise({ sample: -1 }).sample, 0, "000's clamp: -1 measures none")
})

test("resolveUplink: the option, else the page's global; false or a non-WebSocket URL: none", () => {
  assert.deepEqual(resolveUplink({ uplink: "ws://127.0.0.1:7420/relay?t=x" }, {}), { url: "ws://127.0.0.1:7420/relay?t=x", protocol: "wmcp-relay/1" })
  assert.deepEqual(resolveUplink({ uplink: { url: "wss://h/relay" } }, {}), { url: "wss://h/relay", protocol: "wmcp-relay/1" })
  assert.equal(resolveUplink({ uplink: false }, { __WMCP_UPLINK__: "ws://g/relay" }), null)
  assert.equal(resolveUplink({ uplink: "http://h/relay" }, {}), null)
  assert.equal(resolveUplink({}, { __WMCP_UPLINK__: "ws://g/relay" }).url, "ws://g/relay")
  assert.equal(resolveUplink({}, {}), null)
})

test("contextOf and serverSide: top, iframe, worker; no window, no document and no worker is SSR", () => {
  const top = {}
  top.top = top
  assert.equal(contextOf(top), "top")
  assert.equal(contextOf({ top: {} }), "iframe")
  const guarded = {}
  Object.defineProperty(guarded, "top", { get: () => { throw new Error("cross-origin") } })
  assert.equal(contextOf(guarded), "iframe", "a parent we may not read is another frame's")
  class WorkerGlobalScope {}
  const worker = Object.assign(new WorkerGlobalScope(), { WorkerGlobalScope })
  assert.equal(contextOf(worker), "worker")
  assert.equal(serverSide({}), true)
  assert.equal(serverSide({ document: {} }), false)
  assert.equal(serverSide(worker), false)
})
