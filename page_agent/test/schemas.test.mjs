// page/schemas.js alone: a registered tool's inputSchema from the registry ledger's descriptor text, parsed once.
import { test } from "node:test"
import assert from "node:assert/strict"
import { Schemas } from "../src/page/schemas.js"
import { Ledger } from "../src/page/ledger.js"

const desc = (schema) => JSON.stringify({ name: "t", inputSchema: schema })

test("the page's registered tools only; parsed again only when the descriptor changed", () => {
  const registry = new Ledger(0)
  const schemas = new Schemas(registry)
  registry.registered({ name: "t", schemaBytes: 1, descriptor: desc({ type: "object" }) }, 1)
  registry.registered({ name: "internal", schemaBytes: 1, descriptor: desc({ type: "object" }), internal: true }, 1)
  registry.registered({ name: "junk", schemaBytes: 1, descriptor: "{" }, 1)
  const first = schemas.of("t")
  assert.deepEqual(first, { type: "object" })
  assert.equal(schemas.of("t"), first, "the same text: the same parse")
  registry.registered({ name: "t", schemaBytes: 1, descriptor: desc({ type: "string" }) }, 2)
  assert.deepEqual(schemas.of("t"), { type: "string" }, "a redefinition is read again")
  assert.equal(schemas.of("internal"), undefined)
  assert.equal(schemas.of("junk"), undefined)
  assert.equal(schemas.of("unknown"), undefined)
  registry.unregistered("t", 3)
  assert.equal(schemas.of("t"), undefined, "withdrawn: no schema")
})

test("the cache is bounded", () => {
  const registry = new Ledger(0)
  const schemas = new Schemas(registry)
  for (let i = 0; i < 1100; i++) {
    registry.registered({ name: `t${i}`, schemaBytes: 1, descriptor: desc({ i }) }, 1)
    schemas.of(`t${i}`)
  }
  assert.equal(schemas.parsed.size, 1024)
  assert.deepEqual(schemas.of("t0"), { i: 0 }, "an evicted one is parsed again")
})
