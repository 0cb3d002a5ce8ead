// long_tasks.js alone: each Long-Task millisecond goes to one call, the most recently invoked one running then.
import { test } from "node:test"
import assert from "node:assert/strict"
import { attributeLongTasks } from "../src/page/long_tasks.js"

const call = (seq, invokedAt, settledAt) => ({ seq, invokedAt, settledAt, blocking: 0 })

test("overlapping calls: the newer call takes the time it shares, the older the rest, nothing twice", () => {
  const a = call(0, 0, 100)
  const b = call(1, 40, null) // still running
  const touched = attributeLongTasks([{ startTime: 20, duration: 60 }], [[a], [b]])
  assert.equal(a.blocking, 20, "20..40: only a ran")
  assert.equal(b.blocking, 40, "40..80: b is the newer")
  assert.equal(a.blocking + b.blocking, 60, "the task's 60 ms counted once")
  assert.deepEqual(Array.from(touched.keys()).sort(), [0, 1])
})

test("a task after a call settled is not that call's; one before any call is nobody's", () => {
  const a = call(0, 10, 30)
  const touched = attributeLongTasks([{ startTime: 25, duration: 50 }, { startTime: 0, duration: 5 }], [[a]])
  assert.equal(a.blocking, 5, "25..30 only")
  assert.equal(touched.size, 1)
  assert.equal(attributeLongTasks([{ startTime: 40, duration: 5 }], [[a]]).size, 0)
})

test("groups are read again for every entry, and time adds up across entries", () => {
  const a = call(3, 0, null)
  attributeLongTasks([{ startTime: 0, duration: 50 }, { startTime: 100, duration: 60 }], [[a]])
  assert.equal(a.blocking, 110)
})

test("two calls invoked at the same moment: the higher seq takes it", () => {
  const a = call(0, 0, null)
  const b = call(1, 0, null)
  attributeLongTasks([{ startTime: 0, duration: 50 }], [[b, a]])
  assert.deepEqual([a.blocking, b.blocking], [0, 50])
})
