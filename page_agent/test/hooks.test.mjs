// Issue 7 item 2 on the page side (001's facts): redefinition and the handler fingerprint, isErrorResult,
// isRefusal and the built-in English match, recordConsent, and opt-in payload capture (socket only).
import { test } from "node:test"
import assert from "node:assert/strict"
import { settle, channelBus, CANARY, connectedAgent, fullSpans } from "../test-support/helpers.mjs"
import { fnv1a32, descriptorFingerprint, defaultRefusal, consentMismatch, cutPayload } from "../src/page/hooks.js"

const tool = (name, execute, extra = {}) => ({ name, description: `${name} tool`, inputSchema: { type: "object" }, execute, ...extra })

async function reg(ctx, t, signal) {
  await ctx.host.registerTool(t, signal ? { signal } : {})
  await settle()
  ctx.env.run()
}

async function run(ctx, name, input = {}) {
  let text = null
  try {
    text = await ctx.host.executeTool({ name }, input)
  } catch {
    text = null
  }
  ctx.env.run()
  return text
}

test("fnv1a32 and descriptorFingerprint: 8 hex digits, 001's canonical array, the handler only when asked", () => {
  assert.equal(fnv1a32(""), "811c9dc5", "FNV-1a's offset basis")
  assert.equal(fnv1a32("a"), "e40c292c", "the published FNV-1a 32 value of 'a'")
  const t = { name: "a", description: "d", inputSchema: { type: "object" }, execute: () => 1 }
  assert.equal(descriptorFingerprint(t, false), fnv1a32(JSON.stringify(["a", "", "d", { type: "object" }, null, null])))
  assert.equal(descriptorFingerprint(t, false), descriptorFingerprint({ ...t, execute: () => 2 }, false), "the handler is left out by default")
  assert.notEqual(descriptorFingerprint(t, true), descriptorFingerprint({ ...t, execute: () => 2 }, true))
  assert.equal(descriptorFingerprint(t, true), fnv1a32(JSON.stringify(["a", "", "d", { type: "object" }, null, "() => 1"])))
  const cyclic = { type: "object" }
  cyclic.self = cyclic
  assert.equal(descriptorFingerprint({ name: "c", inputSchema: cyclic }, false), null)
})

test("redefinition: the same name again with another descriptor sends the tool frame again and an event", async () => {
  const ctx = await connectedAgent()
  let ac = new AbortController()
  await reg(ctx, tool("a", () => 1), ac.signal)
  ac.abort()
  ac = new AbortController()
  await reg(ctx, tool("a", () => 1), ac.signal) // identical: a re-registration, not a redefinition
  ac.abort()
  await reg(ctx, tool("a", () => 1, { description: "a changed tool" }))
  const frames = ctx.ws.frames("tool").filter((f) => f.change === "registered")
  assert.equal(frames.length, 3)
  assert.equal(frames[2].descriptor.description, "a changed tool")
  assert.deepEqual(frames.map((f) => f.fingerprint), [0, 1, 2].map((i) => descriptorFingerprint(i < 2 ? tool("a") : tool("a", null, { description: "a changed tool" }), false)),
    "001's descriptor fingerprint on every registration, without the handler by default")
  const events = ctx.ws.frames("event").filter((e) => e.kind === "redefined")
  assert.deepEqual(events.map((e) => e.detail), [{ tool: "a", descriptor: true, handler: false }])
})

test("fingerprintHandler: a swapped function under an identical descriptor is a redefinition", async () => {
  const ctx = await connectedAgent({ config: { fingerprintHandler: true } })
  let ac = new AbortController()
  await reg(ctx, tool("a", () => "one"), ac.signal)
  ac.abort()
  await reg(ctx, tool("a", () => "two"))
  const frames = ctx.ws.frames("tool").filter((f) => f.change === "registered")
  assert.match(frames[0].fingerprint, /^[0-9a-f]{8}$/)
  assert.notEqual(frames[0].fingerprint, frames[1].fingerprint)
  assert.equal(frames[0].fingerprint, descriptorFingerprint(tool("a", () => "one"), true), "the page's function, not our wrapper")
  assert.deepEqual(ctx.ws.frames("event").filter((e) => e.kind === "redefined").map((e) => e.detail), [{ tool: "a", descriptor: false, handler: true }])
})

test("isErrorResult: prose failures become errors (tool_error); the agent still reads the prose", async () => {
  const seen = []
  const ctx = await connectedAgent({ config: {
    isErrorResult: (v) => {
      seen.push(v)
      return typeof v === "string" && v.startsWith("Error: ")
    },
  } })
  await reg(ctx, tool("lib", (i) => (i.fail ? "Error: out of stock" : "ok")))
  await reg(ctx, tool("throws", () => { throw new RangeError("x") }))
  assert.equal(await run(ctx, "lib", { fail: true }), "Error: out of stock")
  assert.equal(await run(ctx, "lib", {}), "ok")
  await run(ctx, "throws")
  const [bad, good, thrown] = fullSpans(ctx.api)
  assert.deepEqual([bad.isError, bad.errorType, bad.error], [true, "tool_error", "the tool returned a failure (isErrorResult)"])
  assert.deepEqual([good.isError, good.errorType], [false, null])
  assert.deepEqual([thrown.isError, thrown.errorType], [true, "RangeError"])
  assert.deepEqual(seen, ["Error: out of stock", "ok"], "called with the returned value, not for a throw")
})

test("a hook that throws is recorded as hook-failed and ignored", async () => {
  const ctx = await connectedAgent({ config: {
    isErrorResult: () => { throw new SyntaxError(CANARY) },
    isRefusal: () => { throw new TypeError(CANARY) },
  } })
  await reg(ctx, tool("t", () => "Confirmation required"))
  await run(ctx, "t")
  const [s] = fullSpans(ctx.api)
  assert.deepEqual([s.isError, s.refusal], [false, null])
  const failed = ctx.ws.frames("event").filter((e) => e.kind === "hook-failed").map((e) => e.detail)
  assert.deepEqual(failed, [
    { hook: "isErrorResult", tool: "t", seq: 0, error: "SyntaxError", count: 1 },
    { hook: "isRefusal", tool: "t", seq: 0, error: "TypeError", count: 1 },
  ])
  assert.ok(!JSON.stringify(ctx.ws.sent).includes(CANARY), "a hook's message may hold a body: only its name is sent")
})

test("isRefusal: the page's classifier decides; its own labels are kept, junk answers are no refusal", async () => {
  const answers = { nope: "unavailable", ask: "confirm", odd: "rate_limited", long: "x".repeat(33), bad: "two words", num: 7 }
  const ctx = await connectedAgent({ config: { isRefusal: (v) => answers[v] } })
  await reg(ctx, tool("r", (i) => i.v))
  for (const v of [...Object.keys(answers), "Confirmation required"]) await run(ctx, "r", { v })
  assert.deepEqual(fullSpans(ctx.api).map((s) => s.refusal), ["unavailable", "confirm", "rate_limited", null, null, null, null])
})

test("the built-in English refusal match (no isRefusal given)", async () => {
  assert.equal(defaultRefusal("Confirmation required: the user must approve checkout"), "confirm")
  assert.equal(defaultRefusal("User confirmation required."), "confirm")
  assert.equal(defaultRefusal("This action requires user confirmation"), "confirm")
  assert.equal(defaultRefusal("Tool unavailable"), "unavailable")
  assert.equal(defaultRefusal("This tool is currently not available."), "unavailable")
  assert.equal(defaultRefusal({ content: [{ type: "text", text: "Tool is unavailable" }] }), "unavailable")
  assert.equal(defaultRefusal("Your order: confirmation required later"), null, "anchored at the start")
  assert.equal(defaultRefusal("Bestätigung erforderlich"), null, "English only")
  assert.equal(defaultRefusal(42), null)
  // autotel-webmcp's own two sentences (001's describeRefusal), at the end of the text
  assert.equal(defaultRefusal("checkout was not confirmed."), "confirm")
  assert.equal(defaultRefusal("The tool delete_account is not available right now."), "unavailable")
  assert.equal(defaultRefusal("checkout was not confirmed. Try again"), null)
  const ctx = await connectedAgent()
  await reg(ctx, tool("r", (i) => i.v))
  await run(ctx, "r", { v: "Confirmation required" })
  await run(ctx, "r", { v: "fine" })
  assert.deepEqual(fullSpans(ctx.api).map((s) => s.refusal), ["confirm", null])
})

test("recordConsent: an event now, consent on the NEXT span of the resolved tool only", async () => {
  const ctx = await connectedAgent()
  await reg(ctx, tool("search", () => "r", { title: "Search", description: "Search the product catalogue" }))
  await reg(ctx, tool("buy", () => "b"))
  await run(ctx, "search")
  const d = ctx.api.recordConsent({ shown: "Search the product catalogue", resolved: "search", granted: true })
  assert.deepEqual(d, { shown: "Search the product catalogue", resolved: "search", granted: true, mismatch: false })
  await run(ctx, "buy")
  await run(ctx, "search")
  await run(ctx, "search")
  ctx.api.recordConsent({ shown: "Search the catalogue " + "x".repeat(300), resolved: "buy", granted: false })
  await run(ctx, "buy")
  const spans = fullSpans(ctx.api).map((s) => [s.tool, s.consent, s.consentMismatch])
  assert.deepEqual(spans, [
    ["search", null, null],
    ["buy", null, null],
    ["search", "granted", false],
    ["search", null, null],
    ["buy", "denied", true],
  ])
  const events = ctx.ws.frames("event").filter((e) => e.kind === "consent")
  assert.equal(events.length, 2)
  assert.equal(events[1].detail.shown.length, 200, "the shown label is capped")
  assert.equal(events[1].detail.mismatch, true)
  assert.equal(ctx.api.recordConsent({ shown: "x" }), false, "resolved is required")
})

test("consentMismatch: name, title or description, or the name as a word", () => {
  const d = { name: "add_to_cart", title: "Add to cart", description: "Put an item in the cart" }
  assert.equal(consentMismatch("Add to cart", "add_to_cart", d), false)
  assert.equal(consentMismatch("  put an ITEM in the cart ", "add_to_cart", d), false)
  assert.equal(consentMismatch("Allow add_to_cart?", "add_to_cart", d), false)
  assert.equal(consentMismatch("Delete your account", "add_to_cart", d), true)
  assert.equal(consentMismatch("Allow add_to_cart_all?", "add_to_cart", d), true)
  assert.equal(consentMismatch("", "add_to_cart", d), true)
  assert.equal(consentMismatch("search", "search", null), false)
})

test("payload capture off (default): no payload frame, no body anywhere", async () => {
  const bus = channelBus()
  const ctx = await connectedAgent({ config: { BroadcastChannel: bus.BroadcastChannel } })
  await reg(ctx, tool("echo", (i) => "echo " + i.q))
  await run(ctx, "echo", { q: CANARY })
  assert.equal(ctx.ws.frames("payload").length, 0)
  assert.ok(!JSON.stringify(ctx.ws.sent).includes(CANARY))
  assert.ok(!JSON.stringify(bus.log).includes(CANARY))
})

test("payload capture on: a payload frame BEFORE the span, truncated; never the channel or report", async () => {
  const bus = channelBus()
  const ctx = await connectedAgent({ config: { capturePayloads: true, maxPayloadLength: 16, BroadcastChannel: bus.BroadcastChannel } })
  await reg(ctx, tool("echo", (i) => "echo " + i.q))
  await reg(ctx, tool("fail", () => { throw new Error("no") }))
  await run(ctx, "echo", { q: CANARY })
  await run(ctx, "fail", { q: 1 })
  const order = ctx.ws.sent.filter((f) => f.type === "payload" || f.type === "spans").map((f) => (f.type === "payload" ? `payload:${f.seq}` : `spans:${f.spans.map((s) => s.seq)}`))
  assert.deepEqual(order.slice(0, 2), ["payload:0", "spans:0"])
  assert.ok(order.indexOf("payload:1") < order.indexOf("spans:1"))
  const [p0, p1] = ctx.ws.frames("payload")
  const args = JSON.stringify({ q: CANARY })
  assert.deepEqual(p0, { type: "payload", session: ctx.id, seq: 0, arguments: `${args.slice(0, 16)}...[${args.length} chars]`, result: `${("echo " + CANARY).slice(0, 16)}...[${("echo " + CANARY).length} chars]` },
    "cut as 001 cuts: the head, then how long the whole was")
  assert.deepEqual([p1.arguments, p1.result, p1.error], ['{"q":1}', null, "no"], "a thrown error's message rides along (webmcp.error.message)")
  const elsewhere = ctx.ws.sent.filter((f) => f.type !== "payload")
  for (const [where, text] of Object.entries({ socket: JSON.stringify(elsewhere), channel: JSON.stringify(bus.log), report: JSON.stringify(ctx.api.report()), summary: ctx.api.summary(), spans: JSON.stringify(ctx.api.spans()) })) {
    assert.ok(!text.includes(CANARY.slice(0, 10)), `leaked into ${where}`)
  }
})

test("maxPayloadLength defaults to 2048 and is capped at the relay's 65536", async () => {
  let ctx = await connectedAgent({ config: { capturePayloads: true } })
  await reg(ctx, tool("big", () => "z".repeat(100000)))
  await run(ctx, "big")
  assert.equal(ctx.ws.frames("payload")[0].result, `${"z".repeat(2048)}...[100000 chars]`)
  ctx = await connectedAgent({ config: { capturePayloads: true, maxPayloadLength: 10 ** 7 } })
  await reg(ctx, tool("big", () => "z".repeat(100000)))
  await run(ctx, "big")
  assert.equal(ctx.ws.frames("payload")[0].result, `${"z".repeat(65536)}...[100000 chars]`)
  assert.equal((await ctx.api.describe()).settings.maxPayloadLength, 65536)
})

test("cutPayload: 001's marker, never a split surrogate pair", () => {
  assert.equal(cutPayload("abc", 3), "abc")
  assert.equal(cutPayload("abcd", 3), "abc...[4 chars]")
  assert.equal(cutPayload("a😀b", 2), "a...[4 chars]")
})
