// Issue 46's transport observer with stand-ins: a window (an EventTarget whose `parent` is itself, or a frame
// under a parent window) carrying @mcp-b/transports' envelopes, a manual clock, the real Collector and wrapper.
// The real packages in real Chromium: tests/ecosystem/test_transport.py.
import { test } from "node:test"
import assert from "node:assert/strict"
import { Collector } from "../src/page/collector.js"
import { Pacer } from "../src/transport/pacing.js"
import { TransportObserver } from "../src/page/transport_observer.js"
import { wrapExecute } from "../src/page/wrap.js"
import { toolName } from "../src/page/interceptor.js"

const utf8 = (s) => Buffer.byteLength(s, "utf8")
const CANARY = "CANARY-transport-51f0"

function win(parent = null) {
  const w = new EventTarget()
  w.parent = parent || w
  return w
}

/** Post the way @mcp-b/transports does: the envelope lands on `target` with `source`. */
function post(target, source, direction, payload, channel = "mcp-default") {
  const e = new Event("message")
  Object.defineProperty(e, "data", { value: { channel, type: "mcp", direction, payload } })
  Object.defineProperty(e, "source", { value: source })
  target.dispatchEvent(e)
}

function setup(g = win(), tasks = null) {
  let t = 0
  const spans = []
  const timers = []
  const schedule = (fn) => (tasks ? tasks.push(fn) : fn())
  const c = new Collector({
    sessionId: "abcd0123",
    config: { buffer: 100, sample: 1, errorPolicy: "message" },
    clock: () => t,
    // accounting runs as a task of its own in a page; `tasks` keeps them queued, else they run at once
    schedule,
    pacer: new Pacer({ clock: () => t, schedule, setTimeout: (fn) => timers.push(fn), clearTimeout() {} }),
    sink: { start() {}, settled() {}, reopened() {}, accounted() {}, span: (s) => spans.push(s), update() {}, evicted() {}, beforeReset() {}, tool() {}, listed() {}, rejected() {}, ledger() {}, status() {}, restateStatus() {}, event() {} },
  })
  c.wire = new TransportObserver(c, { global: g, name: toolName, setTimeout: (fn) => timers.push(fn) })
  c.wire.start()
  return { c, g, spans, timers, tick: (ms) => (t += ms), reasons: () => c.status().reasons, coverage: () => c.status().coverage }
}

const request = (id, name, args) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } })
const result = (id, r) => ({ jsonrpc: "2.0", id, result: r })

test("a tools/call no wrapper sees is one span, request to response, sized from the result the client received", () => {
  const { g, spans, tick, reasons, coverage } = setup()
  const r = { content: [{ type: "text", text: "héllo " + CANARY }], structuredContent: { a: CANARY }, isError: false }
  post(g, g, "client-to-server", request(7, "echo", { text: CANARY }))
  tick(12)
  post(g, g, "server-to-client", result(7, r))
  assert.equal(spans.length, 1)
  const s = spans[0]
  assert.equal(s.tool, "echo")
  assert.equal(s.wallMs, 12)
  assert.equal(s.resultBytes, utf8(JSON.stringify(r)))
  assert.equal(s.inputBytes, utf8(JSON.stringify({ text: CANARY })))
  assert.deepEqual(s.contentTypes, { text: 1 })
  assert.equal(s.isError, false)
  assert.ok(!JSON.stringify(s).includes(CANARY), "sizes only, never the bodies")
  assert.equal(coverage(), "incomplete", "the function path was blind for this call")
  assert.match(reasons()[0], /^1 MCP tools\/call\(s\) over postMessage ran no tool function the agent wraps/)
})

test("a wrapped function run for the call is the same span: one seq, the client's bytes, coverage running", async () => {
  const { c, g, spans, tick, coverage } = setup()
  const fn = wrapExecute(c, "stats", async () => ({ rows: [1, 2, 3] }), "mcp")
  post(g, g, "client-to-server", request("a", "stats", { n: 3 }))
  tick(1)
  const value = await fn({ n: 3 })
  assert.deepEqual(value, { rows: [1, 2, 3] }, "the caller's value, untouched")
  assert.equal(spans.length, 0, "the call ends with its response, not with the function")
  const sent = { content: [{ type: "text", text: '{"rows":[1,2,3]}' }], structuredContent: { rows: [1, 2, 3] } }
  tick(3)
  post(g, g, "server-to-client", result("a", sent))
  assert.equal(spans.length, 1)
  assert.equal(spans[0].seq, 0)
  assert.equal(spans[0].wallMs, 4)
  assert.equal(spans[0].resultBytes, utf8(JSON.stringify(sent)), "what was sent, not the agent's guess of the envelope")
  assert.equal(coverage(), "running")
})

test("a server that ran the tool before the observer saw the request (its listener first) still makes one span", async () => {
  const tasks = []
  const { c, g, spans, timers, coverage } = setup(win(), tasks)
  const fn = wrapExecute(c, "echo", () => "x", "mcp")
  fn({}) // the server's listener ran the tool in its microtasks, before ours got the event
  post(g, g, "client-to-server", request(1, "echo", {}))
  post(g, g, "server-to-client", result(1, { content: [{ type: "text", text: "x" }], isError: false }))
  for (const f of tasks.splice(0).concat(timers.splice(0))) f()
  assert.equal(spans.length, 1)
  assert.equal(coverage(), "running")
})

test("a call of any profile entered while a message is dispatched waits for its request; one entered outside arms no timer", () => {
  const tasks = []
  const g = win()
  // The server's listener, registered before the observer's, runs the tool; the browser's `window.event` is the
  // message while its listeners (and their microtasks) run.
  let fn = null
  g.addEventListener("message", (e) => {
    if (e.data.payload.method === "tools/call") fn({})
  })
  let current
  let reads = 0
  Object.defineProperty(g, "event", { get: () => (reads++, current) })
  const dispatch = (direction, payload) => {
    const e = new Event("message")
    Object.defineProperty(e, "data", { value: { channel: "mcp-default", type: "mcp", direction, payload } })
    Object.defineProperty(e, "source", { value: g })
    current = e
    try {
      g.dispatchEvent(e)
    } finally {
      current = undefined
    }
  }
  const { c, spans, timers, coverage } = setup(g, tasks)
  fn = wrapExecute(c, "echo", () => "x", "chromium")
  fn({}) // a call on a page no MCP client has spoken to: `window.event` is not read
  assert.equal(reads, 0, "no window.event read before any envelope")
  for (const f of tasks.splice(0)) f()
  // The client's handshake, as every MCP client begins
  dispatch("client-to-server", { jsonrpc: "2.0", id: 0, method: "initialize", params: {} })
  dispatch("server-to-client", result(0, { protocolVersion: "2025-06-18", capabilities: {} }))
  dispatch("client-to-server", request(1, "echo", {}))
  dispatch("server-to-client", result(1, { content: [{ type: "text", text: "x" }], isError: false }))
  for (const f of tasks.splice(0).concat(timers.splice(0))) f()
  assert.equal(spans.length, 2, "one span: the request joined the call its dispatch ran")
  assert.ok(reads > 0, "window.event read once the client has spoken")
  assert.equal(coverage(), "running")
  fn({}) // the browser's own executeTool: no message is being dispatched
  assert.equal(timers.length, 0, "no sweep for a call no request can follow")
  for (const f of tasks.splice(0)) f()
  assert.equal(spans.length, 3)
  assert.equal(coverage(), "running")
})

test("a thrown error names the span's error; a JSON-RPC error response counts no result bytes", async () => {
  const { c, g, spans } = setup()
  const fn = wrapExecute(c, "boom", async () => {
    throw new TypeError("bad input")
  }, "mcp")
  post(g, g, "client-to-server", request(2, "boom", {}))
  await assert.rejects(fn({}), /bad input/)
  const sent = { content: [{ type: "text", text: "bad input" }], isError: true }
  post(g, g, "server-to-client", result(2, sent))
  assert.equal(spans[0].isError, true)
  assert.equal(spans[0].error, "bad input")
  assert.equal(spans[0].resultBytes, utf8(JSON.stringify(sent)))
  post(g, g, "client-to-server", request(3, "nope", {}))
  post(g, g, "server-to-client", { jsonrpc: "2.0", id: 3, error: { code: -32602, message: "Tool nope not found" } })
  assert.equal(spans[1].isError, true)
  assert.equal(spans[1].resultBytes, 0)
  assert.equal(spans[1].error, "Tool nope not found")
})

test("an iframe's server: requests from the parent, responses watched on the parent's window", () => {
  const top = win()
  const frame = win(top)
  const { spans } = setup(frame)
  post(frame, top, "client-to-server", request(1, "echo", {}), "mcp-iframe")
  post(top, frame, "server-to-client", result(1, { content: [] }), "mcp-iframe")
  assert.equal(spans.length, 1)
  assert.equal(spans[0].resultBytes, utf8('{"content":[]}'))
  // Another frame's answer with the same id on the parent's window is not this server's.
  post(frame, top, "client-to-server", request(2, "echo", {}), "mcp-iframe")
  post(top, win(top), "server-to-client", result(2, { content: [] }), "mcp-iframe")
  assert.equal(spans.length, 1)
})

test("a cross-origin parent's requests: no span is invented, the blind path is said", () => {
  const guarded = { addEventListener() { throw new DOMException("Blocked a frame", "SecurityError") } }
  const frame = win(/** @type {any} */ (guarded))
  const { spans, reasons, coverage } = setup(frame)
  post(frame, guarded, "client-to-server", request(1, "echo", {}), "mcp-iframe")
  assert.equal(spans.length, 0)
  assert.equal(coverage(), "incomplete")
  assert.match(reasons()[0], /cross-origin parent.*out of the agent's sight/)
})

test("the referee: a function-level MCP call no transport carried, and a response before the function returned", async () => {
  const { c, g, spans, timers, reasons } = setup()
  const fn = wrapExecute(c, "echo", async () => "x", "mcp")
  await fn({})
  for (const f of timers.splice(0)) f()
  assert.equal(spans.length, 1)
  assert.ok(reasons().some((r) => r.startsWith("1 MCP-client call(s) reached a tool function with no tools/call seen")), reasons())
  let release
  const slow = wrapExecute(c, "slow", () => new Promise((r) => (release = r)), "mcp")
  post(g, g, "client-to-server", request(9, "slow", {}))
  const p = slow({})
  post(g, g, "server-to-client", result(9, { content: [] }))
  assert.equal(spans.length, 2)
  release("late")
  assert.equal(await p, "late")
  assert.equal(spans.length, 2, "never two spans")
  assert.ok(reasons().some((r) => r.startsWith("1 MCP tools/call(s) were answered on the transport while the tool function")), reasons())
})

test("a joined call whose response never comes settles from the function's value, and says so", async () => {
  const { c, g, spans, timers, reasons } = setup()
  const fn = wrapExecute(c, "echo", async () => "abc", "mcp")
  post(g, g, "client-to-server", request(4, "echo", {}))
  await fn({})
  assert.equal(spans.length, 0)
  for (const f of timers.splice(0)) f()
  assert.equal(spans.length, 1)
  assert.equal(spans[0].resultBytes, utf8(JSON.stringify({ content: [{ type: "text", text: "abc" }], structuredContent: "abc", isError: false })))
  assert.ok(reasons().some((r) => r.includes("no response was seen on the transport")), reasons())
  post(g, g, "server-to-client", result(4, { content: [] }))
  assert.equal(spans.length, 1, "a late response is not a second call")
})

test("messages that are not MCP-B tools/call envelopes, or come from elsewhere, are ignored; none is changed", () => {
  const { g, spans, c } = setup()
  const data = { channel: "mcp-default", type: "mcp", direction: "client-to-server", payload: request(1, "echo", {}) }
  const frozen = JSON.stringify(data)
  const e = new Event("message")
  Object.defineProperty(e, "data", { value: data })
  Object.defineProperty(e, "source", { value: win() })
  g.dispatchEvent(e)
  post(g, g, "client-to-server", { jsonrpc: "2.0", id: 1, method: "tools/list" })
  post(g, g, "client-to-server", "mcp-check-ready")
  post(g, g, "server-to-client", result(1, { content: [] }))
  assert.equal(JSON.stringify(data), frozen)
  assert.equal(spans.length, 0)
  assert.equal(c.inFlight.size, 0)
})

test("requests that never get a response are bounded: the oldest is given up as an error, nothing stays in flight", () => {
  const { c, g, spans, reasons } = setup()
  for (let i = 0; i < 300; i++) post(g, g, "client-to-server", request(i, "echo", {}))
  assert.equal(c.inFlight.size, 256)
  assert.equal(spans.length, 44)
  assert.ok(spans.every((s) => s.isError && s.resultBytes === 0 && /no response seen/.test(s.error)))
  assert.ok(reasons().some((r) => r.startsWith("44 MCP tools/call(s) were still awaiting a response")), reasons())
})

test("a call the server ran before the request was seen, with no response, is sized as its caller's profile", () => {
  const tasks = []
  const { c, g, spans, timers } = setup(win(), tasks)
  wrapExecute(c, "echo", () => "abc", "mcp")({})
  post(g, g, "client-to-server", request(5, "echo", {}))
  for (const f of tasks.splice(0)) f()
  assert.equal(spans.length, 0, "waiting for the response")
  for (const f of timers.splice(0)) f()
  for (const f of tasks.splice(0)) f()
  assert.equal(spans.length, 1)
  assert.equal(spans[0].resultBytes, utf8(JSON.stringify({ content: [{ type: "text", text: "abc" }], structuredContent: "abc", isError: false })))
})

test("a tools/call posted before the rest of the agent arrives is kept by the early buffer and is the same span once it has", async () => {
  const { EarlyLog } = await import("../src/page/early.js")
  const { handOver } = await import("../src/page/replay.js")
  const g = win()
  let t = 100
  let wanted = 0
  const log = new EarlyLog({ sessionId: "abcd0123", config: {}, clock: () => t, onCall: () => wanted++ })
  log.watchTransport(g)
  const r = { content: [{ type: "text", text: "early " + CANARY }], isError: false }
  post(g, g, "client-to-server", request(3, "echo", { text: CANARY }))
  assert.equal(wanted, 1, "a tools/call wants the rest at once")
  t += 9
  post(g, g, "server-to-client", result(3, r))
  post(g, g, "server-to-client", { jsonrpc: "2.0", method: "notifications/tools/list_changed" })
  t += 500 // the rest arrives later
  const { c, spans, reasons } = setup(g)
  handOver(log, c)
  assert.equal(spans.length, 1)
  assert.equal(spans[0].tool, "echo")
  assert.equal(spans[0].wallMs, 9, "timed at the request and the response, not at the hand-over")
  assert.equal(spans[0].resultBytes, utf8(JSON.stringify(r)))
  assert.ok(reasons().some((x) => x.startsWith("1 MCP tools/call(s) over postMessage ran no tool function")), reasons().join(" | "))
  // Handed over, the buffer no longer listens: the observer alone sees the next call (one span, not two).
  post(g, g, "client-to-server", request(4, "echo", {}))
  post(g, g, "server-to-client", result(4, r))
  assert.equal(spans.length, 2)
  assert.ok(!JSON.stringify(spans).includes(CANARY))
})
