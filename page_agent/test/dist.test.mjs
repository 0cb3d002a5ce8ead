// The built file: current, self-contained, one relay placeholder; the classic script attaches on load with
// the gate's relay default. (The module form the relay derives from it, /agent.mjs, is tested from Python:
// tests/relay/test_server.py imports it in node and checks its exports.)
import { test } from "node:test"
import assert from "node:assert/strict"
import { readFileSync } from "node:fs"
import { join, dirname } from "node:path"
import { fileURLToPath } from "node:url"
import vm from "node:vm"
import { build, loadSizes, GZIP_BUDGET } from "../build.mjs"
import { fakeWindow, DraftHost, FakeWebSocket, RELAY } from "../test-support/helpers.mjs"

const DIST = join(dirname(fileURLToPath(import.meta.url)), "..", "dist")
const PLACEHOLDER = "/*@WMCP_UPLINK@*/null"
const read = (f) => readFileSync(join(DIST, f), "utf8")

test("dist/ is what the sources build (run node page_agent/build.mjs)", () => {
  const out = build()
  assert.equal(read("agent.js"), out["dist/agent.js"])
})

test("every script a page evaluates at load is within the gzip budget", () => {
  const sizes = loadSizes(build())
  assert.deepEqual(Object.keys(sizes), ["dist/agent.js", "dist/open.js", "extension/agent.js"])
  for (const [file, n] of Object.entries(sizes)) assert.ok(n > 0 && n <= GZIP_BUDGET, `${file}: ${n} B gzip, budget ${GZIP_BUDGET} B`)
})

test("each file holds the relay placeholder exactly once, is ASCII, and imports nothing", () => {
  for (const f of ["agent.js"]) {
    const text = read(f)
    assert.equal(text.split(PLACEHOLDER).length - 1, 1, f)
    assert.ok(!/[^\x00-\x7f]/.test(text), `${f} is ASCII`)
    assert.ok(!/^\s*import\s/m.test(text), `${f} has no imports`)
  }
})

const TOKEN = "0123456789abcdef0123456789abcdef"
const ADDRESS = "ws://127.0.0.1:7420/relay" // what the relay bakes: no token in it

/** The <script> element running: its attributes, as the relay's tag writes them. */
function scriptElement(attrs) {
  return {
    attrs: { ...attrs },
    getAttribute(name) {
      return Object.hasOwn(this.attrs, name) ? this.attrs[name] : null
    },
    removeAttribute(name) {
      delete this.attrs[name]
    },
  }
}

/** Run dist/agent.js as a classic script in a fake window, as the relay serves it (address baked in). */
function runClassic({ baked = true, search = "", relayGlobal = null, host = new DraftHost(), script = scriptElement({ "data-wmcp": TOKEN }), code = read("agent.js"), timers = null, address = ADDRESS } = {}) {
  FakeWebSocket.instances = []
  const g = fakeWindow({ host, search })
  g.document.currentScript = script
  g.WebSocket = FakeWebSocket
  g.setInterval = () => 1
  g.clearInterval = () => {}
  g.setTimeout = timers ? (fn) => timers.push(fn) : () => 1
  g.clearTimeout = () => {}
  g.window = g
  g.console = { info() {}, log() {} }
  if (relayGlobal) g.__WMCP_UPLINK__ = relayGlobal
  if (baked) code = code.replace(PLACEHOLDER, JSON.stringify(address))
  vm.createContext(g)
  g.globalThis = g
  g.result = vm.runInContext(code.replace("/*@WMCP_MODULE@*/", "result = "), g)
  return g
}

test("served by the relay: attaches on load (default on) and dials the baked address with the tag's token", () => {
  const script = scriptElement({ "data-wmcp": TOKEN, src: "http://127.0.0.1:7420/agent.js?v=0a1b2c3d" })
  const g = runClassic({ script })
  assert.equal(g.__webmcpPerf.active, true)
  assert.equal(FakeWebSocket.instances.length, 1)
  assert.equal(FakeWebSocket.last().url, ADDRESS)
  // The token goes as a subprotocol, never in the URL; the tag no longer holds it once the agent ran.
  assert.deepEqual(Array.from(FakeWebSocket.last().protocols), ["wmcp-top", `wmcp-top.token.${TOKEN}`])
  assert.deepEqual(script.attrs, { src: "http://127.0.0.1:7420/agent.js?v=0a1b2c3d" })
})

test("the module form (no current script) waits for start(token) before it dials", () => {
  const timers = []
  const g = runClassic({ script: null, timers })
  assert.equal(g.__webmcpPerf.active, true, "it attached on import: calls are measured from then on")
  assert.equal(FakeWebSocket.instances.length, 0, "no token yet: nothing dialled")
  assert.equal(g.__webmcpPerf.relay().lastError, "awaiting token")
  assert.equal(g.result.start("not a token"), g.__webmcpPerf)
  assert.equal(g.result.start(TOKEN), g.__webmcpPerf)
  for (const fn of timers.splice(0)) fn() // the uplink's retry
  assert.equal(FakeWebSocket.last().url, ADDRESS)
  assert.deepEqual(Array.from(FakeWebSocket.last().protocols), ["wmcp-top", `wmcp-top.token.${TOKEN}`])
})

test("a tag with a malformed token loses the attribute and dials the address as baked, offering nothing", () => {
  const script = scriptElement({ "data-wmcp": "abc</script>" })
  runClassic({ script })
  assert.deepEqual(script.attrs, {})
  assert.equal(FakeWebSocket.last().url, ADDRESS)
  assert.equal(FakeWebSocket.last().protocols, undefined)
})

test("an address a harness baked with its own token (an init script: no current script) is dialled as it is", () => {
  runClassic({ script: null, address: RELAY })
  assert.equal(FakeWebSocket.last().url, RELAY)
  assert.equal(FakeWebSocket.last().protocols, undefined)
})

test("served by the relay but switched off with ?perf=0: inert, no socket", () => {
  const g = runClassic({ search: "?perf=0" })
  assert.equal(g.__webmcpPerf.active, false)
  assert.equal(g.__webmcpPerf.status().phase, "inactive")
  assert.equal(FakeWebSocket.instances.length, 0)
})

test("loaded raw: off by default; ?perf=1 attaches and uses globalThis.__WMCP_UPLINK__", () => {
  assert.equal(runClassic({ baked: false }).__webmcpPerf.active, false)
  const g = runClassic({ baked: false, search: "?perf=1", relayGlobal: RELAY })
  assert.equal(g.__webmcpPerf.active, true)
  assert.equal(FakeWebSocket.last().url, RELAY)
  const alone = runClassic({ baked: false, search: "?perf=1" })
  assert.equal(alone.__webmcpPerf.active, true)
  assert.equal(FakeWebSocket.instances.length, 0, "no relay address: runs without an uplink")
})
