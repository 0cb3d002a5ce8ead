// The macrotask scheduler the collector and the agent's composer use: in a module of its own, not in util.js,
// because util.js is part of the agent's eager part (page/eager.js) and nothing there schedules tasks.

import { safely } from "./util.js"

/**
 * Schedule `fn` as a macrotask, off the caller's await chain: a MessageChannel where there is one
 * (not throttled in hidden tabs), else setTimeout. Returns nothing; errors are swallowed.
 */
export function makeTaskScheduler(g = globalThis) {
  if (typeof g.MessageChannel === "function") {
    const ch = new g.MessageChannel()
    let queue = []
    ch.port1.onmessage = () => {
      const q = queue
      queue = []
      for (const f of q) safely(f)
    }
    // Node's ports keep the process alive; browsers have no unref.
    const port = /** @type {MessagePort & {unref?: () => void}} */ (ch.port1)
    if (typeof port.unref === "function") port.unref()
    const post = () => ch.port2.postMessage(0)
    const schedule = (fn) => {
      queue.push(fn)
      if (queue.length === 1) post()
    }
    schedule.close = () => {
      safely(() => ch.port1.close())
      safely(() => ch.port2.close())
    }
    return schedule
  }
  const schedule = (fn) => setTimeout(() => safely(fn), 0)
  schedule.close = () => {}
  return schedule
}
