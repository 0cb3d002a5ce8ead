// The hand-over from the early buffer (early.js) to the collector, once the rest of the agent is here: part of
// the rest, not of the eager part (nothing runs it before the rest arrives).

import { safely, now, wall } from "../shared/util.js"

/** A time this large is the wall clock's (ms since 1970: util.js stamp()), not the page's (ms since its time origin). */
const WALL = 1e12

/** wall clock − page clock, fixed at the first conversion (null: none yet) */
let offset = null

/**
 * A stamp() of the early buffer on the page's clock. One offset for every stamp, so that their order holds (read
 * at each conversion, it moved by up to 1 ms as the wall clock's millisecond turned, and a call converted after
 * the previous one's settle could start before it: a negative gap, and the relay refused the batch). `+ 1` makes
 * the offset at least the true one (the wall clock reads whole milliseconds, rounded down): a converted stamp is
 * never later than the page clock's reading of the same moment, nor than any later reading.
 */
export function pageTime(t) {
  if (t < WALL) return t
  if (offset === null) {
    const p = now()
    offset = p >= WALL ? 0 : wall() + 1 - p // no page clock: the "page clock" is the wall clock
  }
  return Math.max(0, t - offset)
}

/**
 * The collector is here: replay every event at its own time (the collector's clock reads the event's), then
 * forward. Calls still running keep their seq, so their async frames still name them.
 * @param {import("./early.js").EarlyLog} log  the early buffer
 * @param {any} c  the Collector
 */
export function handOver(log, c) {
  if (log.real) return
  log.real = c
  log.stopWatching()
  if (log.arrived) log.arrived()
  c.pageWaits += log.waits
  for (const r of log.extraReasons) c.extraReasons.add(r)
  const clock = c.clock
  const stack = c.stack
  // Buffered calls keep their seq (their async frames name it) unless the collector has given out seqs already.
  const keepSeq = c.seq === 0
  const events = log.events
  log.events = []
  try {
    for (const e of events) {
      const at = pageTime(e.at)
      c.clock = () => at
      if (e.name === "enter") {
        const call = e.args[0]
        c.stack = call.parent && call.parent.real ? [call.parent.real] : []
        if (keepSeq) c.seq = call.seq
        call.real = safely(() => c.enter(call.tool, call.input, call.profile, call.opts), null)
        call.input = undefined
      } else if (e.name === "settle") {
        const call = e.args[0]
        if (call.real) safely(() => c.settle(call.real, e.args[1], e.args[2]))
      } else if (e.name === "message") {
        const [side, ev] = e.args
        if (c.wire) safely(() => (side === "own" ? c.wire.onOwnWindow(ev) : c.wire.onParentWindow(ev)))
      } else safely(() => c[e.name](...e.args))
    }
  } finally {
    c.clock = clock
    c.stack = stack
    if (keepSeq) c.seq = Math.max(c.seq, log.seq)
  }
  log.stack = stack
  log.running.clear()
  log.expected = []
  c.statusChanged()
}
