// The Prompt API lane (issue 8): LanguageModel.create / prompt / promptStreaming / clone / destroy wrapped
// in a fake window; every step a `prompt` frame with counts, never text; streams pass the original chunks.
import { test } from "node:test"
import assert from "node:assert/strict"
import { setup, settle, FakeWebSocket, manualEnv, fakeWindow, DraftHost, CANARY, RELAY } from "../test-support/helpers.mjs"
import { countChars, countInput } from "../src/page/prompt.js"

/** A stand-in for Chromium's LanguageModel: answers are scripted, time is the test's manual clock. */
function fakeLanguageModel(env, { chunks = ["Hel", "lo ", "😀", CANARY], answer = "Bonjour " + CANARY, failStream = false } = {}) {
  const log = { reads: 0, destroyed: 0 }
  class Session {
    async prompt(input) {
      env.tick(40)
      if (input === "fail") throw Object.assign(new Error("quota exceeded"), { name: "QuotaExceededError" })
      return answer
    }
    promptStreaming() {
      let i = 0
      return new ReadableStream(
        {
          pull(ctl) {
            log.reads++
            env.tick(i === 0 ? 25 : 5)
            if (failStream && i === 2) return ctl.error(Object.assign(new Error("aborted"), { name: "AbortError" }))
            if (i < chunks.length) ctl.enqueue(chunks[i++])
            else ctl.close()
          },
        },
        { highWaterMark: 0 },
      )
    }
    async clone() {
      env.tick(3)
      return new Session()
    }
    destroy() {
      log.destroyed++
    }
  }
  const LM = class {
    static async availability() {
      return "available"
    }
    static async create(opts) {
      env.tick(10)
      if (opts && opts.fail) throw Object.assign(new Error("not available"), { name: "NotSupportedError" })
      return new Session()
    }
  }
  return { LM, log }
}

async function withLM(options = {}, config = {}) {
  FakeWebSocket.instances = []
  const env = manualEnv()
  const g = fakeWindow({ host: new DraftHost() })
  const fake = fakeLanguageModel(env, options)
  g.LanguageModel = fake.LM
  g.ReadableStream = ReadableStream
  const ctx = setup({ env, g, host: g.document.modelContext, config: { WebSocket: FakeWebSocket, uplink: RELAY, ...config } })
  const ws = FakeWebSocket.last()
  ws.accept()
  env.run()
  return { ...ctx, ws, fake, id: ctx.api.sessionId }
}

const flush = async (ctx) => {
  await settle()
  ctx.env.run()
}

test("countChars and countInput count code points of text only", () => {
  assert.equal(countChars("héllo"), 5)
  assert.equal(countChars("😀😀"), 2)
  assert.equal(countChars(42), 0)
  assert.equal(countInput("abc"), 3)
  assert.equal(countInput([{ role: "system", content: "ab" }, { role: "user", content: [{ type: "text", value: "cde" }, { type: "image", value: {} }] }]), 5)
  assert.equal(countInput({ role: "user", content: "x😀" }), 2)
})

test("create, prompt, clone, destroy: one frame per step, timings and counts, no text", async () => {
  const ctx = await withLM()
  const s = await ctx.g.LanguageModel.create({ temperature: 1 })
  const answer = await s.prompt("Say hi " + CANARY)
  assert.equal(answer, "Bonjour " + CANARY, "the page gets the model's answer unchanged")
  await assert.rejects(s.prompt("fail"), /quota exceeded/)
  const c = await s.clone()
  await c.prompt([{ role: "user", content: "abc" }])
  c.destroy()
  s.destroy()
  await flush(ctx)
  const frames = ctx.ws.frames("prompt")
  const rows = frames.map(({ type, session, at, ...rest }) => rest)
  const [id1, id2] = [frames[0].promptSession, frames[3].promptSession]
  assert.match(id1, new RegExp(`^${ctx.id}-\\d+$`))
  assert.notEqual(id1, id2)
  assert.deepEqual(rows, [
    { promptSession: id1, kind: "create", seq: 0, totalMs: 10 },
    { promptSession: id1, kind: "prompt", seq: 0, totalMs: 40, charsIn: 7 + CANARY.length, charsOut: 8 + CANARY.length, error: null },
    { promptSession: id1, kind: "prompt", seq: 1, totalMs: 40, charsIn: 4, charsOut: 0, error: "quota exceeded" },
    { promptSession: id2, kind: "create", seq: 0, totalMs: 3 },
    { promptSession: id2, kind: "prompt", seq: 0, totalMs: 40, charsIn: 3, charsOut: 8 + CANARY.length, error: null },
    { promptSession: id2, kind: "destroy", seq: 0 },
    { promptSession: id1, kind: "destroy", seq: 0 },
  ])
  assert.equal(ctx.fake.log.destroyed, 2)
  assert.ok(frames.every((f) => f.session === ctx.id))
  assert.ok(!JSON.stringify(ctx.ws.sent).includes(CANARY))
  assert.ok(!JSON.stringify(ctx.api.prompts()).includes(CANARY))
  assert.equal(ctx.api.prompts().length, 2)
})

test("promptStreaming: the page reads exactly the original chunks; counts and first-chunk time are exact", async () => {
  const ctx = await withLM()
  const s = await ctx.g.LanguageModel.create()
  const stream = s.promptStreaming("Tell me")
  assert.ok(stream instanceof ReadableStream)
  assert.equal(ctx.fake.log.reads, 0, "nothing is read before the page reads")
  const got = []
  const reader = stream.getReader()
  const first = await reader.read()
  got.push(first.value)
  assert.equal(ctx.fake.log.reads, 1, "one read for one chunk: no read-ahead, no buffering")
  for (;;) {
    const r = await reader.read()
    if (r.done) break
    got.push(r.value)
  }
  await flush(ctx)
  assert.deepEqual(got, ["Hel", "lo ", "😀", CANARY])
  const [, step] = ctx.ws.frames("prompt")
  const { type, session, at, promptSession, ...rest } = step
  assert.deepEqual(rest, { kind: "stream", seq: 0, totalMs: 25 + 5 * 4, firstChunkMs: 25, chunks: 4, charsIn: 7, charsOut: 3 + 3 + 1 + CANARY.length, error: null })
  assert.ok(!JSON.stringify(ctx.ws.sent).includes(CANARY))
})

test("promptStreaming with for-await, a failing stream, and a page that cancels", async () => {
  let ctx = await withLM()
  let s = await ctx.g.LanguageModel.create()
  const got = []
  for await (const chunk of s.promptStreaming("x")) got.push(chunk)
  assert.deepEqual(got, ["Hel", "lo ", "😀", CANARY])
  ctx = await withLM({ failStream: true })
  s = await ctx.g.LanguageModel.create()
  const reader = s.promptStreaming("x").getReader()
  await reader.read()
  await reader.read()
  await assert.rejects(reader.read(), /aborted/)
  await flush(ctx)
  let step = ctx.ws.frames("prompt")[1]
  assert.deepEqual([step.chunks, step.charsOut, step.error], [2, 6, "aborted"])
  ctx = await withLM()
  s = await ctx.g.LanguageModel.create()
  const r2 = s.promptStreaming("x").getReader()
  await r2.read()
  await r2.cancel()
  await flush(ctx)
  step = ctx.ws.frames("prompt")[1]
  assert.deepEqual([step.chunks, step.error], [1, "cancelled"])
})

test("create that fails is a create step with the error; the older ai.languageModel shape is wrapped too", async () => {
  let ctx = await withLM()
  await assert.rejects(ctx.g.LanguageModel.create({ fail: true }), /not available/)
  await flush(ctx)
  assert.deepEqual(ctx.ws.frames("prompt").map((f) => [f.kind, f.error]), [["create", "not available"]])

  FakeWebSocket.instances = []
  const env = manualEnv()
  const g = fakeWindow({ host: new DraftHost() })
  const fake = fakeLanguageModel(env)
  g.ai = { languageModel: { create: fake.LM.create } }
  const c2 = setup({ env, g, host: g.document.modelContext, config: { WebSocket: FakeWebSocket, uplink: RELAY } })
  const ws = FakeWebSocket.last()
  ws.accept()
  env.run()
  const s = await g.ai.languageModel.create()
  await s.prompt("hi")
  await settle()
  env.run()
  assert.deepEqual(ws.frames("prompt").map((f) => f.kind), ["create", "prompt"])
  assert.equal(c2.api.prompts()[0].api, "ai.languageModel")
})

test("a LanguageModel that appears late is found by the sweep; detach restores create", async () => {
  FakeWebSocket.instances = []
  const env = manualEnv()
  const g = fakeWindow({ host: null })
  const ctx = setup({ env, g, config: { WebSocket: FakeWebSocket, uplink: RELAY } })
  const fake = fakeLanguageModel(env)
  const original = fake.LM.create
  g.LanguageModel = fake.LM
  env.advance(250)
  assert.notEqual(g.LanguageModel.create, original, "wrapped by the sweep")
  ctx.api.detach()
  assert.equal(g.LanguageModel.create, original, "restored")
})

test("prompts: false leaves the Prompt API alone", async () => {
  const ctx = await withLM({}, { prompts: false })
  const s = await ctx.g.LanguageModel.create()
  await s.prompt("x")
  await flush(ctx)
  assert.equal(ctx.ws.frames("prompt").length, 0)
})

test("capturePayloads: the prompt's and the answer's text on payload frames (cut), only to a relay that wants them", async () => {
  const ctx = await withLM({ chunks: ["Hel", "lo ", CANARY] }, { capturePayloads: true, maxPayloadLength: 20 })
  const s = await ctx.g.LanguageModel.create()
  await s.prompt("Say hi " + CANARY)
  const reader = s.promptStreaming([{ role: "user", content: "stream" }]).getReader()
  while (!(await reader.read()).done);
  await flush(ctx)
  const frames = ctx.ws.frames("payload").map(({ type, session, ...rest }) => rest)
  const id = ctx.ws.frames("prompt")[0].promptSession
  const answer = "Bonjour " + CANARY
  const streamed = "Hello " + CANARY
  assert.deepEqual(frames, [
    { promptSession: id, seq: 0, arguments: `${("Say hi " + CANARY).slice(0, 20)}...[${7 + CANARY.length} chars]`, result: `${answer.slice(0, 20)}...[${answer.length} chars]` },
    { promptSession: id, seq: 1, arguments: '[{"role":"user","con...[36 chars]', result: `${streamed.slice(0, 20)}...[${streamed.length} chars]` },
  ])
  assert.ok(!JSON.stringify(ctx.ws.frames("prompt")).includes(CANARY), "the prompt frames still carry counts only")
  // The same page talking to a relay with no use for payloads (no --otlp, no --show-payloads) sends none.
  const quiet = await withLM({}, { capturePayloads: true })
  quiet.ws.deliver({ type: "welcome", protocol: "wmcp-relay/1", relay: "test", limits: {}, payloads: false })
  const q = await quiet.g.LanguageModel.create()
  await q.prompt("Say hi " + CANARY)
  await flush(quiet)
  assert.equal(quiet.ws.frames("payload").length, 0)
  assert.ok(!JSON.stringify(quiet.ws.sent).includes(CANARY))
})
