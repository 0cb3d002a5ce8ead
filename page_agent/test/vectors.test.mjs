// The shared vectors (tests/vectors/): the same aggregates, totals, summary line, trace, units, sizes and
// error texts as Python (tests/test_vectors.py), to the digit.
import { test } from "node:test"
import assert from "node:assert/strict"
import { readFileSync, readdirSync } from "node:fs"
import { join, dirname } from "node:path"
import { fileURLToPath } from "node:url"
import { SessionStats, spanEvents, fmtBytes, fmtCount, fmtDuration, fmtMs } from "../src/page/stats.js"
import { resultFacts, inputBytesOf, errorText, callTokens } from "../src/page/measure.js"
import { describeTool } from "../src/page/interceptor.js"
import { registeredShape } from "../src/page/listing.js"

const VECTORS = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "tests", "vectors")
const read = (p) => JSON.parse(readFileSync(join(VECTORS, p), "utf8"))
const aggregateFiles = readdirSync(join(VECTORS, "aggregate")).filter((f) => f.endsWith(".json")).sort()

function runSteps(doc) {
  const stats = new SessionStats(doc.buffer)
  for (const step of doc.steps) {
    switch (step.op) {
      case "register":
        stats.register(step.name, step.schemaBytes, !!step.internal)
        break
      case "unregister":
        stats.unregister(step.name)
        break
      case "span":
        stats.add(structuredClone(step.span))
        break
      case "unsampled":
        stats.setUnsampled(stats.totals.unsampledCalls + 1)
        break
      case "update":
        stats.updateBlocking(step.seq, step.blockingMs)
        break
      case "reset":
        stats.reset()
        break
      default:
        throw new Error(`unknown op ${step.op}`)
    }
  }
  return stats
}

test("there are enough aggregate vectors", () => {
  assert.ok(aggregateFiles.length >= 12, `only ${aggregateFiles.length} vectors`)
})

for (const file of aggregateFiles) {
  test(`aggregate vector ${file}`, () => {
    const doc = read(join("aggregate", file))
    const stats = runSteps(doc)
    assert.deepStrictEqual(stats.aggregates(), doc.expect.aggregates)
    assert.deepStrictEqual(stats.reportRows(), doc.expect.reportTools)
    assert.deepStrictEqual(stats.totalsObject(), doc.expect.totals)
    assert.equal(stats.summary(), doc.expect.summary)
    const trace = spanEvents(stats.spans(), doc.session.timeOrigin).map((e) => ({ name: e.name, cat: e.cat, ts: e.ts, dur: e.dur, tid: e.tid }))
    assert.deepStrictEqual(trace, doc.expect.trace)
  })
}

for (const kind of ["bytes", "count", "duration"]) {
  test(`format vectors: ${kind}`, () => {
    const fn = { bytes: fmtBytes, count: fmtCount, duration: fmtDuration }[kind]
    const cases = read("format.json")[kind]
    assert.deepStrictEqual(
      cases.map((c) => fn(c.value)),
      cases.map((c) => c.expect),
    )
  })
}

test("format vectors: a table cell (fmtMs) is the one duration format", () => {
  const cases = read("format.json").duration
  assert.deepStrictEqual(cases.map((c) => fmtMs(c.value)), cases.map((c) => c.expect))
  assert.equal(fmtMs(null), "–")
})

/** JSON cannot hold undefined, NaN or Infinity: the vectors spell them as markers. */
function valueOf(marker) {
  if (marker && marker.$undefined === true) return undefined
  if (marker && typeof marker.$number === "string" && Object.keys(marker).length === 1) return Number(marker.$number)
  return marker
}

test("measure vectors", () => {
  for (const c of read("measure.json")) {
    const value = valueOf(c.result)
    const facts = resultFacts(value)
    const inputBytes = inputBytesOf(c.input)
    const t = callTokens(inputBytes, facts.resultBytes, facts.imageBytes)
    const got = {
      inputBytes,
      resultBytes: facts.resultBytes,
      resultType: facts.resultType,
      envelope: facts.envelope,
      substituted: facts.substituted,
      contentTypes: facts.contentTypes,
      imageBytes: facts.imageBytes,
      ...t,
    }
    assert.deepStrictEqual(got, c.expect, c.name)
  }
})

test("error vectors", () => {
  for (const c of read("errors.json")) {
    const err = Object.assign(new Error(c.thrown.message), { name: c.thrown.name })
    assert.equal(errorText(err, c.policy), c.expect, `${c.policy} ${c.thrown.name}`)
  }
})

test("descriptor fingerprint (001's webmcp.tool.descriptor), with and without the handler's source", async () => {
  const { descriptorFingerprint } = await import("../src/page/hooks.js")
  for (const c of read("fingerprint.json").cases) {
    const tool = c.handler ? { ...c.tool, execute: new Function(`return ${c.handler}`)() } : c.tool
    assert.equal(descriptorFingerprint(tool, !!c.handler), c.expect, c.name)
  }
})

test("schema vectors: the host's copy of a tool weighs what the page registered", () => {
  const { cases } = read("schema.json")
  assert.ok(cases.length >= 6)
  for (const c of cases) {
    const shape = registeredShape(c.listed)
    assert.deepEqual(shape, c.expect.descriptor, c.name)
    assert.equal(describeTool(shape).schemaBytes, c.expect.schemaBytes, c.name)
    if (c.sameByBothRoutes) assert.equal(describeTool(c.registered).schemaBytes, c.expect.schemaBytes, c.name)
    else assert.notEqual(describeTool(c.registered).schemaBytes, c.expect.schemaBytes, c.name)
  }
})
