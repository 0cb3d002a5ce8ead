// pacing.js alone: the Pacer (when settled calls are accounted and when the outlets' batches are told to leave),
// the Lane (an outlet's batch timer) and the uplink's Cadence, with hand-driven timers, tasks and microtasks (no
// collector, no socket).
import { test } from "node:test"
import assert from "node:assert/strict"
import { Pacer, Lane, Cadence, ledgerWait, LEDGER_EVERY_MS, UNWATCHED_LEDGER_MS, HOLD_MS, HOLD_CALLS, QUIET_WAIT_MS, FLUSH_MS, BUSY_MS, MAX_FLUSH_MS } from "../src/transport/pacing.js"

function rig(windowMs = 0) {
  let t = 0
  const tasks = []
  const micro = []
  const timers = []
  const told = []
  const pacer = new Pacer({
    windowMs,
    clock: () => t,
    schedule: (fn) => tasks.push(fn),
    setTimeout: (fn, ms) => timers.push({ fn, ms, live: true }) - 1,
    clearTimeout: (id) => (timers[id].live = false),
    microtask: (fn) => micro.push(fn),
  })
  const stage = {
    pending: [],
    inFlight: new Map(),
    batches: [],
    flush() {
      pacer.flushScheduled = false
      if (!stage.pending.length) return
      const batch = stage.pending
      stage.pending = []
      const windowed = pacer.accounting()
      stage.batches.push({ batch, windowed })
      pacer.accounted(windowed)
    },
  }
  pacer.accounts = stage
  pacer.outlets.push({ windowEnded: () => told.push("windowEnded"), quiet: () => told.push("quiet") })
  const settle = (n = 1) => {
    for (let i = 0; i < n; i++) stage.pending.push({ seq: stage.pending.length })
    pacer.due()
  }
  const fire = (i) => {
    const tm = timers[i]
    assert.equal(tm.live, true, "the timer fired was still armed")
    tm.live = false
    tm.fn()
  }
  const live = () => timers.filter((x) => x.live)
  return { pacer, stage, tasks, micro, timers, told, settle, fire, live, tick: (ms) => (t += ms) }
}

test("no window: one task per burst of settles, its batch quiet for the outlets", () => {
  const r = rig(0)
  r.settle()
  r.settle()
  assert.equal(r.tasks.length, 1, "a second settle rides on the task already queued")
  r.tasks.shift()()
  assert.deepEqual(r.stage.batches.map((b) => [b.batch.length, b.windowed]), [[2, false]])
  assert.deepEqual(r.told, ["quiet"])
  r.settle()
  assert.equal(r.tasks.length, 1, "after a batch, the next settle queues a task again")
})

test("a window: settles wait for it, it accounts in its own timer's task, and the outlets' batches leave at once", () => {
  const r = rig(FLUSH_MS)
  r.settle()
  r.settle()
  assert.equal(r.tasks.length, 0)
  assert.deepEqual(r.live().map((x) => x.ms), [FLUSH_MS], "one window timer, the quiet length")
  r.fire(0)
  assert.deepEqual(r.stage.batches.map((b) => [b.batch.length, b.windowed]), [[2, true]])
  assert.deepEqual(r.told, ["windowEnded"])
  r.tick(10)
  r.settle()
  assert.equal(r.timers[1].ms, FLUSH_MS * 5, "a batch accounted under BUSY_MS ago: the busy window")
  r.tick(BUSY_MS)
  r.fire(1)
  r.settle()
  assert.equal(r.timers[2].ms, MAX_FLUSH_MS)
})

test("a read accounts early: the window closes, and its batch still counts as windowed", () => {
  const r = rig(FLUSH_MS)
  r.settle()
  r.stage.flush()
  assert.equal(r.live().length, 0, "the window's timer is cleared")
  assert.deepEqual(r.told, ["windowEnded"])
  r.stage.flush()
  assert.equal(r.stage.batches.length, 1, "nothing pending: no batch, nothing told")
})

test("while the page awaits executeTool, accounting waits for its answer (then in a microtask), HOLD_MS at most", () => {
  const r = rig(0)
  const answered = r.pacer.pageWait()
  assert.equal(r.pacer.calling(), true)
  r.settle()
  assert.equal(r.tasks.length, 0, "no task of its own while the page waits")
  assert.deepEqual(r.live().map((x) => x.ms), [HOLD_MS])
  answered()
  answered()
  assert.equal(r.pacer.pageWaits, 0, "a release counts once")
  assert.equal(r.micro.length, 1, "behind the page's own continuation, in the same task")
  r.micro.shift()()
  assert.equal(r.stage.batches.length, 1)
  assert.equal(r.pacer.calling(), false)
  r.pacer.pageWait()
  r.settle()
  assert.equal(r.live().length, 1, "one deadline timer at a time: the first one is left to run out")
  r.fire(0)
  assert.equal(r.micro.length, 1, "no answer by the deadline: accounted all the same")
  r.micro.shift()()
  assert.equal(r.stage.batches.length, 2)
})

test("HOLD_CALLS settled calls are accounted whatever holds them", () => {
  const r = rig(FLUSH_MS)
  r.pacer.pageWait()
  r.settle(HOLD_CALLS)
  assert.equal(r.tasks.length, 1)
})

test("a window that runs out while the page awaits an answer waits for it, QUIET_WAIT_MS at most, then accounts at once", () => {
  const r = rig(FLUSH_MS)
  r.settle()
  r.pacer.pageWait()
  r.fire(0)
  assert.equal(r.stage.batches.length, 0)
  assert.deepEqual(r.live().map((x) => x.ms), [QUIET_WAIT_MS])
  r.fire(1)
  assert.deepEqual(r.stage.batches.map((b) => b.windowed), [true], "in the deadline's own task")
  assert.deepEqual(r.told, ["windowEnded"])
})

test("stop clears the pacer's timers", () => {
  const r = rig(FLUSH_MS)
  r.settle()
  r.pacer.stop()
  assert.equal(r.live().length, 0)
})

// ---- Lane: an outlet's batch timer ----------------------------------------------------------------------------

function lane({ calling = () => false, alignQuiet = true, st } = {}) {
  let t = 0
  const timers = []
  const runs = []
  const l = new Lane({
    setTimeout: st || ((fn, ms) => timers.push({ fn, ms, live: true }) - 1),
    clearTimeout: (id) => (timers[id].live = false),
    clock: () => t,
    alignQuiet,
    calling,
  })
  const fire = (i) => {
    timers[i].live = false
    timers[i].fn()
  }
  return { l, timers, runs, fire, run: (aligned) => runs.push(aligned), tick: (ms) => (t += ms) }
}

test("Lane: a quiet page's batch leaves when its window ends", () => {
  const r = lane({ calling: () => true })
  assert.equal(r.l.arm(FLUSH_MS, () => -Infinity, r.run), true)
  assert.equal(r.l.armed, true)
  r.fire(0)
  assert.deepEqual(r.runs, [false], "no batch left lately: not busy, even with a call under way")
  assert.equal(r.l.armed, false)
})

test("Lane: a busy page's batch, a call under way, waits for quiet (QUIET_WAIT_MS at most); cancel ends the wait", () => {
  let calling = true
  const r = lane({ calling: () => calling })
  r.tick(5000)
  r.l.arm(MAX_FLUSH_MS, () => 4900, r.run)
  r.fire(0)
  assert.deepEqual(r.runs, [])
  assert.equal(r.l.awaitingQuiet, true)
  assert.deepEqual([r.timers[1].ms, r.l.armed], [QUIET_WAIT_MS, true])
  r.fire(1)
  assert.deepEqual(r.runs, [true], "the deadline: it leaves, aligned")
  r.l.arm(MAX_FLUSH_MS, () => 4900, r.run)
  r.fire(2)
  r.l.cancel()
  assert.deepEqual([r.l.awaitingQuiet, r.l.armed, r.timers[3].live], [false, false, false])
  calling = false
  r.l.arm(MAX_FLUSH_MS, () => 4900, r.run)
  r.fire(4)
  assert.deepEqual(r.runs, [true, false], "no call under way: the page is between calls, the batch leaves")
  const off = lane({ calling: () => true, alignQuiet: false })
  off.tick(5000)
  off.l.arm(FLUSH_MS, () => 4990, off.run)
  off.fire(0)
  assert.deepEqual(off.runs, [false], "alignQuiet off: never waits")
})

test("Lane: no timer to be had says so (the outlet sends now); a timer that runs at once leaves nothing armed", () => {
  const broken = lane({ st: () => { throw new Error("no timers here") } })
  assert.equal(broken.l.arm(FLUSH_MS, () => -Infinity, broken.run), false)
  assert.equal(broken.l.armed, false)
  const sync = lane({ st: (fn) => { fn(); return 7 } })
  assert.equal(sync.l.arm(FLUSH_MS, () => -Infinity, sync.run), true)
  assert.deepEqual([sync.runs, sync.l.armed], [[false], false])
})

test("ledgerWait: a changed ledger leaves at most once a second watched, every UNWATCHED_LEDGER_MS unwatched", () => {
  assert.equal(ledgerWait(-Infinity, 10, true), 0, "never sent: now")
  assert.equal(ledgerWait(1000, 1200, true), LEDGER_EVERY_MS - 200)
  assert.equal(ledgerWait(1000, 1200, false), UNWATCHED_LEDGER_MS - 200)
  assert.equal(ledgerWait(1000, 1000 + LEDGER_EVERY_MS, true), 0)
  assert.equal(ledgerWait(1000, 9000, false), 0, "overdue: now, never a negative wait")
})

function cadence({ flushMs = FLUSH_MS, mark = 4, calling = () => false } = {}) {
  let t = 0
  const timers = []
  const tasks = []
  const left = []
  const sessions = ["abcdef01"]
  const c = new Cadence({
    flushMs,
    mark,
    clock: () => t,
    schedule: (fn) => tasks.push(fn),
    setTimeout: (fn, ms) => timers.push({ fn, ms, live: true }) - 1,
    clearTimeout: (id) => (timers[id].live = false),
    alignQuiet: true,
    calling,
    sessions: () => sessions,
    leave: () => left.push(t),
  })
  const fire = () => {
    const live = timers.filter((x) => x.live)
    for (const x of live) x.live = false
    for (const x of live) x.fn()
    return live.map((x) => x.ms)
  }
  return { c, timers, tasks, left, sessions, fire, tick: (ms) => (t += ms) }
}

test("Cadence: watched, a batch leaves after FLUSH_MS, BUSY_FACTOR times that while busy; no window: the next task", () => {
  const r = cadence()
  r.c.due()
  r.c.due()
  assert.deepEqual(r.fire(), [FLUSH_MS], "one window for everything due meanwhile")
  assert.deepEqual(r.left, [0])
  r.c.carried()
  r.c.due()
  assert.deepEqual(r.fire(), [MAX_FLUSH_MS], "a batch carried spans under BUSY_MS ago: busy")
  const none = cadence({ flushMs: 0 })
  none.c.due()
  assert.equal(none.timers.length, 0)
  none.tasks.shift()()
  assert.equal(none.left.length, 1)
})

test("Cadence: unwatched, the relay's interval; the mark and a resume ack send at once; watched again: leave now", () => {
  const r = cadence({ flushMs: 0 })
  assert.equal(r.c.told({ session: "abcdef01", watched: false, intervalMs: 2000 }), false)
  assert.equal(r.c.told({ session: "abcdef01", watched: "no", intervalMs: 1 }), false, "malformed: ignored")
  assert.equal(r.c.interval(), 2000)
  r.c.due()
  assert.equal(r.timers.at(-1).ms, 2000)
  for (let i = 0; i < 4; i++) r.c.spansReady()
  assert.equal(r.timers.at(-1).live, false, "the mark cancels the interval's wait")
  assert.equal(r.c.scheduled, false)
  r.c.leaving()
  r.c.resumed()
  assert.equal(r.c.window(), 0, "what the relay lacks after a resume goes now")
  r.c.leaving()
  assert.equal(r.c.window(), 2000)
  assert.equal(r.c.leavesAtWindowEnd(), false, "the accounting's window is not the batch's")
  assert.equal(r.c.told({ session: "abcdef01", watched: true, intervalMs: 100 }), true, "became watched: leave now")
  assert.equal(r.c.leavesAtWindowEnd(), true)
  r.sessions.push("eeeeeeee")
  r.c.forget("abcdef01")
  assert.equal(r.c.watched(), true, "a session never told is watched")
})

test("Cadence: a busy page's batch, a call under way, waits for the quiet moment; a flush asked for ends the wait", () => {
  const r = cadence({ calling: () => true })
  r.c.carried()
  r.c.due()
  r.fire()
  assert.deepEqual([r.left.length, r.c.awaitingQuiet(), r.c.leavesAtWindowEnd()], [0, true, true])
  r.c.asked()
  r.c.leaving()
  assert.deepEqual([r.c.awaitingQuiet(), r.c.scheduled, r.timers.some((x) => x.live)], [false, false, false])
  r.c.due()
  r.c.stop()
  assert.equal(r.timers.some((x) => x.live), false)
})
