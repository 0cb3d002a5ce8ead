// utf8Length: UTF-8 bytes of any string, the long ones through TextEncoder.encodeInto into a scratch buffer of
// up to 1 MiB (longer strings in 1 MiB rounds).
// Node's own Buffer.byteLength (lone surrogates as U+FFFD, 3 bytes) is the reference.
import { test } from "node:test"
import assert from "node:assert/strict"
import { utf8Length } from "../src/shared/util.js"
import { resultFacts, jsonStringBytes } from "../src/page/measure.js"

const PIECES = ["a", "\"", "é", "€", "😀", "\ud800", "\udc00", "\n", "\u0000"]
const ESCAPES = ['"', "\\", "\b", "\f", "\n", "\r", "\t", "\u0000", "\u0007", "\u000b", "\u000e", "\u001f", "\u007f", "é", "€", "😀", "\ud800", "\udc00", "\udbff\udfff", "/", "<"]

/** A seeded string of at least `len` units: runs of `filler` (`plain` of the time), else one of `pieces`. */
function seeded(len, seed, { filler, plain, pieces }) {
  let x = seed
  const rnd = () => ((x = (x * 1103515245 + 12345) >>> 0) / 2 ** 32)
  let s = ""
  while (s.length < len) s += rnd() < plain ? filler.repeat(1 + Math.floor(rnd() * 200)) : pieces[Math.floor(rnd() * pieces.length)]
  return s
}

const sample = (len, seed) => seeded(len, seed, { filler: "x", plain: 0.9, pieces: PIECES })
const text = (len, seed) => seeded(len, seed, { filler: "lorem ipsum ", plain: 0.8, pieces: ESCAPES })

test("every length, short and long, counts what Buffer.byteLength counts", () => {
  for (const len of [0, 1, 4095, 4096, 4097, 65535, 65536, 65537, 131072, 200003, 349525, 349526, 1200007]) {
    for (let seed = 1; seed <= 3; seed++) {
      const s = sample(len, seed * 7919 + len)
      assert.equal(utf8Length(s), Buffer.byteLength(s, "utf8"), `length ${s.length}, seed ${seed}`)
    }
  }
})

test("a character of any width straddling a 1 MiB round is counted once, whole", () => {
  const MiB = 1024 * 1024
  for (const c of ["é", "€", "😀", "\ud800", "\udc00"]) {
    for (let pad = MiB - 6; pad <= MiB; pad++) {
      const s = "x".repeat(pad) + c + "y".repeat(5000)
      assert.equal(utf8Length(s), Buffer.byteLength(s, "utf8"), `${JSON.stringify(c)} after ${pad}`)
    }
  }
})

test("a page that broke TextEncoder still gets exact sizes", async () => {
  const saved = globalThis.TextEncoder
  globalThis.TextEncoder = class { encodeInto() { throw new Error("broken by the page") } }
  try {
    const { utf8Length: fresh } = await import("../src/shared/util.js?broken-encoder") // a module instance of its own
    const s = "é".repeat(10000)
    assert.equal(fresh(s), 20000)
  } finally {
    globalThis.TextEncoder = saved
  }
})

// ---- an MCP envelope's long texts are sized in place (measure.js) -------------------------------------

test("an envelope with long texts: the bytes JSON.stringify would give, every escape class, lone and paired surrogates", () => {
  for (const len of [4095, 4096, 5000, 70000, 131072]) {
    for (let seed = 1; seed <= 4; seed++) {
      const a = text(len, seed * 31 + len)
      const b = text(len / 2, seed * 17 + len)
      const env = { content: [{ type: "text", text: a }, { type: "text", text: "short \"one\"\n" }, { type: "resource", resource: { uri: "x:/" + b.slice(0, 10), text: b } }], isError: false, structuredContent: { big: a, n: 1.5, u: undefined } }
      assert.equal(resultFacts(env).resultBytes, Buffer.byteLength(JSON.stringify(env), "utf8"), `length ${len}, seed ${seed}`)
      assert.equal(jsonStringBytes(a), Buffer.byteLength(JSON.stringify(a), "utf8"))
    }
  }
})

test("a long text made only of escapes, and a lone surrogate at either end", () => {
  for (const s of ["\n".repeat(5000), "\u0001".repeat(5000), "\ud800" + "x".repeat(5000), "x".repeat(5000) + "\udc00", "\udc00\ud800".repeat(3000)]) {
    assert.equal(jsonStringBytes(s), Buffer.byteLength(JSON.stringify(s), "utf8"))
    const env = { content: [{ type: "text", text: s }] }
    assert.equal(resultFacts(env).resultBytes, Buffer.byteLength(JSON.stringify(env), "utf8"))
  }
})

test("a page that patches String.prototype.indexOf later changes no count", () => {
  const s = text(70000, 5)
  const want = Buffer.byteLength(JSON.stringify(s), "utf8")
  const real = String.prototype.indexOf
  String.prototype.indexOf = () => -1
  try {
    assert.equal(jsonStringBytes(s), want)
  } finally {
    String.prototype.indexOf = real
  }
})

test("an envelope whose toJSON or getter throws is unserializable, as before", () => {
  const env = { content: [{ type: "text", text: "x".repeat(5000) }], get boom() { throw new Error("no") } }
  assert.equal(resultFacts(env).serializable, false)
  const cyc = { content: [{ type: "text", text: "x".repeat(5000) }] }
  cyc.self = cyc
  assert.equal(resultFacts(cyc).serializable, false)
})

test("a short envelope (JSON.stringify's own path) that throws or cycles is unserializable too", () => {
  const env = { content: [{ type: "text", text: "short" }], get boom() { throw new Error("no") } }
  assert.equal(resultFacts(env).serializable, false)
  const cyc = { content: [{ type: "text", text: "short" }] }
  cyc.self = cyc
  assert.equal(resultFacts(cyc).serializable, false)
  const item = { type: "text" }
  Object.defineProperty(item, "text", { get() { throw new Error("no") }, enumerable: true })
  assert.equal(resultFacts({ content: [item] }).serializable, false)
  // and sized exactly as the host writes it, a long string outside content included
  const mixed = { content: [{ type: "text", text: 'a "quoted" line\n' }, null, 3], structuredContent: { blob: "é".repeat(5000) } }
  assert.equal(resultFacts(mixed).resultBytes, Buffer.byteLength(JSON.stringify(mixed)))
})

test("the scratch buffer grows to fit a long string, never past 1 MiB, however long the string", async () => {
  const Saved = globalThis.Uint8Array
  const sizes = []
  globalThis.Uint8Array = class extends Saved {
    constructor(n) {
      super(n)
      if (typeof n === "number") sizes.push(n)
    }
  }
  try {
    const { utf8Length: fresh } = await import("../src/shared/util.js?scratch-bound") // a module instance of its own
    const cjk = "漢".repeat(100000) // 300,000 bytes: one 512 KiB buffer holds it whole
    assert.equal(fresh(cjk), 300000)
    const huge = "é".repeat(3_000_000) // 6 MB: counted a megabyte at a time
    assert.equal(fresh(huge), 6_000_000)
    assert.deepEqual(sizes, [512 * 1024, 1024 * 1024])
  } finally {
    globalThis.Uint8Array = Saved
  }
})
