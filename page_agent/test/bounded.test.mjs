// Bounded in the page (issue 47, item 5): registries the page swapped out are collectable, a result is read
// exactly twice (the host's read and one measurement), and a re-registration under a new AbortSignal keeps being
// measured when the old signal aborts.
import { test } from "node:test"
import assert from "node:assert/strict"
import v8 from "node:v8"
import vm from "node:vm"
import { setup, settle, DraftHost, FakeWebSocket } from "../test-support/helpers.mjs"
import { agentOf } from "../src/page/index.js"

v8.setFlagsFromString("--expose-gc")
const gc = vm.runInNewContext("gc")

const tool = (name, extra = {}) => ({ name, description: `${name} tool`, execute: () => `${name}!`, ...extra })

/** Collect until `done()` holds: finalizers run on later turns, after a collection. */
async function collectUntil(done) {
  for (let i = 0; i < 50 && !done(); i++) {
    gc()
    await new Promise((r) => setTimeout(r, 0))
  }
}

test("a registry the page swapped out is collectable: the agent holds hosts weakly", async () => {
  const { api, g } = setup({ host: null })
  const interceptor = agentOf(api).interceptor
  const collected = new Set()
  const finalizers = new FinalizationRegistry((i) => collected.add(i))
  const SWAPS = 12
  // In a function of its own, so no frame of this test keeps the last one alive.
  const swapIn = async (i) => {
    const host = new DraftHost()
    host.ballast = new Array(100_000).fill(i) // about 1 MB, as the page in issue 47 swaps
    finalizers.register(host, i)
    g.document.modelContext = host // what a page's package does (the traps see it in a browser; here the sweep)
    interceptor.sweep()
    await host.registerTool(tool("search"))
    await settle()
  }
  for (let i = 0; i < SWAPS; i++) await swapIn(i)
  g.document.modelContext = new DraftHost()
  interceptor.sweep()
  await settle()
  // The first document registry is the declarative tools' (forms.js keeps the one it attached to); every later
  // one swapped out is free to go.
  await collectUntil(() => collected.size >= SWAPS - 1)
  assert.deepEqual([...collected].sort((a, b) => a - b), Array.from({ length: SWAPS - 1 }, (_, i) => i + 1))
  api.detach()
})

/** A result that counts its reads: toJSON for an object the host serialises, a getter for one it walks. */
function counted() {
  const reads = { toJSON: 0, getter: 0 }
  const withToJSON = { toJSON: () => (reads.toJSON++, { rows: [1, 2, 3], note: "x".repeat(300) }) }
  const withGetter = {
    get rows() {
      reads.getter++
      return [{ id: 1, text: "y".repeat(300) }]
    },
  }
  return { reads, withToJSON, withGetter }
}

test("a result is read exactly twice: the host's read and one measurement (sizes and facts share it)", async () => {
  const { api, env, host } = setup({ config: { WebSocket: FakeWebSocket, uplink: "ws://127.0.0.1:1/relay" } })
  const { reads, withToJSON, withGetter } = counted()
  await host.registerTool(tool("a", { execute: () => withToJSON }))
  await host.registerTool(tool("b", { execute: () => withGetter }))
  await settle()
  env.run()
  await host.executeTool({ name: "a" }, {}) // the host's read: one JSON.stringify
  await host.executeTool({ name: "b" }, {})
  await settle()
  env.run() // accounting: the measurement
  env.advance(60) // the diagnosis facts' idle callback
  env.run()
  assert.equal(api.spans().length, 2)
  assert.ok(api.spans().every((s) => s.resultBytes > 300))
  assert.deepEqual(reads, { toJSON: 2, getter: 2 })
  api.detach()
})

/** A host that lets a name be registered again, replacing the first (webmcp-profiler's fake host does). */
class ReplacingHost extends DraftHost {
  registerTool(t, options = {}) {
    this.registry.delete(t.name)
    return super.registerTool(t, options)
  }
}

test("re-registered under a new AbortSignal, then the old signal aborts: the live tool is still measured", async () => {
  const host = new ReplacingHost()
  const { api, env } = setup({ host })
  const search = tool("search")
  const first = new AbortController()
  const second = new AbortController()
  await host.registerTool(search, { signal: first.signal })
  await host.registerTool(search, { signal: second.signal })
  await settle()
  first.abort() // the first registration's signal: the host keeps the second one
  await settle()
  assert.deepEqual((await host.getTools()).map((t) => t.name), ["search"])
  await host.executeTool({ name: "search" }, {})
  await settle()
  env.run()
  assert.deepEqual(api.spans().map((s) => s.tool), ["search"], "the call is measured")
  assert.ok(api.ledger().registeredTools.includes("search"))
  second.abort() // the live registration's own signal withdraws it
  await settle()
  env.run()
  assert.ok(!api.ledger().registeredTools.includes("search"))
  assert.equal(search.execute(), "search!", "the page's own execute is back")
  api.detach()
})
