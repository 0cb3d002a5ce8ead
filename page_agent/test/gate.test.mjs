// The ?perf= gate: query, persistence, allow() with the last word, the relay default.
import { test } from "node:test"
import assert from "node:assert/strict"
import { gate, queryParam, searchOf } from "../src/page/gate.js"
import { maybeAttach } from "../src/page/index.js"
import { fakeWindow } from "../test-support/helpers.mjs"

function store(initial = {}) {
  const m = new Map(Object.entries(initial))
  return { m, getItem: (k) => (m.has(k) ? m.get(k) : null), setItem: (k, v) => m.set(k, String(v)), removeItem: (k) => m.delete(k) }
}
const KEY = "webmcp-perf:mode"

test("?perf=1 switches on and persists; ?perf=0 switches off and forgets (webmcp-profiler's meaning)", () => {
  const s = store()
  assert.deepEqual(gate({ search: "?perf=1", storage: s }).on, true)
  assert.equal(s.m.get(KEY), "1")
  assert.equal(gate({ search: "", storage: s }).on, true, "remembered across URL rewrites")
  assert.equal(gate({ search: "?a=b&perf=0", storage: s, defaultOn: true }).on, false, "off now, even served by the relay")
  assert.ok(!s.m.has(KEY), "off clears the stored mode")
  assert.equal(gate({ search: "", storage: s }).on, false)
  const o = gate({ search: "?perf=overlay", storage: s })
  assert.deepEqual([o.on, o.mode, s.m.get(KEY)], [true, "overlay", "overlay"])
})

test("defaults: on when loaded from the relay, off otherwise", () => {
  assert.equal(gate({ search: "", storage: store(), defaultOn: true }).on, true)
  assert.equal(gate({ search: "", storage: store(), defaultOn: false }).on, false)
  assert.equal(gate({ search: "?perf=banana", storage: store(), defaultOn: false }).on, false)
  assert.equal(gate({ search: "", storage: null, defaultOn: true }).on, true, "no storage (sandboxed frame) still works")
})

test("allow() has the last word and clears a persisted mode; a throwing allow() is a no", () => {
  const s = store({ [KEY]: "1" })
  assert.equal(gate({ search: "?perf=1", storage: s, allow: () => false, defaultOn: true }).on, false)
  assert.ok(!s.m.has(KEY))
  assert.equal(gate({ search: "", storage: store(), allow: () => { throw new Error("x") }, defaultOn: true }).on, false)
  assert.equal(gate({ search: "?perf=1", storage: store(), allow: () => true }).on, true)
})

test("custom param and storage key", () => {
  const s = store()
  assert.equal(gate({ search: "?prof=1", storage: s, param: "prof", storageKey: "k" }).on, true)
  assert.equal(s.m.get("k"), "1")
})

test("maybeAttach: closed gate leaves an inert global whose status() says how to switch on", () => {
  const g = fakeWindow({ search: "?perf=0" })
  const api = maybeAttach({ global: g, announce: false, uplink: false, BroadcastChannel: null })
  assert.equal(api.active, false)
  assert.equal(g.__webmcpPerf, api)
  assert.equal(api.status().phase, "inactive")
  assert.match(api.status().hints.join(" "), /perf=1/)
})

test("maybeAttach: ?perf=1 attaches", () => {
  const g = fakeWindow({ search: "?perf=1" })
  const api = maybeAttach({ global: g, announce: false, uplink: false, BroadcastChannel: null, setInterval: () => 1, clearInterval() {} })
  assert.equal(api.active, true)
  assert.equal(api.status().phase, "no-host")
  api.detach()
})

test("searchOf reads the query from document.URL, without its fragment, and never touches location", () => {
  const page = (URL) => ({
    document: { URL },
    get location() {
      throw new Error("location read: it builds the Location interface in a page that never touched it")
    },
  })
  assert.equal(searchOf(page("http://a.test/shop?perf=1&x=2#top")), "?perf=1&x=2")
  assert.equal(searchOf(page("http://a.test/shop#frag?perf=1")), "", "a ? in the fragment is no query")
  assert.equal(searchOf(page("http://a.test/shop?")), "?")
  assert.equal(searchOf(page("about:srcdoc")), "")
  assert.equal(searchOf({}), "", "no document: no query")
  assert.equal(queryParam(searchOf(page("http://a.test/?perf=overlay#perf=0")), "perf"), "overlay")
})

test("queryParam reads the first value, decoded", () => {
  assert.equal(queryParam("?a=1&perf=0&perf=1", "perf"), "0")
  assert.equal(queryParam("perf=overlay", "perf"), "overlay")
  assert.equal(queryParam("?x=%20y", "x"), " y")
  assert.equal(queryParam("?perf", "perf"), "")
  assert.equal(queryParam("", "perf"), null)
  assert.equal(queryParam("?perfx=1", "perf"), null)
})
