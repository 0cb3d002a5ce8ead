// The built file: current, self-contained, one relay placeholder; the classic script attaches on load with
// the gate's relay default. (The module form the relay derives from it, /agent.mjs, is tested from Python:
// tests/relay/test_server.py imports it in node and checks its exports.)
import { test } from "node:test"
import assert from "node:assert/strict"
import { readFileSync } from "node:fs"
import { join, dirname } from "node:path"
import { fileURLToPath } from "node:url"
import vm from "node:vm"
import { createHash } from "node:crypto"
import { build, loadSizes, strip, compileEarly, AT_LOAD, GZIP_BUDGET } from "../build.mjs"
import { validToken } from "../src/shared/token.js"
import { fakeWindow, DraftHost, FakeWebSocket, RELAY, legacyHost } from "../test-support/helpers.mjs"

const DIST = join(dirname(fileURLToPath(import.meta.url)), "..", "dist")
const PLACEHOLDER = "/*@WMCP_UPLINK@*/null"
const read = (f) => readFileSync(join(DIST, f), "utf8")

test("dist/ is what the sources build (run node page_agent/build.mjs)", () => {
  const out = build()
  assert.equal(read("agent.js"), out["dist/agent.js"])
})

test("every script a page evaluates at load is within the gzip budget", () => {
  const sizes = loadSizes(build())
  assert.deepEqual(Object.keys(sizes), ["dist/agent-eager.js", "extension/agent.js"])
  assert.ok(GZIP_BUDGET <= 14_336, "the eager part weighs no more than 14 KiB, under webmcp-profiler's whole IIFE (14,362 B)")
  for (const [file, n] of Object.entries(sizes)) assert.ok(n > 0 && n <= GZIP_BUDGET, `${file}: ${n} B gzip, budget ${GZIP_BUDGET} B`)
})

test("no script carries the file-wide compile hint; the eager part's AT_LOAD functions are in V8's eager-compile form", () => {
  const out = build()
  for (const [f, text] of Object.entries(out)) assert.ok(!text.includes("//# allFunctionsCalledOnLoad"), `${f}: every function would be compiled at load`)
  const eager = out["dist/agent-eager.js"]
  for (const [mod, names] of Object.entries(AT_LOAD)) {
    for (const n of names) {
      const [cls, fn] = n.includes(".") ? n.split(".") : [null, n]
      const form = fn === "constructor" ? `const new${cls}=(function(` : cls ? `${fn}:(function(` : `const ${fn}=(`
      assert.ok(eager.includes(form), `${mod}: ${n} is not parenthesised in the eager script`)
    }
  }
  assert.ok(eager.includes("const wrapExecute=(function(collector,"), "a declaration moves to its module's top as a parenthesised constant")
  assert.ok(eager.includes("patch:(function(host,location){"), "a method moves onto its class's prototype in parentheses")
})

test("compileEarly: the functions it names behave as written, in V8's eager-compile form; a name it cannot find fails the build", () => {
  const src = [
    "const early = twice(2)",
    "function twice(n) {",
    "  const inner = (k) => {",
    "    return k + 1",
    "  }",
    "  const one = (k) => k * 1",
    "  return inner(n * 2) - 1 + one(0)",
    "}",
    "const inc = (n) => n + 1",
    "const big = (n) => {",
    "  return n * 100",
    "}",
    "class Box {",
    "  constructor(v, { scale = 1 } = {}) {",
    "    this.v = v * scale",
    "  }",
    "  get(k) {",
    "    return this.v + k",
    "  }",
    "  other() {",
    "    return 0",
    "  }",
    "}",
    "const b = new Box(5, { scale: 2 })",
    "return [early, twice(3), inc(1), big(1), b.get(1), b instanceof Box, Object.keys(b).join(), Object.getOwnPropertyNames(Box.prototype).sort().join(), twice.name, Box.prototype.get.name]",
  ].join("\n")
  const hinted = compileEarly("m", src, ["twice", "inner", "one", "inc", "big", "Box.constructor", "Box.get"])
  assert.deepEqual(new Function(hinted)(), new Function(src)(), "same results, a moved method as non-enumerable as the class's own")
  assert.ok(hinted.startsWith("const twice = (function (n) {"), "a declaration goes first, where it was hoisted to")
  for (const form of ["  const inner = ((k) => {", "  })", "  const one = ((k) => k * 1)", "const inc = ((n) => n + 1)", "const big = ((n) => {", "const newBox = (function (v, { scale = 1 } = {}) {", "    newBox.apply(this, arguments)", "get: (function (k) {"]) {
    assert.ok(hinted.includes(form), `${form} is not in:\n${hinted}`)
  }
  assert.ok(!/^ {2}get\(k\)/m.test(hinted))
  assert.throws(() => compileEarly("m", src, ["gone"]), /m\.js: no function or function constant gone/)
  assert.throws(() => compileEarly("m", src, ["Box.gone"]), /no method Box\.gone/)
  assert.throws(() => compileEarly("m", "class A {\n  f() {\n    return super.f()\n  }\n}", ["A.f"]), /reads super/)
  assert.throws(() => compileEarly("m", "function f() {\n  const g = () => 1\n}\nfunction h() {\n  const g = () => 2\n}", ["g"]), /2 constants named g/)
})

test("the build drops only line breaks no statement ends at: code relying on automatic semicolons runs the same", () => {
  const src = [
    "const out = []",
    "const o = {",
    "  a: 1,",
    "}",
    "out.push(o.a)",
    "let n = 1",
    "n",
    "++",
    "n",
    "out.push(n)",
    "const f = function () {",
    "  return",
    "  3",
    "}",
    "out.push(f())",
    "const t = `x",
    "${o.a}`",
    "out.push(t, /[{(]/.test('('))",
    "out",
  ].join("\n")
  const stripped = strip(src)
  const run = (code) => JSON.stringify(vm.runInNewContext(code))
  assert.equal(run(stripped), run(src))
  assert.equal(run(src), '[1,2,null,"x\\n1",true]')
  assert.ok(stripped.split("\n").length < src.split("\n").length, "some line breaks went")
  assert.match(stripped, /^const o=\{a:1,\}\nout\.push/m, "a break after a closing brace stays")
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

/**
 * document.evaluate as the agent asks it (shared/token.js), over the running tag `script`: its data-wmcp as an
 * attribute node (when it holds a value) and its src as written.
 */
function evaluateOver(script) {
  return (expression, context, resolver, type) => {
    if (type === 2) return { stringValue: (script && script.attrs.src) || "" }
    const held = script && typeof script.attrs["data-wmcp"] === "string" && script.attrs["data-wmcp"] !== ""
    const attr = {
      get value() {
        return script.attrs["data-wmcp"]
      },
      set value(v) {
        script.attrs["data-wmcp"] = v
      },
    }
    return { singleNodeValue: held ? attr : null }
  }
}

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

/**
 * Run dist/agent.js as a classic script in a fake window, as the relay serves it (address baked in). The rest
 * composes at the first idle moment after load: `idle` runs it (false: the page as it is right after load).
 */
function runClassic({ baked = true, search = "", relayGlobal = null, host = new DraftHost(), script = scriptElement({ "data-wmcp": TOKEN }), code = read("agent.js"), timers = null, address = ADDRESS, idle = true, prepare = null } = {}) {
  FakeWebSocket.instances = []
  const g = fakeWindow({ host, search })
  g.document.readyState = "complete"
  g.URL = URL
  g.idle = []
  g.requestIdleCallback = (fn) => g.idle.push(fn)
  g.document.currentScript = script
  g.document.evaluate = evaluateOver(script)
  g.WebSocket = FakeWebSocket
  g.setInterval = () => 1
  g.clearInterval = () => {}
  // The rest is asked for a second after the load event, at the next idle moment: both land in g.idle.
  g.setTimeout = (fn, ms) => (ms === 1000 ? g.idle.push(fn) : timers ? timers.push(fn) : 1)
  g.clearTimeout = () => {}
  g.window = g
  g.console = { info() {}, log() {} }
  if (relayGlobal) g.__WMCP_UPLINK__ = relayGlobal
  if (baked) code = code.replace(PLACEHOLDER, JSON.stringify(address))
  if (prepare) prepare(g)
  vm.createContext(g)
  g.globalThis = g
  g.result = vm.runInContext(code.replace("/*@WMCP_MODULE@*/", "result = "), g)
  if (idle) runIdle(g)
  return g
}

const runIdle = (g) => {
  while (g.idle.length) for (const fn of g.idle.splice(0)) fn()
}

test("served by the relay: attaches on load (default on) and dials the baked address with the tag's token", () => {
  const script = scriptElement({ "data-wmcp": TOKEN, src: "http://127.0.0.1:7420/agent.js?v=0a1b2c3d" })
  const g = runClassic({ script })
  assert.equal(g.__webmcpPerf.active, true)
  assert.equal(FakeWebSocket.instances.length, 1)
  assert.equal(FakeWebSocket.last().url, ADDRESS)
  // The token goes as a subprotocol, never in the URL; the tag no longer holds it once the agent ran.
  assert.deepEqual(Array.from(FakeWebSocket.last().protocols), ["wmcp-top", `wmcp-top.token.${TOKEN}`])
  assert.deepEqual(script.attrs, { "data-wmcp": "", src: "http://127.0.0.1:7420/agent.js?v=0a1b2c3d" })
})

test("the tag is read without its element: the token from its attribute node, a relative src against the base", () => {
  let asked = 0
  let urls = 0
  const script = scriptElement({ "data-wmcp": TOKEN, src: "/tools/agent.js?v=0a1b2c3d" })
  const g = runClassic({
    script,
    code: read("agent-eager.js"),
    idle: false,
    prepare: (w) => {
      Object.defineProperty(w.document, "currentScript", { get: () => (asked++, script) })
      w.URL = class extends URL {
        constructor(/** @type {any[]} */ ...args) {
          super(args[0], args[1])
          urls++
        }
      }
      w.document.baseURI = "http://127.0.0.1:7420/shop/cart.html"
      w.document.createElement = (tag) => ({ tagName: tag, src: "", remove() {} })
      w.document.head = { appendChild: (el) => (w.inserted = el) }
    },
  })
  assert.equal(asked, 0, "document.currentScript is never read at load: its element would cost the page 77 KB of heap")
  assert.deepEqual(script.attrs, { "data-wmcp": "", src: "/tools/agent.js?v=0a1b2c3d" })
  assert.equal(urls, 0, "no URL object at load: the first builds the URL interface, 3 KB of the page's heap")
  // The base as it was at load, even if the page moves it later (its own <base>): the browser resolved the tag then.
  g.document.baseURI = "http://127.0.0.1:7420/elsewhere/"
  runIdle(g)
  assert.equal(g.inserted.src, `http://127.0.0.1:7420/tools/agent-rest.js?v=${restHash()}`)
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

test("a tag with a malformed token loses it and dials the address as baked, offering nothing", () => {
  const script = scriptElement({ "data-wmcp": "abc</script>" })
  runClassic({ script })
  assert.deepEqual(script.attrs, { "data-wmcp": "" })
  assert.equal(FakeWebSocket.last().url, ADDRESS)
  assert.equal(FakeWebSocket.last().protocols, undefined)
})

test("a token is 32 lowercase hex digits, nothing else", () => {
  assert.ok(validToken(TOKEN))
  assert.ok(validToken("f".repeat(32)))
  for (const bad of [TOKEN.toUpperCase(), TOKEN.slice(1), `${TOKEN}0`, `${TOKEN.slice(1)}g`, `${TOKEN.slice(1)}/`, `${TOKEN.slice(1)}:`, `${TOKEN.slice(1)}\``, "", null, 32, [TOKEN]]) {
    assert.equal(validToken(bad), false, String(bad))
  }
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

// ---- the eager part and the rest (issue 47: light at load) ----------------------------------------------------

const REST_SRC = "http://127.0.0.1:7420/agent.js?v=0a1b2c3d"
const restHash = () => createHash("sha256").update(read("agent-rest.js")).digest("hex").slice(0, 8)

/** The relay's route: dist/agent-eager.js runs at load; the script elements it inserts are kept (not fetched). */
function runEager(opts = {}) {
  const inserted = []
  const host = opts.host || new DraftHost()
  const script = Object.assign(scriptElement({ "data-wmcp": TOKEN, src: REST_SRC }), { src: REST_SRC })
  const g = runClassic({ ...opts, host, idle: false, code: read("agent-eager.js"), script })
  g.document.createElement = (tag) => ({ tagName: tag, src: "", remove() {} })
  g.document.head = { appendChild: (el) => inserted.push(el) }
  return { g, host, inserted }
}

/** The rest arrives: dist/agent-rest.js runs as the script element `el` (or as a page's own script: `el` null). */
function runRest(g, el) {
  g.document.currentScript = el
  vm.runInContext(read("agent-rest.js"), g)
}

/** A page's two tools, `outer` calling `inner` inside its own run (one nested call), registered on the host. */
async function registerNested(host) {
  const inner = { name: "inner", description: "d", execute: () => ({ content: [{ type: "text", text: "x".repeat(300) }] }) }
  const outer = { name: "outer", description: "d", execute: async () => ({ content: [{ type: "text", text: `${JSON.stringify(await inner.execute({}))}y` }] }) }
  await host.registerTool(inner)
  await host.registerTool(outer)
}

/** What a span says of a call, timings aside: its tool, seq, bytes, nesting and outcome. */
const shape = (api) => {
  const facts = api.spanFacts()
  return JSON.parse(JSON.stringify(api.spans().map((s, i) => ({ tool: s.tool, seq: s.seq, resultBytes: s.resultBytes, depth: facts[i].depth, parent: facts[i].parent, isError: s.isError }))))
}

test("at load only the eager part runs: hooks and buffer, no socket, no rest; the rest's URL is beside the agent's, pinned by its hash, token-free", async () => {
  const { g, host, inserted } = runEager()
  assert.equal(FakeWebSocket.instances.length, 0, "no socket at load")
  assert.equal(g.__webmcpPerf.active, true)
  assert.equal(inserted.length, 0, "the rest is not fetched on the critical path")
  await registerNested(host)
  assert.equal(inserted.length, 0, "nor by a registration")
  assert.equal(typeof host.registry.get("outer").execute, "function")
  assert.notEqual(host.registry.get("outer").execute.toString(), "async () => ({ content: [{ type: \"text\", text: `${JSON.stringify(await inner.execute({}))}y` }] })", "wrapped at registration")
  runIdle(g)
  assert.equal(inserted.length, 1, "asked for at the first idle moment after load")
  assert.equal(g.__webmcpPerf.status().phase, "loading")
  assert.equal(inserted[0].src, `http://127.0.0.1:7420/agent-rest.js?v=${restHash()}`)
  assert.ok(!inserted[0].src.includes(TOKEN))
})

test("at load the eager part reads neither performance nor location and listens for no toolchange or toolcancel; its stamps (the engine's wall clock) join the page's clock with the rest", async () => {
  const reads = { performance: 0, location: 0 }
  const changes = []
  const cancels = []
  const origin = Date.now() - 5000 // the page's time origin: five seconds ago
  const perf = { now: () => Date.now() - origin + 0.25, timeOrigin: origin, mark() {}, measure() {}, getEntriesByType: () => [] }
  const { g, host, inserted } = runEager({
    prepare: (w) => {
      const loc = w.location
      Object.defineProperty(w, "performance", { get: () => (reads.performance++, perf), configurable: true })
      Object.defineProperty(w, "location", { get: () => (reads.location++, loc), configurable: true })
      const add = w.document.modelContext.addEventListener.bind(w.document.modelContext)
      w.document.modelContext.addEventListener = (type, fn, o) => (type === "toolchange" && changes.push(fn), type === "toolcancel" && cancels.push(fn), add(type, fn, o))
    },
  })
  // A page that replaces Date.now after the agent's script ran (a frozen clock) does not move the agent's stamps.
  vm.runInContext("Date.now = () => 0", g)
  const before = perf.now()
  await registerNested(host)
  const after = perf.now()
  assert.deepEqual(reads, { performance: 0, location: 0 }, "each builds its interface in a page that never touched it (5 and 3.5 KB of heap)")
  assert.equal(changes.length, 0, "a toolchange listener's first Event builds that interface (4 KB): nothing to do with it before the rest")
  // Chromium 156: a toolcancel listener from the start of a frame's load leaves its host silent now and then
  assert.equal(cancels.length, 0, "no toolcancel listener during the load")
  runIdle(g)
  runRest(g, inserted[0])
  assert.equal(changes.length, 1, "listened for once the rest is here")
  assert.equal(cancels.length, 1, "toolcancel too")
  const tools = g.__webmcpPerf.ledger().tools
  for (const name of ["inner", "outer"]) {
    const at = tools[name].registeredAt
    // Stamped on the wall clock at load (whole milliseconds), read on the page's clock.
    assert.ok(at >= before - 1 && at <= after + 1, `${name} registered at ${at}, on the page's clock between ${before} and ${after}`)
  }
  // A call reads the page's clock itself; its span and the registrations are on one clock.
  await host.registry.get("outer").execute({})
  const [, outer] = g.__webmcpPerf.spans()
  assert.ok(outer.invokedAt >= tools.outer.registeredAt - 1 && outer.invokedAt <= perf.now(), `${outer.invokedAt}`)
})

test("the rest waits for the load event by looking at readyState (no load listener: its Event builds that interface)", () => {
  const timers = []
  const types = []
  const { g, inserted } = runEager({
    timers,
    prepare: (w) => {
      w.document.readyState = "loading"
      w.addEventListener = (type) => types.push(type)
    },
  })
  for (let i = 0; i < 3; i++) {
    assert.equal(timers.length, 1, "one look at a time, while the page loads")
    timers.shift()()
  }
  assert.equal(g.idle.length, 0, "not before the load event")
  g.document.readyState = "complete"
  timers.shift()()
  runIdle(g)
  assert.equal(inserted.length, 1, "a second after it, at the first idle moment")
  assert.ok(!types.includes("load"), types.join())
})

test("a call made before the rest arrives is measured in full once it has (same bytes, nesting, seq as the whole agent's)", async () => {
  // The whole agent, composed before the calls: the reference.
  const whole = runClassic({ script: scriptElement({ "data-wmcp": TOKEN }) })
  await registerNested(whole.document.modelContext)
  await whole.document.modelContext.executeTool({ name: "outer" }, {})
  const want = shape(whole.__webmcpPerf)
  assert.equal(want.length, 2)
  assert.deepEqual(want.map((s) => [s.tool, s.depth, s.parent]), [["inner", 1, 0], ["outer", 0, null]])

  const { g, host, inserted } = runEager()
  await registerNested(host)
  // The browser's own agent runs the tool (no page executeTool): the first call asks for the rest, not here yet.
  await host.registry.get("outer").execute({})
  assert.equal(inserted.length, 1, "the first call fetched the rest at once")
  assert.equal(g.__webmcpPerf.spans().length, 0, "nothing accounted before the rest")
  assert.equal(FakeWebSocket.instances.length, 0)
  runRest(g, null)
  assert.equal(g.__webmcpPerf.status().phase, "loading", "a script the agent did not insert cannot hand in a rest")
  runRest(g, inserted[0])
  assert.deepEqual(shape(g.__webmcpPerf), want)
  assert.deepEqual(Object.keys(g.__webmcpPerf.ledger().tools).sort(), ["inner", "outer"])
  assert.equal(FakeWebSocket.instances.length, 1, "the uplink dials once the rest is here")
  assert.deepEqual(Array.from(FakeWebSocket.last().protocols), ["wmcp-top", `wmcp-top.token.${TOKEN}`])
})

test("the page's executeTool before the rest arrives goes to the host once the rest listens (a form's call is measured from the submit the host fires), at most 2 s later", async () => {
  const timers = []
  const { g, host, inserted } = runEager({ timers })
  await registerNested(host)
  let done = false
  const call = host.executeTool({ name: "outer" }, {}).then((r) => ((done = true), r))
  await new Promise((r) => setImmediate(r))
  assert.equal(inserted.length, 1, "the call asked for the rest at once")
  assert.equal(done, false, "and waits for it")
  assert.equal(host.registry.get("outer").calls || 0, 0)
  runRest(g, inserted[0])
  await call
  assert.deepEqual(shape(g.__webmcpPerf).map((s) => [s.tool, s.depth]), [["inner", 1], ["outer", 0]], "measured by the whole agent")
  // A rest that never comes holds a call no longer than the bound: the host runs it.
  const late = runEager({ timers })
  await registerNested(late.host)
  let ran = false
  const second = late.host.executeTool({ name: "outer" }, {}).then(() => (ran = true))
  await new Promise((r) => setImmediate(r))
  assert.equal(ran, false)
  for (const fn of timers.splice(0)) fn()
  await second
  assert.equal(ran, true)
})

test("beside a document registry, navigator is not read at load; a legacy registry there is patched once the rest is here", async () => {
  let reads = 0
  const legacy = legacyHost()
  const original = legacy.registerTool
  const { g, inserted } = runEager({
    prepare: (w) => {
      const nav = w.navigator
      nav.modelContext = legacy
      Object.defineProperty(w, "navigator", { get: () => (reads++, nav), configurable: true })
    },
  })
  assert.equal(reads, 0, "reading navigator builds its interface: not at load")
  assert.equal(legacy.registerTool, original)
  runIdle(g)
  runRest(g, inserted[0])
  assert.ok(reads > 0, "looked at with the rest")
  assert.notEqual(legacy.registerTool, original, "and its registry patched")
  legacy.registerTool({ name: "old", description: "d", execute: () => "ok" })
  await legacy.call("old", {})
  assert.deepEqual(JSON.parse(JSON.stringify(g.__webmcpPerf.spans().map((s) => s.tool))), ["old"], "its calls measured")
})

test("the eager part's patched registry methods are named as the host's and report to the buffer", async () => {
  const { g, host } = runEager()
  for (const m of ["registerTool", "unregisterTool", "executeTool"]) {
    if (typeof host[m] === "function") assert.equal(host[m].name, m, `${m} keeps its name`)
  }
  await host.registerTool({ name: "named", description: "d", execute: () => "ok" })
  assert.notEqual(host.registry.get("named").execute.toString(), '() => "ok"', "wrapped at registration")
  assert.equal(g.__webmcpPerf.status().phase, "loading")
})

test("the early buffer is bounded, and what it left out is counted in the status", async () => {
  const { g, host, inserted } = runEager()
  await host.registerTool({ name: "t", description: "d", execute: () => "ok" })
  for (let i = 0; i < 600; i++) await host.registry.get("t").execute({})
  runRest(g, inserted[0])
  const status = g.__webmcpPerf.status()
  assert.ok(status.reasons.some((r) => /88 call\(s\) or event\(s\) before the agent finished loading were not measured/.test(r)), status.reasons.join(" | "))
  assert.equal(g.__webmcpPerf.ledger().totals.calls, 512)
})

test("the extension's route: agent.js hooks at document_start, rest.js hands itself over at document_idle, and a call made between is measured in full", async () => {
  const host = new DraftHost()
  const g = fakeWindow({ host })
  const posted = []
  class Channel {
    port1 = { postMessage() {}, close() {}, onmessage: null }
    port2 = {}
  }
  Object.assign(g, { window: g, URL, MessageChannel: Channel, postMessage: (m) => posted.push(m), setTimeout: () => 1, clearTimeout() {}, setInterval: () => 1, clearInterval() {}, console: { info() {}, log() {} } })
  g.document.readyState = "loading" // document_start: the idle moment is not here yet
  vm.createContext(g)
  g.globalThis = g
  vm.runInContext(read("../extension/agent.js"), g)
  assert.equal(posted.length, 0, "no bridge handshake (no socket) at load")
  await registerNested(host)
  await host.registry.get("outer").execute({})
  assert.equal(g.__webmcpPerf.spans().length, 0)
  vm.runInContext(read("../extension/rest.js"), g)
  const facts = g.__webmcpPerf.spanFacts()
  assert.deepEqual(JSON.parse(JSON.stringify(g.__webmcpPerf.spans().map((s, i) => [s.tool, s.resultBytes > 300, facts[i].depth, facts[i].parent]))), [["inner", true, 1, 0], ["outer", true, 0, null]])
  assert.equal(posted.length, 1, "the uplink's socket (the bridge handshake) once the rest is here")
  assert.equal(read("../extension/rest.js"), read("agent-rest.js"), "one rest for every route that fetches it")
  // The extension's rest is handed over by its own content script: its eager part carries no loader of a URL.
  assert.ok(!read("../extension/agent.js").includes("agent-rest.js") && read("agent-eager.js").includes("agent-rest.js"))
})

test("at load the relay's tag leaves localStorage closed (it cannot change the gate's answer there); a remembered overlay applies with the rest", () => {
  let opened = 0
  const lines = []
  const prepare = (w) => {
    const storage = w.localStorage
    storage.setItem("webmcp-perf:mode", "overlay")
    Object.defineProperty(w, "localStorage", { get: () => (opened++, storage) })
    w.console = { info: (line) => lines.push(String(line)), log() {}, warn() {} }
  }
  const { g, inserted } = runEager({ prepare })
  assert.equal(opened, 0, "no storage opened at load")
  runIdle(g)
  runRest(g, inserted[0])
  assert.ok(opened > 0)
  assert.ok(lines.some((l) => l.includes("no in-page overlay")), lines.join(" | "))
  // With ?perf= in the URL the gate reads and writes storage at load, as before.
  opened = 0
  runEager({ prepare, search: "?perf=1" })
  assert.ok(opened > 0)
})
