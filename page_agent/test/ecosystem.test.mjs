// Issue 30's pure parts: the CallToolResult an MCP client receives through @mcp-b/global (mcp_result.js), and
// the define traps that see a registry installed late (traps.js), in a realm of their own (node:vm) so the
// test process's own Object is never touched.
import { test } from "node:test"
import assert from "node:assert/strict"
import vm from "node:vm"
import { mcpResult, mcpErrorResult } from "../src/page/mcp_result.js"
import { resultFacts, errorResultFacts } from "../src/page/measure.js"
import { watchRegistries, isNativeFunction } from "../src/page/traps.js"

const bytes = (v) => Buffer.byteLength(JSON.stringify(v), "utf8")

test("an MCP client gets an envelope as is, any other value wrapped, a throw as an isError result", () => {
  const env = { content: [{ type: "text", text: "hé" }], structuredContent: { a: 1 } }
  assert.equal(mcpResult(env), env)
  assert.deepEqual(mcpResult("plain"), { content: [{ type: "text", text: "plain" }], structuredContent: "plain", isError: false })
  assert.deepEqual(mcpResult({ n: 2 }), { content: [{ type: "text", text: '{"n":2}' }], structuredContent: { n: 2 }, isError: false })
  assert.deepEqual(mcpResult(Number.NaN), { content: [{ type: "text", text: "null" }], isError: false }, "NaN is no JSON value: no structuredContent")
  const cyc = {}
  cyc.self = cyc
  assert.deepEqual(mcpResult(cyc), { content: [{ type: "text", text: "[object Object]" }], isError: false })
  assert.deepEqual(mcpErrorResult(new Error("boom")), { content: [{ type: "text", text: "boom" }], isError: true })
  assert.deepEqual(mcpErrorResult("raw"), { content: [{ type: "text", text: "raw" }], isError: true })
})

test("resultBytes under the mcp profile are the bytes of what the client received", () => {
  assert.equal(resultFacts({ rows: [1, 2] }, "mcp").resultBytes, bytes(mcpResult({ rows: [1, 2] })))
  assert.equal(resultFacts("x", "mcp").resultBytes, bytes(mcpResult("x")))
  const f = errorResultFacts(new Error("boom: this tool always fails on purpose"), "mcp")
  assert.equal(f.resultBytes, 93)
  assert.equal(f.isError, true)
  assert.equal(errorResultFacts(new Error("x"), "chromium"), null, "a native caller gets an exception: no bytes")
})

function realm() {
  const g = vm.runInNewContext("this")
  vm.runInContext("this.document = {}; this.navigator = {}; function Document() {}; function Navigator() {}; this.Document = Document; this.Navigator = Navigator", vm.createContext(g))
  return g
}

test("a define of modelContext on a watched object tells synchronously; others do not; restore puts back the engine's", () => {
  const g = realm()
  const native = g.Object.defineProperty
  let told = 0
  const restore = watchRegistries(g, () => told++)
  assert.notEqual(g.Object.defineProperty, native)
  assert.equal(g.Object.defineProperty.name, "defineProperty")
  assert.equal(g.Object.defineProperty.length, 3)
  const r = g.Object.defineProperty(g.document, "modelContext", { value: 1, configurable: true })
  assert.equal(r, g.document, "the define's own result")
  assert.equal(told, 1)
  g.Object.defineProperty({}, "modelContext", { value: 1 })
  g.Object.defineProperty(g.document, "other", { value: 1 })
  assert.equal(told, 1, "an unwatched object or another key tells nothing")
  g.Reflect.defineProperty(g.Document.prototype, "modelContext", { get() {}, configurable: true })
  g.Object.defineProperties(g.navigator, { modelContext: { value: 2, configurable: true } })
  g.Object.defineProperty(g, "LanguageModel", { value: {}, configurable: true })
  assert.equal(told, 4)
  g.modelContext = { registry: true }
  assert.equal(told, 5, "window.modelContext = registry goes through the setter")
  assert.deepEqual(g.modelContext, { registry: true })
  assert.throws(() => g.Object.defineProperty(1, "x", {}), { name: "TypeError" }, "a define that throws throws the same")
  restore()
  assert.equal(g.Object.defineProperty, native)
  assert.deepEqual(g.modelContext, { registry: true }, "the page's registry stays where it put it")
  assert.equal(isNativeFunction(native), true)
  assert.equal(isNativeFunction(() => 1), false)
})

test("no accessor is added to document or navigator: feature detection keeps answering false", () => {
  const g = realm()
  const restore = watchRegistries(g, () => {})
  assert.equal("modelContext" in g.document, false)
  assert.equal("modelContext" in g.navigator, false)
  restore()
  assert.equal("modelContext" in g, false)
})
