// accounting.js alone: a settled call in, its span out, with no collector, no clock and no socket around it.
import { test } from "node:test"
import assert from "node:assert/strict"
import { spanOf, payloadOf, estimatorOf, tokensThrough } from "../src/page/accounting.js"

/** A settled call as the collector hands it over (bodies still on it). */
function call(over = {}) {
  return {
    seq: 4,
    tool: "search",
    invokedAt: 100,
    settledAt: 112.5,
    gap: 30,
    overlapped: false,
    depth: 1,
    parent: 3,
    blocking: 2,
    span: null,
    input: { q: "héllo" },
    ok: true,
    value: { content: [{ type: "text", text: "abcdefgh" }] },
    synthetic: false,
    profile: "chromium",
    consent: null,
    terminal: false,
    ...over,
  }
}

const O = { sessionId: "abcdef01", errorPolicy: "message" }

test("a resolved call's span: times, bytes, tokens, nesting and gap from the call, the session from the inputs", () => {
  const { span, failed } = spanOf(call(), O)
  const resultText = JSON.stringify({ content: [{ type: "text", text: "abcdefgh" }] })
  assert.deepEqual(failed, [])
  assert.equal(span.sessionId, "abcdef01")
  assert.equal(span.seq, 4)
  assert.equal(span.wallMs, 12.5)
  assert.equal(span.blockingMs, 2)
  assert.equal(span.inputBytes, Buffer.byteLength(JSON.stringify({ q: "héllo" })), "UTF-8 bytes, not UTF-16 units")
  assert.equal(span.resultBytes, Buffer.byteLength(resultText))
  assert.deepEqual(span.contentTypes, { text: 1 })
  assert.equal(span.estInputTokens, Math.ceil(span.inputBytes / 4))
  assert.equal(span.estTextTokens, Math.ceil(span.resultBytes / 4))
  assert.equal(span.estTokens, span.estInputTokens + span.estTextTokens)
  assert.equal(span.envelope, true)
  assert.equal(span.isError, false)
  assert.equal(span.error, null)
  assert.equal(span.gapSincePrevCallMs, 30)
  assert.deepEqual([span.depth, span.parent], [1, 3])
  assert.equal("invokedBy" in span, false)
  assert.equal("waitedMs" in span, false)
})

test("pure: the call is not changed, the same call gives the same span, and no clock is read", () => {
  const c = call()
  const before = structuredClone(c)
  const realNow = performance.now
  const realDate = Date.now
  performance.now = () => assert.fail("accounting read performance.now()")
  Date.now = () => assert.fail("accounting read Date.now()")
  let a, b
  try {
    a = spanOf(c, O)
    b = spanOf(c, O)
  } finally {
    performance.now = realNow
    Date.now = realDate
  }
  assert.deepEqual(a, b)
  assert.deepEqual(c, before, "bodies and fields stay on the call: dropping them is the collector's")
})

test("a throw: an error span with the error per policy, and the host's error result bytes", () => {
  const err = new RangeError("out of range")
  const thrown = call({ ok: false, value: err })
  const msg = spanOf(thrown, O).span
  assert.equal(msg.isError, true)
  assert.equal(msg.error, "out of range")
  assert.equal(msg.errorType, "RangeError")
  assert.equal(spanOf(thrown, { ...O, errorPolicy: "name" }).span.error, "RangeError")
  const none = spanOf(thrown, { ...O, errorPolicy: "none" }).span
  assert.equal(none.error, null)
  assert.equal(none.errorType, null, "errorPolicy none keeps the error's name off the span too")
})

test("a function's thrown error (a wire call answered later) names the span's error over the answer", () => {
  const { span } = spanOf(call({ fnError: new TypeError("bad input") }), O)
  assert.deepEqual([span.isError, span.error, span.errorType], [true, "bad input", "TypeError"])
})

test("an unserialisable result is an error with the host's TypeError text", () => {
  const cyclic = {}
  cyclic.self = cyclic
  const { span } = spanOf(call({ value: cyclic }), O)
  assert.equal(span.serializable, false)
  assert.equal(span.isError, true)
  assert.equal(span.error, "result could not be serialised to JSON")
})

test("the page's hooks: isErrorResult flags a value, isRefusal labels it; a throwing hook is handed back, not thrown", () => {
  const flagged = spanOf(call(), { ...O, isErrorResult: () => true, isRefusal: () => "needs_login" }).span
  assert.deepEqual([flagged.isError, flagged.errorType, flagged.refusal], [true, "tool_error", "needs_login"])
  const boom = new Error("hook broke")
  const r = spanOf(call(), { ...O, isErrorResult: () => { throw boom }, isRefusal: () => { throw boom } })
  assert.deepEqual(r.failed, [["isErrorResult", boom], ["isRefusal", boom]], "both failures, in the order the hooks ran")
  assert.equal(r.span.isError, false, "a throwing hook counts as no hook")
  assert.equal(r.span.refusal, null)
})

test("without isRefusal, the built-in English match labels a refusal", () => {
  const value = { content: [{ type: "text", text: "The purchase was not confirmed." }] }
  assert.equal(spanOf(call({ value }), O).span.refusal, "confirm")
})

test("a form call that navigated, one that waited, and the terminal's call", () => {
  const nav = spanOf(call({ outcome: "navigated", value: undefined }), O).span
  assert.deepEqual([nav.resultBytes, nav.resultType, nav.isError, nav.outcome], [0, "null", false, "navigated"])
  assert.equal(spanOf(call({ waitedMs: 900 }), O).span.waitedMs, 900)
  const term = spanOf(call({ terminal: true }), O).span
  assert.equal(term.invokedBy, "terminal")
  assert.equal(term.synthetic, true, "the terminal's call is never a live host's")
  const consent = spanOf(call({ consent: { consent: "granted", mismatch: true } }), O).span
  assert.deepEqual([consent.consent, consent.consentMismatch], ["granted", true])
})

test("tokens through the page's estimator, one ask per kind; junk answers fall back to the built-in", () => {
  const asked = []
  const estimate = estimatorOf(({ kind, bytes }) => {
    asked.push(kind)
    return kind === "text" ? bytes : kind === "image" ? -1 : bytes / 3
  })
  const image = { content: [{ type: "image", data: "A".repeat(400), mimeType: "image/png" }] }
  const { span } = spanOf(call({ value: image }), { ...O, tokens: tokensThrough(estimate) })
  assert.deepEqual(asked, ["input", "text", "image"])
  assert.equal(span.estInputTokens, Math.ceil(span.inputBytes / 3))
  assert.equal(span.estTextTokens, span.resultBytes - 400)
  assert.equal(span.estImageTokens, Math.ceil((400 * 0.75) / 4), "a negative estimate: the built-in image count")
  assert.equal(estimatorOf("not a function")("text", 10), 3)
})

test("payloadOf: arguments, result text and a thrown message, each cut at the limit with its full length named", () => {
  const p = payloadOf(call({ value: "x".repeat(50) }), 10)
  assert.equal(p.seq, 4)
  assert.equal(p.arguments, '{"q":"héll...[13 chars]')
  assert.equal(p.result, "xxxxxxxxxx...[50 chars]")
  assert.equal(p.error, null)
  const thrown = payloadOf(call({ ok: false, value: new Error("no such item") }), 4096)
  assert.equal(thrown.result, null, "a throw has no result text")
  assert.equal(thrown.error, "no such item")
  assert.equal(payloadOf(call({ value: "y".repeat(3000) }), undefined).result.length, 2048 + "...[3000 chars]".length, "junk limit: 2048")
})
