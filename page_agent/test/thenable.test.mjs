// The agent must not change what the caller gets: a thenable's `then` is read once and runs once, measured or
// not (issue 11, item 11). Counted against the same host without the agent.
import { test } from "node:test"
import assert from "node:assert/strict"
import { DraftHost, setup, settle } from "../test-support/helpers.mjs"

function counting() {
  const n = { reads: 0, runs: 0 }
  const thenable = {
    get then() {
      n.reads++
      return (resolve) => {
        n.runs++
        resolve(`ok ${n.runs}`)
      }
    },
  }
  return { n, thenable }
}

async function callThrough(host, execute) {
  await host.registerTool({ name: "t", description: "d", execute })
  await settle()
  return host.executeTool({ name: "t" }, {})
}

test("without the agent: the host's own await reads `then` once and runs it once (the baseline)", async () => {
  const { n, thenable } = counting()
  assert.equal(await callThrough(new DraftHost(), () => thenable), "ok 1")
  assert.deepEqual(n, { reads: 1, runs: 1 })
})

for (const sample of [1, 0]) {
  test(`with the agent (sample ${sample}): the same text, \`then\` read once and run once`, async () => {
    const ctx = setup({ config: { sample } })
    const { n, thenable } = counting()
    assert.equal(await callThrough(ctx.host, () => thenable), "ok 1")
    await settle()
    ctx.env.run()
    assert.deepEqual(n, { reads: 1, runs: 1 })
    if (sample === 1) assert.equal(ctx.api.spans().length, 1, "and the call is measured")
  })
}

test("a then that calls back twice and then throws: the first outcome counts, like a promise", async () => {
  const ctx = setup()
  const thenable = {
    then(resolve, reject) {
      resolve("first")
      resolve("second")
      reject(new Error("late"))
      throw new Error("after")
    },
  }
  assert.equal(await callThrough(ctx.host, () => thenable), "first")
  await settle()
  ctx.env.run()
  const [span] = ctx.api.spans()
  assert.equal(span.isError, false)
})
