// Sizing a long text as JSON (page_agent/src/page/measure.js jsonStringBytes) against building the JSON text and
// measuring it (the baseline: JSON.stringify, then its UTF-8 bytes), over texts a tool returns. `run` gives one
// row per text: µs per call both ways, and whether both agree. The same module runs in node and in Chromium
// (tests/bench/test_text_sizing.py), whose TextEncoder costs far more than node's.
import { jsonStringBytes } from "../../page_agent/src/page/measure.js"

export const TEXTS = {
  "128 KB, nothing to escape": "x".repeat(131072),
  "130 KB of lines with quotes": 'lorem ipsum "dolor" sit amet\n'.repeat(4500),
  "132 KB, not ASCII": "héllo wörld ".repeat(11000),
  "128 K characters of CJK": "漢字かな交じり文".repeat(16384),
  "94 KB JSON text": JSON.stringify(Array.from({ length: 2000 }, (_, i) => ({ id: i, name: `item ${i}`, tags: ["a", "b"] }))),
  // Past the agent's 1 MiB scratch buffer, counted a megabyte at a time: what an unbounded result costs. Last, so
  // its megabyte copies do not weigh on the rows above.
  "2.5 MB of accented text": "héllo wörld ".repeat(180000),
}

function perCall(fn, text, budgetMs) {
  const warm = Math.max(3, Math.min(50, Math.round(5e6 / text.length))) // warm up the JIT; fewer for the longest text
  for (let i = 0; i < warm; i++) fn(text)
  let n = 0
  const start = performance.now()
  while (performance.now() - start < budgetMs) for (let i = 0; i < 20; i++, n++) fn(text)
  return ((performance.now() - start) / n) * 1000
}

/**
 * @param {number} seconds  the whole run
 * @param {(text: string) => number} byteLength  the baseline's UTF-8 count of the JSON text
 */
export function run(seconds, byteLength) {
  const ways = { sized: (t) => jsonStringBytes(t), baseline: (t) => byteLength(JSON.stringify(t)) }
  const budget = (seconds * 1000) / (Object.keys(TEXTS).length * 6)
  const rows = []
  for (const [name, text] of Object.entries(TEXTS)) {
    const us = {}
    for (let round = 0; round < 3; round++) { // the two ways take turns; the best of three rounds each
      for (const [way, fn] of Object.entries(ways)) us[way] = Math.min(us[way] ?? Infinity, perCall(fn, text, budget))
    }
    rows.push({ name, chars: text.length, ...us, agree: ways.sized(text) === ways.baseline(text) })
  }
  return rows
}
