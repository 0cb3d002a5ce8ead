// page/marks.js alone: the terminal's marks (per tool, first asked first taken, withdrawable) and the consent
// recorded for a tool's next call (taken once, bounded).
import { test } from "node:test"
import assert from "node:assert/strict"
import { TerminalMarks, ConsentMarks } from "../src/page/marks.js"

test("terminal marks: taken by the next calls of their tool in order; a withdrawn one is not taken", () => {
  const m = new TerminalMarks()
  const first = m.expect("a")
  m.expect("a")
  const other = m.expect("b")
  assert.equal(m.take("c"), false)
  other()
  assert.equal(m.take("b"), false, "withdrawn before its call entered")
  first()
  assert.equal(m.take("a"), true)
  assert.equal(m.take("a"), false)
  first()
  assert.equal(m.pending.size, 0, "nothing left waiting")
})

test("a mark taken cannot be withdrawn afterwards", () => {
  const m = new TerminalMarks()
  const withdraw = m.expect("a")
  const keep = m.expect("a")
  assert.equal(m.take("a"), true)
  withdraw()
  assert.equal(m.take("a"), true, "the second mark still waits for its call")
  keep()
  assert.equal(m.pending.size, 0)
})

test("consent: the next call of the tool takes it once; at most 256 tools wait", () => {
  const m = new ConsentMarks()
  m.record("t", true, false)
  m.record("u", false, true)
  assert.deepEqual(m.take("t"), { consent: "granted", mismatch: false })
  assert.equal(m.take("t"), null)
  assert.deepEqual(m.take("u"), { consent: "denied", mismatch: true })
  for (let i = 0; i < 300; i++) m.record(`t${i}`, true, false)
  assert.equal(m.next.size, 256)
  assert.equal(m.take("t0"), null, "the oldest went first")
  assert.notEqual(m.take("t299"), null)
})
