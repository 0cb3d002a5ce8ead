// Sizing a long text as JSON (page_agent/src/measure.js jsonStringBytes) against building the JSON text and
// measuring it (the baseline, JSON.stringify + Buffer.byteLength), over texts a tool returns. Prints one JSON
// line per text: µs per call both ways, and whether both agree. Run by tests/bench/test_text_sizing.py.
import { jsonStringBytes } from "../../page_agent/src/measure.js"

const seconds = Number(process.argv[2] || "1")
const TEXTS = {
  "128 KB, nothing to escape": "x".repeat(131072),
  "130 KB of lines with quotes": 'lorem ipsum "dolor" sit amet\n'.repeat(4500),
  "132 KB, not ASCII": "héllo wörld ".repeat(11000),
  "94 KB JSON text": JSON.stringify(Array.from({ length: 2000 }, (_, i) => ({ id: i, name: `item ${i}`, tags: ["a", "b"] }))),
}
const WAYS = { sized: (t) => jsonStringBytes(t), baseline: (t) => Buffer.byteLength(JSON.stringify(t), "utf8") }

function perCall(fn, text, budgetMs) {
  for (let i = 0; i < 50; i++) fn(text) // warm up the JIT
  let n = 0
  const start = performance.now()
  while (performance.now() - start < budgetMs) for (let i = 0; i < 20; i++, n++) fn(text)
  return ((performance.now() - start) / n) * 1000
}

for (const [name, text] of Object.entries(TEXTS)) {
  const us = {}
  for (let round = 0; round < 3; round++) { // the two ways take turns; the best of three rounds each
    for (const [way, fn] of Object.entries(WAYS)) us[way] = Math.min(us[way] ?? Infinity, perCall(fn, text, (seconds * 1000) / 24))
  }
  console.log(JSON.stringify({ name, chars: text.length, ...us, agree: WAYS.sized(text) === WAYS.baseline(text) }))
}
