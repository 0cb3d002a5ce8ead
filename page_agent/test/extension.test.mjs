// The extension's pieces without a browser (the browser tests are tests/extension/): the page-world socket
// over a MessagePort (port.js) and the service worker's pipes to the relay (pipes.js), with a fake relay
// socket, fake chrome.runtime ports and manual timers.
import { test, afterEach } from "node:test"
import assert from "node:assert/strict"
import { portSocketClass, BRIDGE_KEY } from "../src/transport/port.js"
import { PipeHub, badgeFor, badgeCount, pairingFrom, validRelay, siteOf, agentScript } from "../src/worker/pipes.js"
import { EXTENSION_AGENT } from "../src/shared/config.js"
import { FakeWebSocket } from "../test-support/helpers.mjs"

const TOKEN = "0123456789abcdef0123456789abcdef"
const PAIRED = { relay: "ws://127.0.0.1:7420/relay", token: TOKEN, off: [] }

function timers() {
  const due = []
  return {
    due,
    setTimeout: (fn, ms) => (due.push({ fn, ms }), due.length),
    clearTimeout: (id) => due[id - 1] && (due[id - 1].fn = null),
    run() {
      const list = due.splice(0)
      for (const t of list) if (t.fn) t.fn()
    },
  }
}

/** A window whose postMessage hands the transferred port to `bridge` (the isolated world). */
function pageWindow(bridge) {
  const t = timers()
  return {
    t,
    MessageChannel,
    postMessage: (data, origin, ports) => bridge(data, ports),
    setTimeout: t.setTimeout,
    clearTimeout: t.clearTimeout,
    setInterval: () => 1,
    clearInterval: () => {},
  }
}

/** Wait until `cond()` holds (MessagePort delivery is a task away; under load more than one). */
async function until(cond, what) {
  for (let i = 0; i < 400 && !cond(); i++) await new Promise((r) => setTimeout(r, 5))
  assert.ok(cond(), what)
}

// Every MessagePort made here is closed after each test, pass or fail: an open one keeps node running.
const opened = []
afterEach(() => opened.splice(0).forEach((p) => p.close()))

test("PortSocket: one handshake carrying a port, then WebSocket semantics over it", async () => {
  let bridgePort = null
  const seen = []
  const g = pageWindow((data, ports) => {
    assert.deepEqual(data, { [BRIDGE_KEY]: "connect" })
    bridgePort = ports[0]
    opened.push(bridgePort)
    bridgePort.onmessage = (e) => seen.push(e.data)
  })
  const PortSocket = portSocketClass(g)
  const ws = new PortSocket("ws://placeholder/relay")
  const events = []
  ws.onopen = () => events.push("open")
  ws.onmessage = (e) => events.push(e.data)
  ws.onclose = () => events.push("close")
  assert.equal(ws.readyState, 0)
  assert.throws(() => ws.send("x"))
  bridgePort.postMessage({ t: "bridged" })
  bridgePort.postMessage({ t: "open" })
  bridgePort.postMessage({ t: "msg", d: '{"type":"ack"}' })
  bridgePort.postMessage({ t: "msg", d: 42 }) // not a string: ignored
  bridgePort.postMessage({ t: "msg", d: "last" })
  await until(() => events.length === 3, "open and two messages")
  assert.equal(ws.readyState, 1)
  ws.send('{"type":"hello"}')
  await until(() => seen.length === 1, "the frame reached the bridge")
  assert.deepEqual(seen, [{ t: "send", d: '{"type":"hello"}' }])
  bridgePort.postMessage({ t: "close" })
  await until(() => ws.readyState === 3, "closed")
  assert.deepEqual(events, ["open", '{"type":"ack"}', "last", "close"])
  assert.equal(ws.readyState, 3)
})

test("PortSocket: no bridge answers (extension gone) -> closed after a timeout, so the uplink retries", () => {
  const g = pageWindow((_, ports) => opened.push(ports[0]))
  const ws = new (portSocketClass(g))("ws://placeholder/relay")
  let closed = 0
  ws.onclose = () => closed++
  g.t.run()
  assert.equal(closed, 1)
  assert.equal(ws.readyState, 3)
})

test("PortSocket: `detach` from the extension closes the socket and calls the hook", async () => {
  let port = null
  const g = pageWindow((_, ports) => opened.push((port = ports[0])))
  let detached = 0
  const ws = new (portSocketClass(g, { onDetach: () => detached++ }))("ws://placeholder/relay")
  port.postMessage({ t: "detach" })
  await until(() => detached === 1, "detached")
  assert.equal(ws.readyState, 3)
})

/** A chrome.runtime.Port double. */
function fakePort() {
  const p = {
    posted: [],
    disconnected: false,
    msg: [],
    disc: [],
    postMessage: (m) => p.posted.push(m),
    disconnect: () => (p.disconnected = true),
    onMessage: { addListener: (f) => p.msg.push(f) },
    onDisconnect: { addListener: (f) => p.disc.push(f) },
    fromPage: (m) => p.msg.forEach((f) => f(m)),
  }
  return p
}

function hub() {
  FakeWebSocket.instances = []
  const t = timers()
  const views = []
  const h = new PipeHub({ WebSocket: FakeWebSocket, onTab: (tab, v) => views.push(v), setTimeout: t.setTimeout, clearTimeout: t.clearTimeout })
  return { h, t, views }
}

const SENDER = { tabId: 7, frameId: 0, url: "https://shop.example/cart" }

test("pipes: unpaired ports wait quietly; pairing dials the relay with the token for each", () => {
  const { h } = hub()
  h.configure({ relay: null, token: null, off: [] })
  const port = fakePort()
  h.connect(port, SENDER)
  assert.equal(FakeWebSocket.instances.length, 0)
  assert.equal(port.disconnected, false)
  assert.equal(badgeFor(h.view(7)).text, "?")
  h.configure(PAIRED)
  assert.equal(FakeWebSocket.last().url, `ws://127.0.0.1:7420/relay?t=${TOKEN}`)
  FakeWebSocket.last().accept()
  assert.deepEqual(port.posted[0], { t: "open" })
  assert.equal(port.posted[1].t, "msg") // the relay's welcome, passed through
})

test("pipes: a hello leaves with the extension's agent name whatever the page claimed; acks count calls", () => {
  const { h } = hub()
  h.configure(PAIRED)
  const port = fakePort()
  h.connect(port, SENDER)
  const ws = FakeWebSocket.last()
  ws.accept()
  port.fromPage({ t: "send", d: JSON.stringify({ type: "hello", agent: "spoofed/9", session: { id: "abcdef01", origin: "https://shop.example" } }) })
  port.fromPage({ t: "send", d: JSON.stringify({ type: "status", session: "abcdef01", phase: "measuring" }) })
  port.fromPage({ t: "send", d: "x".repeat((1 << 20) + 1) }) // over the relay's frame cap: dropped here
  assert.equal(ws.sent.length, 2)
  assert.equal(ws.sent[0].agent, EXTENSION_AGENT)
  ws.deliver({ type: "ack", session: "abcdef01", seq: 41 })
  const v = h.view(7)
  assert.equal(v.calls, 42)
  assert.deepEqual(v.sessions, [{ id: "abcdef01", phase: "measuring", frameId: 0, site: "shop.example" }])
  assert.deepEqual(badgeFor(v), { text: "42", color: "#188038", title: "wmcp-top: relay reached · 42 calls in this tab" })
})

test("pipes: a hello is stamped from the browser's sender: origin, frame, agent; `via` only to a session of this pipe", () => {
  const { h } = hub()
  h.configure(PAIRED)
  const top = fakePort()
  h.connect(top, { tabId: 7, frameId: 0, url: "http://localhost:8000/evil.html", origin: "http://localhost:8000" })
  const ws = FakeWebSocket.last()
  ws.accept()
  const lie = { id: "abcdef02", origin: "https://bank.example", context: "iframe", title: "bank", via: "00000000" }
  top.fromPage({ t: "send", d: JSON.stringify({ type: "hello", agent: "wmcp-top-agent/0.1.0", session: lie }) })
  top.fromPage({ t: "send", d: JSON.stringify({ type: "hello", agent: "x", session: { id: "abcdef03", origin: "https://bank.example", context: "relayed", via: "abcdef02" } }) })
  assert.deepEqual([ws.sent[0].session.origin, ws.sent[0].session.context, ws.sent[0].agent, ws.sent[0].session.via], ["http://localhost:8000", "top", EXTENSION_AGENT, undefined])
  assert.deepEqual([ws.sent[1].session.origin, ws.sent[1].session.context, ws.sent[1].session.via], ["http://localhost:8000", "relayed", "abcdef02"])
  const child = fakePort()
  h.connect(child, { tabId: 7, frameId: 3, url: "about:blank" }) // no sender.origin: the URL's ("null")
  FakeWebSocket.last().accept()
  child.fromPage({ t: "send", d: JSON.stringify({ type: "hello", session: { id: "abcdef04", origin: "https://bank.example", context: "top" } }) })
  assert.deepEqual([FakeWebSocket.last().sent[0].session.origin, FakeWebSocket.last().sent[0].session.context], ["null", "iframe"])
})

test("pipes: a tab and a frame hold a few sessions through the extension; more are refused here, a bye frees one", () => {
  const { h } = hub()
  h.configure(PAIRED)
  const ports = []
  let n = 0
  const hello = (port) => port.fromPage({ t: "send", d: JSON.stringify({ type: "hello", session: { id: (0xa0000000 + n++).toString(16), origin: "x" } }) })
  for (let i = 0; i < 4; i++) {
    const port = fakePort()
    h.connect(port, { tabId: 9, frameId: 0, url: "http://localhost:8000/" })
    FakeWebSocket.last().accept()
    ports.push(port)
    for (let j = 0; j < 5; j++) hello(port)
  }
  const sent = FakeWebSocket.instances.reduce((k, ws) => k + ws.sent.length, 0)
  assert.equal(sent, 8, "one frame holds 8 sessions, however many ports it opens")
  const refusals = ports.flatMap((p) => p.posted.filter((m) => m.t === "msg" && JSON.parse(m.d).code === "session_limit"))
  assert.equal(refusals.length, 12)
  for (let f = 1; f <= 3; f++) {
    const port = fakePort()
    h.connect(port, { tabId: 9, frameId: f, url: "http://localhost:8000/" })
    FakeWebSocket.last().accept()
    for (let j = 0; j < 8; j++) hello(port)
  }
  assert.equal(h.sessionCount(9), 16, "the tab holds 16 across its frames")
  const first = FakeWebSocket.instances[0].sent[0].session.id
  ports[0].fromPage({ t: "send", d: JSON.stringify({ type: "bye", session: first, reason: "pagehide" }) })
  assert.equal(h.sessionCount(9), 15)
})

test("pipes: relay not reached -> the pipe retries on its own and the badge says so; an open link that drops closes the port", () => {
  const { h, t } = hub()
  h.configure(PAIRED)
  const port = fakePort()
  h.connect(port, SENDER)
  FakeWebSocket.last().drop()
  assert.equal(port.disconnected, false, "the page keeps waiting")
  assert.equal(badgeFor(h.view(7)).text, "!")
  t.run()
  assert.equal(FakeWebSocket.instances.length, 2)
  FakeWebSocket.last().accept()
  FakeWebSocket.last().drop()
  assert.equal(port.disconnected, true, "the page must say hello again on a new connection")
  assert.equal(h.view(7).pipes, 0)
})

test("pipes: a switched-off site gets `detach`; the page closing its port closes the relay socket", () => {
  const { h } = hub()
  h.configure(PAIRED)
  const a = fakePort()
  h.connect(a, SENDER)
  FakeWebSocket.last().accept()
  const b = fakePort()
  h.connect(b, { tabId: 8, frameId: 0, url: "https://other.example/" })
  const other = FakeWebSocket.last()
  other.accept()
  h.configure({ ...PAIRED, off: ["shop.example"] })
  assert.deepEqual(a.posted.at(-1), { t: "detach" })
  assert.equal(a.disconnected, true)
  assert.equal(b.disconnected, false)
  b.disc.forEach((f) => f())
  assert.equal(other.closedByAgent, true)
})

test("pairing links: only a loopback ws://…/relay and a 32-hex token", () => {
  const frag = (relay, t) => `#relay=${encodeURIComponent(relay)}&t=${t}`
  assert.deepEqual(pairingFrom(frag("ws://127.0.0.1:7420/relay", TOKEN)), { relay: "ws://127.0.0.1:7420/relay", token: TOKEN })
  assert.equal(pairingFrom(frag("ws://evil.example:7420/relay", TOKEN)), null)
  assert.equal(pairingFrom(frag("wss://127.0.0.1:7420/relay", TOKEN)), null)
  assert.equal(pairingFrom(frag("ws://127.0.0.1:7420/relay?t=x", TOKEN)), null)
  assert.equal(pairingFrom(frag("ws://127.0.0.1:7420/relay", "ABC")), null)
  assert.ok(validRelay("ws://[::1]:7420/relay") && validRelay("ws://localhost:1/relay"))
  assert.equal(siteOf("chrome://settings"), "")
  assert.deepEqual([badgeCount(999), badgeCount(1500), badgeCount(123456)], ["999", "1k", "99k+"])
})

test("the agent's registration: every frame at document_start in the main world, minus the hosts switched off", () => {
  const all = agentScript([])
  assert.deepEqual(
    { world: all.world, runAt: all.runAt, allFrames: all.allFrames, fallback: all.matchOriginAsFallback, matches: all.matches, js: all.js },
    { world: "MAIN", runAt: "document_start", allFrames: true, fallback: true, matches: ["<all_urls>"], js: ["agent.js"] },
  )
  assert.deepEqual(all.excludeMatches, [])
  // A host no match pattern can hold is left out rather than breaking the registration for every site.
  assert.deepEqual(agentScript(["shop.example", "[::1]", "bad/host*", "", 7]).excludeMatches, ["*://shop.example/*", "*://[::1]/*"])
})

test("pipes: a hello the relay refuses as taken gives its place back, so the agent's renamed hello goes through", () => {
  const { h } = hub()
  h.configure(PAIRED)
  const port = fakePort()
  h.connect(port, { tabId: 5, frameId: 0, url: "http://localhost:8000/" })
  const ws = FakeWebSocket.last()
  ws.accept()
  const hello = (id) => port.fromPage({ t: "send", d: JSON.stringify({ type: "hello", session: { id, origin: "x" } }) })
  for (let i = 0; i < 8; i++) hello(`b000000${i}`)
  assert.equal(h.sessionCount(5), 8, "the frame's share is full")
  ws.deliver({ type: "error", code: "session_taken", message: "another socket owns this session", fatal: false, session: "b0000007" })
  assert.ok(port.posted.some((m) => m.t === "msg" && JSON.parse(m.d).code === "session_taken"), "the page hears the refusal")
  assert.equal(h.sessionCount(5), 7)
  hello("c0000007")
  assert.equal(ws.sent.at(-1).session.id, "c0000007", "the new id reaches the relay")
  assert.equal(h.sessionCount(5), 8)
})
