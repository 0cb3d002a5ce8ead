// Diagnosis facts (src/page/facts.js, bloat.js, schema_check.js): the shared vectors (tests/vectors/facts/), the
// whitespace figure against the real fix (compact the same text with JSON.stringify), repeats through a keyed
// hash, and the `facts` frame on the wire: after its span, at most one per span, batched, no body in it.
import { test } from "node:test"
import assert from "node:assert/strict"
import { readFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { connectedAgent, settle, utf8, CANARY, unwatchedCalls } from "../test-support/helpers.mjs"
import { bloatOf, BLOAT_MAX_CHARS } from "../src/page/bloat.js"
import { checkInput } from "../src/page/schema_check.js"
import { canonical, keyedHash, textsOf, FactsTaker, MAX_QUEUED, BLOAT_ALWAYS_CHARS, BLOAT_EVERY_MS, BLOAT_SHORT_PER_WINDOW } from "../src/page/facts.js"
import { sniffMime, largestImage } from "../src/page/images.js"

const VECTORS = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "tests", "vectors", "facts")
const load = (name) => JSON.parse(readFileSync(join(VECTORS, name), "utf8"))

const textOf = (v) => (v.build ? v.build.prefix + v.build.repeat.repeat(v.build.times) + v.build.suffix : v.text)

for (const v of load("bloat.json")) {
  test(`bloat vector: ${v.name}`, () => {
    assert.deepEqual(bloatOf(textOf(v)), v.expect)
  })
}

for (const v of load("schema.json")) {
  test(`schema vector: ${v.name}`, () => {
    assert.deepEqual(checkInput(v.schema, v.inputUndefined ? undefined : v.input), v.expect)
  })
}

test("the vectors cover every keyword the contract names", () => {
  const named = new Set(load("schema.json").map((v) => v.expect && v.expect.constraint).filter(Boolean))
  for (const k of ["type", "required", "enum", "minimum", "maximum", "minLength", "maxLength", "pattern", "additionalProperties", "const", "minItems", "maxItems", "format"]) {
    assert.ok(named.has(k), `no vector names ${k}`)
  }
})

test("whitespace is exactly what compaction saves, for documents of every indentation", () => {
  const docs = [
    [{ id: 1, tags: ["a", "b c"], nested: { deep: [1, 2, { x: null }] } }],
    { rows: Array.from({ length: 40 }, (_, i) => ({ id: i, name: `név ${i}`, ok: i % 2 === 0, price: i / 7 })) },
    { text: "spaces   inside\nstrings\tstay", emoji: "😀", empty: {}, list: [] },
  ]
  for (const doc of docs) {
    for (const indent of [0, 1, 2, 4, "\t"]) {
      const pretty = JSON.stringify(doc, null, indent)
      const fixed = JSON.stringify(JSON.parse(pretty))
      const b = bloatOf(pretty)
      assert.equal(b.textBytes, utf8(pretty))
      assert.equal(b.whitespaceBytes, utf8(pretty) - utf8(fixed), `indent ${JSON.stringify(indent)}`)
    }
  }
})

test("repeated keys are what a columnar rewrite of the rows drops", () => {
  const rows = Array.from({ length: 25 }, (_, i) => ({ id: i, title: `t${i}`, price: i * 2 }))
  const text = JSON.stringify(rows)
  // the real fix: keys once, then the values of each row
  const columnar = JSON.stringify({ keys: Object.keys(rows[0]), rows: rows.map((r) => Object.values(r)) })
  const b = bloatOf(text)
  assert.equal(b.repeatedKeyRows, 24)
  assert.equal(b.repeatedKeyBytes, 24 * utf8('"id":"title":"price":'))
  // what the rewrite saves is the repeated keys less its own framing (one key list, brackets per row)
  const framing = utf8(columnar) - (utf8(text) - b.repeatedKeyBytes)
  assert.ok(framing > 0 && framing < 80, `framing ${framing}`)
})

test("the cap: at most BLOAT_MAX_CHARS examined, truncated said", () => {
  const b = bloatOf(" ".repeat(BLOAT_MAX_CHARS + 10))
  assert.equal(b.truncated, true)
  assert.equal(b.textBytes, BLOAT_MAX_CHARS)
})

test("texts examined: an envelope's text items, a string as itself, an object as its JSON", () => {
  const env = { content: [{ type: "text", text: "[1, 2]" }, { type: "image", data: "AAAA", mimeType: "image/png" }, { type: "text", text: "{}" }] }
  assert.deepEqual(textsOf(env, "chromium"), ["[1, 2]", "{}"])
  assert.deepEqual(textsOf(JSON.stringify(env), "chromium"), ["[1, 2]", "{}"])
  assert.deepEqual(textsOf({ a: [1, 2] }, "chromium"), ['{"a":[1,2]}'])
  assert.deepEqual(textsOf("plain", "chromium"), ["plain"])
  assert.equal(textsOf(undefined, "chromium"), null)
  assert.equal(textsOf(42, "chromium"), null)
})

test("canonical input: key order does not matter, values do", () => {
  assert.equal(canonical({ b: 1, a: { d: [1, { y: 2, x: 1 }], c: "s" } }), canonical({ a: { c: "s", d: [1, { x: 1, y: 2 }] }, b: 1 }))
  assert.notEqual(canonical({ a: 1 }), canonical({ a: "1" }))
  assert.equal(canonical(undefined), "{}")
  const cyclic = {}
  cyclic.self = cyclic
  assert.equal(canonical(cyclic), null)
  const key = new Uint32Array([1, 2, 3, 4])
  const other = new Uint32Array([5, 6, 7, 8])
  assert.equal(keyedHash("abc", key), keyedHash("abc", key))
  assert.notEqual(keyedHash("abc", key), keyedHash("abd", key))
  assert.notEqual(keyedHash("abc", key), keyedHash("abc", other))
})

test("images: format from the bytes, the largest image", () => {
  assert.equal(sniffMime(new Uint8Array([0x89, 0x50, 0x4e, 0x47, 13, 10])), "image/png")
  assert.equal(sniffMime(new Uint8Array([0xff, 0xd8, 0xff, 0xe0])), "image/jpeg")
  assert.equal(sniffMime(new Uint8Array([1, 2, 3, 4])), "image/unknown")
  const env = { content: [{ type: "image", data: "AA" }, { type: "image", data: "AAAAAA" }, { type: "text", text: "x" }] }
  assert.equal(largestImage(env), "AAAAAA")
  assert.equal(largestImage(JSON.stringify(env)), "AAAAAA")
  assert.equal(largestImage({ a: 1 }), null)
})

test("the taker holds at most MAX_QUEUED calls and counts the rest", () => {
  const sent = []
  const timers = []
  const t = new FactsTaker({ global: {}, send: (seq, f) => sent.push([seq, f]), schemaOf: () => undefined, setTimeout: (fn) => timers.push(fn) })
  for (let i = 0; i < MAX_QUEUED + 5; i++) t.take({ seq: i, tool: "t", input: { i }, value: "x", ok: true, profile: "chromium", refused: false })
  assert.equal(timers.length, 1, "one idle callback for the batch")
  assert.equal(t.cost.dropped, 5)
  timers[0]()
  assert.equal(t.cost.calls, MAX_QUEUED, "every call held is measured")
  assert.ok(sent.length > 0 && sent.every(([seq]) => seq < MAX_QUEUED))
})

async function calledTwice() {
  const ctx = await connectedAgent()
  await ctx.host.registerTool({
    name: "search",
    description: "search",
    inputSchema: { type: "object", properties: { q: { type: "string", maxLength: 8 } }, required: ["q"], additionalProperties: false },
    execute: async () => ({ content: [{ type: "text", text: JSON.stringify([{ id: 1, name: CANARY }, { id: 2, name: CANARY }], null, 2) }] }),
  })
  await settle()
  ctx.env.run()
  for (const input of [{ q: CANARY }, { q: CANARY }, { q: "ok" }]) {
    ctx.env.tick(5)
    await ctx.host.executeTool({ name: "search" }, input)
    await settle()
  }
  ctx.env.run()
  return ctx
}

test("facts leave after their span, one per span, batched, with no body", async () => {
  const ctx = await calledTwice()
  assert.equal(ctx.ws.frames("facts").length, 0, "nothing before the idle callback")
  ctx.env.advance(60) // the idle callback's stand-in
  ctx.env.run()
  const frames = ctx.ws.frames("facts")
  assert.equal(frames.length, 1, "one batched frame")
  const [f] = frames
  assert.equal(f.session, ctx.id)
  assert.deepEqual(f.items.map((i) => i.seq), [0, 1, 2])
  const text = JSON.stringify([{ id: 1, name: CANARY }, { id: 2, name: CANARY }], null, 2)
  const bloat = f.items[0].facts.bloat
  assert.equal(bloat.textBytes, utf8(text))
  assert.equal(bloat.whitespaceBytes, utf8(text) - utf8(JSON.stringify(JSON.parse(text))))
  assert.equal(bloat.repeatedKeyRows, 1)
  assert.equal(bloat.repeatedKeyBytes, utf8('"id":"name":'))
  // the canary input is longer than maxLength 8: one constraint broken, named by its place in the schema
  assert.deepEqual(f.items[0].facts.schema, { violations: 1, constraint: "maxLength", path: "/properties/q/maxLength" })
  assert.deepEqual(f.items[2].facts.schema, { violations: 0 })
  assert.deepEqual(f.items[1].facts.repeat, { of: 0 })
  assert.equal(f.items[0].facts.repeat, undefined)
  assert.equal(f.items[2].facts.repeat, undefined)
  // after the spans, on the wire
  const order = ctx.ws.sent.map((x) => x.type)
  assert.ok(order.lastIndexOf("spans") < order.indexOf("facts"))
  assert.ok(!JSON.stringify(ctx.ws.sent).includes(CANARY), "no body on the socket")
  ctx.api.detach()
})

test("facts ready when a batch leaves ride on its spans frame: one send, not two", async () => {
  const { ctx, before } = await unwatchedCalls()
  assert.equal(ctx.ws.sent.length, before, "nothing left before the interval")
  ctx.env.advance(1000)
  ctx.env.run()
  const after = ctx.ws.sent.slice(before)
  assert.deepEqual(after.filter((f) => f.type === "facts"), [], "no facts frame of its own")
  const [frame] = after.filter((f) => f.type === "spans")
  assert.deepEqual(frame.spans.map((x) => x.seq), [0, 1, 2])
  assert.deepEqual(frame.facts.map((x) => x.seq), [0, 1, 2])
  assert.deepEqual(Object.keys(frame.facts[0]).sort(), ["facts", "seq"])
  assert.deepEqual(frame.facts[0].facts.bloat.textBytes, 5)
  ctx.api.detach()
})

test("a single fact goes as {seq, facts}; facts without a span yet wait for it", async () => {
  const ctx = await connectedAgent()
  await ctx.host.registerTool({ name: "t", description: "t", inputSchema: { type: "object" }, execute: () => "plain" })
  await settle()
  ctx.env.run()
  await ctx.host.executeTool({ name: "t" }, {})
  await settle()
  ctx.env.run()
  ctx.env.advance(60)
  ctx.env.run()
  const [f] = ctx.ws.frames("facts")
  assert.equal(f.seq, 0)
  assert.deepEqual(Object.keys(f).sort(), ["facts", "seq", "session", "type"])
  assert.deepEqual(f.facts.bloat, { textBytes: 5, whitespaceBytes: 0, repeatedKeyBytes: 0, repeatedKeyRows: 0, base64Bytes: 0, base64Runs: 0 })
  ctx.api.detach()
})

test("facts: false turns them off", async () => {
  const ctx = await connectedAgent({ config: { facts: false } })
  await ctx.host.registerTool({ name: "t", description: "t", inputSchema: { type: "object" }, execute: () => "x" })
  await settle()
  ctx.env.run()
  await ctx.host.executeTool({ name: "t" }, {})
  await settle()
  ctx.env.run()
  ctx.env.advance(60)
  ctx.env.run()
  assert.equal(ctx.ws.frames("facts").length, 0)
  assert.equal(ctx.ws.frames("spans").flatMap((f) => f.spans).length, 1)
  ctx.api.detach()
})

test("after a reset, repeats count afresh (the relay dropped the facts with the spans)", async () => {
  const ctx = await connectedAgent()
  await ctx.host.registerTool({ name: "t", description: "t", inputSchema: { type: "object" }, execute: () => "x" })
  await settle()
  ctx.env.run()
  const call = async () => {
    await ctx.host.executeTool({ name: "t" }, { a: 1 })
    await settle()
    ctx.env.run()
    ctx.env.advance(60)
    ctx.env.run()
  }
  await call()
  await call()
  ctx.api.reset()
  ctx.env.run()
  await call()
  const bySeq = new Map()
  for (const f of ctx.ws.frames("facts")) for (const i of f.items || [{ seq: f.seq, facts: f.facts }]) bySeq.set(i.seq, i.facts)
  assert.deepEqual(bySeq.get(1).repeat, { of: 0 })
  assert.equal(bySeq.get(2).repeat, undefined)
  ctx.api.detach()
})

test("a long result is measured for bloat once a tool a second; short ones on every call at an agent's pace", () => {
  let now = 0
  const sent = []
  const taker = new FactsTaker({ global: {}, send: (seq, facts) => sent.push([seq, facts]), schemaOf: () => undefined, clock: () => now, setTimeout: (fn) => fn() })
  const text = JSON.stringify(Array.from({ length: 800 }, (_, i) => ({ id: i, name: `item ${i}` })), null, 2)
  assert.ok(text.length > BLOAT_ALWAYS_CHARS)
  const long = { content: [{ type: "text", text }] }
  const short = { content: [{ type: "text", text: "a  b" }] }
  const call = (seq, tool, value) => {
    taker.take({ seq, tool, input: { n: seq }, value, ok: true, profile: "chromium", refused: false })
    taker.run()
  }
  call(0, "big", long)
  now = 10
  call(1, "big", long)
  call(2, "other", long) // another tool: its own interval
  call(3, "small", short)
  call(4, "small", short)
  now = 10 + BLOAT_EVERY_MS
  call(5, "big", long)
  const bloated = sent.filter(([, f]) => f.bloat).map(([seq]) => seq)
  assert.deepEqual(bloated, [0, 2, 3, 4, 5])
  assert.equal(taker.cost.bloatSkipped, 1)
  const measured = sent.find(([seq]) => seq === 0)[1].bloat
  assert.equal(measured.textBytes, utf8(text), "the sampled call is measured whole")
  assert.equal(measured.whitespaceBytes, utf8(text) - utf8(JSON.stringify(JSON.parse(text))))
})

test("a page calling a tool back to back: its short results are measured for bloat on the first calls of each second", () => {
  let now = 0
  const sent = []
  const taker = new FactsTaker({ global: {}, send: (seq, facts) => sent.push([seq, facts]), schemaOf: () => undefined, clock: () => now, setTimeout: (fn) => fn() })
  const short = { content: [{ type: "text", text: "a  b" }] }
  let seq = 0
  const burst = (tool, n) => {
    for (let i = 0; i < n; i++) {
      taker.take({ seq: seq++, tool, input: { q: 1 }, value: short, ok: true, profile: "chromium", refused: false })
      taker.run()
      now += 1
    }
  }
  burst("fast", 3 * BLOAT_SHORT_PER_WINDOW) // within one window
  burst("other", 2) // another tool: its own window
  const bloated = () => sent.filter(([, f]) => f.bloat && f.bloat.textBytes === 4).length
  assert.equal(bloated(), BLOAT_SHORT_PER_WINDOW + 2)
  assert.equal(taker.cost.bloatSkipped, 2 * BLOAT_SHORT_PER_WINDOW)
  assert.equal(sent.length, 3 * BLOAT_SHORT_PER_WINDOW + 2, "every call still has its facts (here, a repeat)")
  now += BLOAT_EVERY_MS
  burst("fast", 1)
  assert.ok(sent[sent.length - 1][1].bloat, "a new window measures again")
  taker.reset()
  assert.equal(taker.shortBloat.size, 0)
})
