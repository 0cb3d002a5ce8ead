// page/commands.js alone: the terminal's `invoke`, with a stand-in collector, uplink and interceptor.
import { test } from "node:test"
import assert from "node:assert/strict"
import { runCommand } from "../src/page/commands.js"

function rig(execute) {
  const sent = []
  const marks = []
  const tool = { name: "echo", execute }
  const agent = {
    collector: {
      sessionId: "abcdef01",
      active: true,
      expectTerminal(name) {
        marks.push(["mark", name])
        return () => marks.push(["unmark", name])
      },
    },
    uplink: { send: (id, f) => sent.push([id, f]) },
    interceptor: { hosts: new Map(), live: new Map([["echo", { tool, wrapper: null, host: { deref: () => null } }]]) },
  }
  return { agent, sent, marks }
}

const invoke = (over = {}) => ({ type: "command", id: "c1", session: "abcdef01", name: "invoke", args: { tool: "echo", input: { q: "é" } }, ...over })

test("invoke: the tool runs as the terminal's call, and its text goes back in one result frame with its UTF-8 bytes", async () => {
  const r = rig((input) => `got ${input.q}`)
  await runCommand(r.agent, invoke())
  assert.deepEqual(r.marks, [["mark", "echo"], ["unmark", "echo"]], "marked the terminal's, and the mark withdrawn after")
  const [[id, f]] = r.sent
  assert.equal(id, "abcdef01")
  assert.deepEqual([f.type, f.id, f.session, f.ok, f.text, f.resultBytes], ["result", "c1", "abcdef01", true, "got é", 6])
  assert.equal(typeof f.wallMs, "number")
})

test("invoke: a throw answers with its name and message; an unknown tool or command says so", async () => {
  const r = rig(() => {
    throw new RangeError("too far")
  })
  await runCommand(r.agent, invoke())
  await runCommand(r.agent, invoke({ args: { tool: "nope" } }))
  await runCommand(r.agent, invoke({ name: "format-disk" }))
  assert.deepEqual(
    r.sent.map(([, f]) => [f.ok, f.error]),
    [
      [false, "RangeError: too far"],
      [false, "unknown tool: nope"],
      [false, "unknown command: format-disk"],
    ],
  )
})

test("a command for another session, with a malformed id, or after detach is not answered at all", async () => {
  const r = rig(() => "x")
  await runCommand(r.agent, invoke({ session: "00000000" }))
  await runCommand(r.agent, invoke({ id: "has space" }))
  await runCommand(r.agent, invoke({ id: "x".repeat(33) }))
  r.agent.collector.active = false
  await runCommand(r.agent, invoke())
  assert.deepEqual(r.sent, [])
  assert.deepEqual(r.marks, [], "no tool ran")
})
