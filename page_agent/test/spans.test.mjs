// Every span field, through a draft-shaped host that serialises like Chromium 156.
import { test } from "node:test"
import assert from "node:assert/strict"
import { setup, settle, utf8, CANARY, DraftHost, fullSpans } from "../test-support/helpers.mjs"
import { agentOf } from "../src/page/index.js"

const SPAN_KEYS = [
  "sessionId", "seq", "tool", "invokedAt", "settledAt", "wallMs", "blockingMs", "inputBytes", "resultBytes",
  "contentTypes", "imageBytes", "estInputTokens", "estTextTokens", "estImageTokens", "estTokens", "isError",
  "error", "gapSincePrevCallMs", "synthetic", "serializable", "resultType", "envelope", "substituted", "depth",
  "parent", "overlapped", "errorType", "refusal", "consent", "consentMismatch",
]

/** Register one tool whose execute takes `ms` of manual time and returns `value` (or throws). */
async function oneTool(ctx, name, fn, extra = {}) {
  const tool = { name, description: `the ${name} tool`, inputSchema: { type: "object" }, execute: fn, ...extra }
  await ctx.host.registerTool(tool)
  await settle()
  return tool
}

async function call(ctx, name, input = {}) {
  let text
  let error = null
  try {
    text = await ctx.host.executeTool({ name }, input)
  } catch (e) {
    error = e
  }
  ctx.env.run()
  return { text, error }
}

test("an object result: every span field", async () => {
  const ctx = setup()
  await oneTool(ctx, "search", (input) => {
    ctx.env.tick(12.5)
    return { items: [1, 2, 3], q: input.q }
  })
  ctx.env.tick(100)
  const { text } = await call(ctx, "search", { q: "tée" })
  const [span] = fullSpans(ctx.api)
  assert.deepEqual(Object.keys(span), SPAN_KEYS)
  assert.equal(span.sessionId, ctx.api.sessionId)
  assert.match(span.sessionId, /^[0-9a-f]{8}$/)
  assert.equal(span.seq, 0)
  assert.equal(span.tool, "search")
  assert.equal(span.invokedAt, 1100)
  assert.equal(span.settledAt, 1112.5)
  assert.equal(span.wallMs, 12.5)
  assert.equal(span.blockingMs, 0)
  assert.equal(span.inputBytes, utf8(JSON.stringify({ q: "tée" })))
  assert.equal(span.resultBytes, utf8(text))
  assert.deepEqual(span.contentTypes, {})
  assert.equal(span.imageBytes, 0)
  assert.equal(span.estInputTokens, Math.ceil(span.inputBytes / 4))
  assert.equal(span.estTextTokens, Math.ceil(span.resultBytes / 4))
  assert.equal(span.estImageTokens, 0)
  assert.equal(span.estTokens, span.estInputTokens + span.estTextTokens)
  assert.equal(span.isError, false)
  assert.equal(span.error, null)
  assert.equal(span.gapSincePrevCallMs, null, "first call: no previous settle")
  assert.equal(span.synthetic, false)
  assert.equal(span.serializable, true)
  assert.equal(span.resultType, "object")
  assert.equal(span.envelope, false)
  assert.equal(span.substituted, false)
  assert.equal(span.depth, 0)
  assert.equal(span.parent, null)
  assert.equal(span.overlapped, false)
  assert.equal(span.errorType, null)
})

test("resultBytes is the UTF-8 length of the text the host hands the agent, for every kind of result", async () => {
  const cases = {
    str: "héllo \"q\" 😀",
    empty: "",
    undef: undefined,
    nul: null,
    num: 42.5,
    bool: false,
    arr: [1, "é"],
    env: { content: [{ type: "text", text: "inner" }] },
    strenv: JSON.stringify({ content: [{ type: "text", text: "a" }, { type: "image", data: "QUJD", mimeType: "image/png" }] }),
    img: { content: [{ type: "image", data: "A".repeat(4000), mimeType: "image/png" }, { type: "text", text: "x" }] },
    date: new Date(0),
  }
  const ctx = setup()
  for (const [name, value] of Object.entries(cases)) await oneTool(ctx, name, () => value)
  const texts = {}
  for (const name of Object.keys(cases)) texts[name] = (await call(ctx, name)).text
  const byTool = Object.fromEntries(fullSpans(ctx.api).map((s) => [s.tool, s]))
  for (const name of Object.keys(cases)) assert.equal(byTool[name].resultBytes, utf8(texts[name]), name)
  assert.equal(texts.empty, "Operation succeeded")
  assert.equal(byTool.empty.substituted, true)
  assert.equal(byTool.str.substituted, false)
  assert.equal(byTool.undef.resultType, "undefined")
  assert.equal(byTool.nul.resultType, "null")
  assert.equal(byTool.num.resultType, "number")
  assert.equal(byTool.arr.resultType, "array")
  assert.equal(byTool.env.envelope, true)
  assert.deepEqual(byTool.env.contentTypes, { text: 1 })
  assert.equal(byTool.strenv.envelope, true, "an envelope serialised to a string is still one")
  assert.equal(byTool.strenv.resultType, "string")
  assert.deepEqual(byTool.strenv.contentTypes, { text: 1, image: 1 })
  assert.equal(byTool.strenv.imageBytes, 4)
  assert.equal(byTool.img.imageBytes, 4000)
  assert.equal(byTool.img.estImageTokens, Math.ceil((4000 * 0.75) / 4))
  assert.equal(byTool.img.estTextTokens, Math.ceil((byTool.img.resultBytes - 4000) / 4))
  assert.equal(byTool.str.envelope, false)
})

test("errors as the host saw them: thrown, rejected, isError, unserialisable; errorPolicy", async () => {
  for (const policy of ["message", "name", "none"]) {
    const ctx = setup({ config: { errorPolicy: policy } })
    await oneTool(ctx, "thrower", () => {
      throw new TypeError("card declined")
    })
    await oneTool(ctx, "rejecter", async () => {
      throw new RangeError("too far")
    })
    await oneTool(ctx, "flagged", () => ({ content: [{ type: "text", text: "nope" }], isError: true }))
    await oneTool(ctx, "cyclic", () => {
      const o = {}
      o.o = o
      return o
    })
    const r1 = await call(ctx, "thrower")
    const r2 = await call(ctx, "rejecter")
    const r3 = await call(ctx, "flagged")
    const r4 = await call(ctx, "cyclic")
    assert.equal(r1.error.name, "UnknownError")
    assert.equal(r2.error.name, "UnknownError")
    assert.equal(r3.error, null)
    assert.equal(r4.error.name, "UnknownError", "the host could not serialise it either")
    const s = Object.fromEntries(fullSpans(ctx.api).map((x) => [x.tool, x]))
    for (const name of ["thrower", "rejecter", "flagged", "cyclic"]) assert.equal(s[name].isError, true, name)
    assert.equal(s.thrower.resultType, "error")
    assert.equal(s.thrower.resultBytes, 0)
    assert.equal(s.cyclic.serializable, false)
    assert.equal(s.cyclic.resultType, "unserializable")
    assert.equal(s.cyclic.resultBytes, 0)
    assert.equal(s.flagged.resultBytes, utf8(r3.text))
    const expect = { message: ["card declined", "too far"], name: ["TypeError", "RangeError"], none: [null, null] }[policy]
    assert.equal(s.thrower.error, expect[0], policy)
    assert.equal(s.thrower.errorType, policy === "none" ? null : "TypeError", policy)
    assert.equal(s.rejecter.errorType, policy === "none" ? null : "RangeError", policy)
    assert.equal(s.rejecter.error, expect[1], policy)
    assert.equal(ctx.api.ledger().totals.errors, 4)
  }
})

test("error messages are capped at 200 code points and never carry a stack", async () => {
  const ctx = setup()
  await oneTool(ctx, "long", () => {
    throw new Error("é".repeat(150) + "😀".repeat(100))
  })
  await call(ctx, "long")
  const [s] = ctx.api.spans()
  assert.equal([...s.error].length, 200)
  assert.ok(!s.error.includes("at "))
})

test("host gaps: settled-to-next-invoke; null for the first and for overlapping calls; reset() clears", async () => {
  const ctx = setup()
  let release
  await oneTool(ctx, "quick", () => {
    ctx.env.tick(5)
    return "ok"
  })
  await oneTool(ctx, "slow", () => new Promise((r) => (release = r)))
  await call(ctx, "quick") // 1000 -> 1005
  ctx.env.tick(995)
  await call(ctx, "quick") // gap 995
  ctx.env.tick(10)
  const slow = ctx.host.executeTool({ name: "slow" }, {}) // invoked, in flight
  await settle()
  ctx.env.tick(3)
  await call(ctx, "quick") // overlapping: null gap
  ctx.env.tick(7)
  release("done")
  await slow
  ctx.env.run()
  const spans = fullSpans(ctx.api)
  assert.deepEqual(
    spans.map((s) => [s.tool, s.gapSincePrevCallMs, s.overlapped]),
    [
      ["quick", null, false],
      ["quick", 995, false],
      ["quick", null, true],
      ["slow", 10, false],
    ],
  )
  const totals = ctx.api.ledger().totals
  assert.equal(totals.hostGapMs, 1005)
  assert.equal(totals.overlappingCalls, 1)
  ctx.api.reset()
  ctx.env.tick(50)
  await call(ctx, "quick")
  assert.equal(ctx.api.spans()[0].gapSincePrevCallMs, null, "reset() clears lastSettledAt")
  assert.equal(ctx.api.ledger().totals.calls, 1)
})

test("depth and parent for a call made inside another tool's execute", async () => {
  const ctx = setup()
  const inner = await oneTool(ctx, "inner", () => "i")
  await oneTool(ctx, "outer", () => inner.execute({}) + "o")
  await call(ctx, "outer")
  const spans = fullSpans(ctx.api)
  const outer = spans.find((s) => s.tool === "outer")
  const innerSpan = spans.find((s) => s.tool === "inner")
  assert.equal(outer.depth, 0)
  assert.equal(innerSpan.depth, 1)
  assert.equal(innerSpan.parent, outer.seq)
  assert.equal(innerSpan.overlapped, true)
})

test("sampling: unsampled calls run unmeasured but count, and still end a host gap", async () => {
  const rolls = [0.9, 0.1, 0.9, 0.1]
  const ctx = setup({ config: { sample: 0.5, random: () => rolls.shift() } })
  await oneTool(ctx, "t", () => {
    ctx.env.tick(1)
    return "x"
  })
  for (let i = 0; i < 4; i++) {
    ctx.env.tick(100)
    await call(ctx, "t")
  }
  const spans = ctx.api.spans()
  assert.equal(spans.length, 2)
  assert.deepEqual(spans.map((s) => s.gapSincePrevCallMs), [100, 100], "gaps run from the unsampled call's settle")
  const t = ctx.api.ledger().totals
  assert.equal(t.calls, 4)
  assert.equal(t.unsampledCalls, 2)
})

test("synthetic() marks spans from now on", async () => {
  const ctx = setup()
  await oneTool(ctx, "t", () => 1)
  await call(ctx, "t")
  ctx.api.synthetic()
  await call(ctx, "t")
  ctx.api.synthetic(false)
  await call(ctx, "t")
  assert.deepEqual(ctx.api.spans().map((s) => s.synthetic), [false, true, false])
})

test("Long Tasks: each ms goes to the most recently invoked call in flight; late updates; no double count", async () => {
  const ctx = setup()
  const releases = []
  await oneTool(ctx, "a", () => new Promise((r) => releases.push(r)))
  const updates = []
  ctx.api.onSpanUpdate((u) => updates.push(u))
  // a: 1000..1100, b: 1040..1060 (nested in time). Long task 1030..1080.
  const pa = ctx.host.executeTool({ name: "a" }, {})
  await settle()
  ctx.env.tick(40)
  const pb = ctx.host.executeTool({ name: "a" }, {})
  await settle()
  ctx.env.tick(20)
  releases[1]("b")
  await pb
  ctx.env.tick(40)
  releases[0]("a")
  await pa
  await settle() // the accounting runs behind the page's own continuation
  ctx.env.run()
  const agent = ctx.g.__webmcpPerf
  assert.ok(agent)
  // Reach the collector through the report: feed the entry as the PerformanceObserver would.
  const collector = agentCollector(ctx)
  collector.longTasks([{ startTime: 1030, duration: 50 }])
  const spans = ctx.api.spans()
  assert.equal(spans.find((s) => s.seq === 0).blockingMs, 10 + 20) // 1030..1040 and 1060..1080
  assert.equal(spans.find((s) => s.seq === 1).blockingMs, 20) // 1040..1060
  assert.equal(ctx.api.ledger().totals.blockingMs, 50, "never more than the task itself")
  assert.deepEqual(updates.map((u) => [u.seq, u.blockingMs]).sort(), [[0, 30], [1, 20]])
  const rows = Object.fromEntries(ctx.api.aggregates().map((r) => [r.tool, r]))
  assert.equal(rows.a.blockingMs, 50)
})

test("performance.measure per span, cleared when the ring evicts it", async () => {
  const ctx = setup({ config: { buffer: 2 } })
  await oneTool(ctx, "t", () => 1)
  for (let i = 0; i < 3; i++) await call(ctx, "t")
  assert.deepEqual([...ctx.env.perf.names].sort(), ["webmcp:t#1", "webmcp:t#2"])
  assert.equal(ctx.api.spans().length, 2)
  assert.equal(ctx.api.aggregates()[0].calls, 3, "calls count beyond the ring")
})

test("off the call path: the host gets its value before any measuring happens", async () => {
  const ctx = setup()
  const big = { blob: "x".repeat(128 * 1024) }
  let serialised = 0
  big.toJSON = function () {
    serialised++
    return { blob: this.blob }
  }
  const tool = await oneTool(ctx, "big", () => big)
  const got = tool.execute({})
  assert.equal(got, big, "the very same value comes back")
  assert.equal(serialised, 0, "nothing serialised on the call path")
  assert.equal(agentOf(ctx.api).collector.stats.spans().length, 0)
  assert.ok(ctx.env.pendingTasks() > 0, "accounting is queued as a separate task")
  ctx.env.run()
  assert.equal(serialised, 1)
  assert.equal(ctx.api.spans()[0].resultBytes, utf8(JSON.stringify(big)))
  const p = Promise.resolve(big)
  const tool2 = await oneTool(ctx, "p", () => p)
  const back = tool2.execute({})
  assert.ok(back instanceof Promise, "a promise comes back as a promise")
  assert.equal(await back, big, "of the very same value")
  const boom = new Error("no")
  const tool3 = await oneTool(ctx, "rej", () => Promise.reject(boom))
  await assert.rejects(tool3.execute({}), (e) => e === boom, "and the very same reason")
})

test("never throws into the page: hostile results and listeners", async () => {
  const ctx = setup()
  ctx.api.onSpan(() => {
    throw new Error("listener bug")
  })
  const hostile = {}
  Object.defineProperty(hostile, "content", { get() { throw new Error("getter") }, enumerable: true })
  const tool = await oneTool(ctx, "h", () => hostile)
  assert.equal(tool.execute({}), hostile)
  ctx.env.run()
  const [s] = ctx.api.spans()
  assert.equal(s.serializable, false)
})

test("the canary in inputs and results appears in no span, report(), summary() or ledger", async () => {
  const ctx = setup()
  await oneTool(ctx, "echo", (input) => ({ content: [{ type: "text", text: input.q + CANARY }] }))
  await oneTool(ctx, "str", () => CANARY)
  await oneTool(ctx, "fail", (input) => {
    throw Object.assign(new Error("bad input"), { payload: input })
  })
  await call(ctx, "echo", { q: CANARY })
  await call(ctx, "str", { q: CANARY })
  await call(ctx, "fail", { q: CANARY })
  const everything = JSON.stringify([ctx.api.spans(), ctx.api.report(), ctx.api.summary(), ctx.api.ledger(), ctx.api.aggregates(), ctx.api.status()])
  assert.ok(!everything.includes(CANARY))
  assert.ok(ctx.api.spans()[0].resultBytes > CANARY.length, "the canary was really there")
})

const agentCollector = (ctx) => agentOf(ctx.api).collector

test("under @mcp-b/webmcp-polyfill the bytes follow its serialiser (a cycle reads \"[object Object]\")", async () => {
  const host = new DraftHost()
  host.__isWebMCPPolyfill = true
  // The polyfill 5.1 writes JSON.stringify(value) when that gives text, else String(value) || "Operation succeeded".
  host.executeTool = async function (tool, input) {
    const v = await this.registry.get(tool.name).execute(input)
    if ((typeof v === "object" && v) || typeof v === "function") {
      try {
        const t = JSON.stringify(v)
        if (t) return t
      } catch {
        /* fall through */
      }
    }
    return String(v) || "Operation succeeded"
  }
  const ctx = setup({ host })
  await oneTool(ctx, "cyclic", () => {
    const o = {}
    o.o = o
    return o
  })
  await oneTool(ctx, "obj", () => ({ a: "é" }))
  await oneTool(ctx, "empty", () => "")
  const texts = {}
  for (const n of ["cyclic", "obj", "empty"]) texts[n] = (await call(ctx, n)).text
  const s = Object.fromEntries(ctx.api.spans().map((x) => [x.tool, x]))
  for (const n of ["cyclic", "obj", "empty"]) assert.equal(s[n].resultBytes, utf8(texts[n]), n)
  assert.equal(texts.cyclic, "[object Object]")
  assert.equal(s.cyclic.isError, false, "the polyfill did not fail the call")
  assert.equal(s.cyclic.serializable, false)
})
