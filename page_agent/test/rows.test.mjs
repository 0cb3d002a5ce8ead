// Span rows: a relay whose welcome says `rows` gets each span as an array in SPAN_ROW's order (protocol.py's Span
// without sessionId, trailing optional fields left out) and bloat facts without their zero figures; any other
// relay gets the objects. tests/relay/test_rows.py holds the relay's side: a row decodes to the same Span.
import { test } from "node:test"
import assert from "node:assert/strict"
import { fullSpans, unwatchedCalls } from "../test-support/helpers.mjs"
import { spanRow, shortFacts, SPAN_ROW, SPAN_ROW_REQUIRED } from "../src/transport/frames.js"

const SPAN = {
  sessionId: "0a1b2c3d", seq: 7, tool: "t", invokedAt: 1.25, settledAt: 3.5, wallMs: 2.25, blockingMs: 0, inputBytes: 2, resultBytes: 9,
  contentTypes: { text: 1 }, imageBytes: 0, estInputTokens: 1, estTextTokens: 3, estImageTokens: 0, estTokens: 4, isError: false,
  error: null, gapSincePrevCallMs: null, synthetic: false, serializable: true, resultType: "object", envelope: true, substituted: false,
  depth: 0, parent: null, overlapped: false, errorType: null, refusal: null, consent: null, consentMismatch: null,
}

/** A row read back as the relay reads it: SPAN_ROW's names over its values, the missing tail absent. */
const objectOf = (row) => Object.fromEntries(row.map((v, i) => [SPAN_ROW[i], v]))

test("a row is the span's values in SPAN_ROW's order, without sessionId, its null tail left out", () => {
  const row = spanRow(SPAN)
  assert.equal(row.length, SPAN_ROW.indexOf("overlapped") + 1, "ends at the last optional field set")
  const { sessionId, ...rest } = SPAN
  assert.equal(sessionId, "0a1b2c3d")
  const expected = Object.fromEntries(Object.entries(rest).filter(([k]) => SPAN_ROW.indexOf(k) < row.length))
  assert.deepEqual(objectOf(row), expected)
  assert.ok(JSON.stringify(row).length * 2 < JSON.stringify(SPAN).length, "under half the object's bytes")
})

test("the required fields are always there (null as null), the optional ones only up to the last one set", () => {
  const bare = { ...SPAN, gapSincePrevCallMs: undefined, resultType: undefined, envelope: undefined, substituted: undefined, depth: undefined, overlapped: undefined }
  const row = spanRow(bare)
  assert.equal(row.length, SPAN_ROW_REQUIRED)
  assert.equal(row[SPAN_ROW.indexOf("gapSincePrevCallMs")], null)
  const late = spanRow({ ...bare, invokedBy: "terminal" })
  assert.equal(late.length, SPAN_ROW.length)
  assert.equal(late[SPAN_ROW.length - 1], "terminal")
  assert.equal(late[SPAN_ROW.indexOf("waitedMs")], null)
})

test("short facts: bloat without its zero figures, the rest as it was", () => {
  const facts = { bloat: { textBytes: 5, whitespaceBytes: 0, repeatedKeyBytes: 3, repeatedKeyRows: 0, base64Bytes: 0, base64Runs: 0 }, repeat: { of: 2 } }
  assert.deepEqual(shortFacts(facts), { bloat: { textBytes: 5, repeatedKeyBytes: 3 }, repeat: { of: 2 } })
  assert.equal(facts.bloat.whitespaceBytes, 0, "the agent's own copy is untouched")
  assert.deepEqual(shortFacts({ repeat: { of: 1 } }), { repeat: { of: 1 } })
})

async function threeCalls(welcome) {
  const { ctx, before } = await unwatchedCalls({ welcome })
  ctx.env.advance(1000)
  ctx.env.run()
  const [frame] = ctx.ws.sent.slice(before).filter((f) => f.type === "spans")
  return { ctx, frame }
}

test("a relay that reads rows gets rows and short facts: the same spans, fewer bytes", async () => {
  const { ctx, frame } = await threeCalls({ rows: true })
  assert.equal(frame.spans, undefined)
  assert.equal(frame.rows.length, 3)
  const own = fullSpans(ctx.api).map(({ sessionId, ...rest }) => Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== null && v !== undefined)))
  const sent = frame.rows.map((row) => Object.fromEntries(Object.entries(objectOf(row)).filter(([, v]) => v !== null)))
  assert.deepEqual(sent, own, "each row says what the span says")
  assert.deepEqual(frame.facts.map((x) => x.seq), [0, 1, 2])
  assert.deepEqual(frame.facts[0].facts.bloat, { textBytes: 5 }, "the zero figures left out")
  const { frame: long } = await threeCalls()
  assert.ok(JSON.stringify(frame).length * 2 < JSON.stringify(long).length, `${JSON.stringify(frame).length} B against ${JSON.stringify(long).length} B`)
  ctx.api.detach()
})

test("a relay whose welcome does not say rows gets the span objects and the long facts", async () => {
  const { ctx, frame } = await threeCalls()
  assert.equal(frame.rows, undefined)
  assert.deepEqual(frame.spans.map((s) => s.seq), [0, 1, 2])
  assert.equal(frame.spans[0].sessionId, ctx.id)
  assert.equal(frame.facts[0].facts.bloat.whitespaceBytes, 0)
  ctx.api.detach()
})
