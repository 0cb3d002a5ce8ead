// The batch window shared by the uplink and the channel mirror. Every message a page sends costs the browser
// more than its script: a WebSocket send or a BroadcastChannel post is an IPC hop that wakes the renderer's
// and the browser's IO threads (and, for the channel, the browser's main thread) once per message, and on a
// laptop that is most of what watching costs the page. Messages gathered in a window leave together and
// share those wake-ups. After a quiet spell a window is FLUSH_MS; while the page keeps calling (a batch left
// under BUSY_MS ago) it stretches to BUSY_FACTOR times that, at most MAX_FLUSH_MS: a busy page pays four
// batches a second, a quiet one is seen within 50 ms. (Measured in tests/bench/test_observer_effect.py.)
// Everything that paces the agent is here: the accounting's windows (Pacer, at the end), each outlet's batch
// timer (Lane) and the uplink's cadence (Cadence: its window, watched or not); the uplink and the channel only
// say what leaving means.

import { safely } from "../shared/util.js"

export const FLUSH_MS = 50
export const MAX_FLUSH_MS = 250
export const BUSY_MS = 1000
const BUSY_FACTOR = 5

/**
 * The window for a batch opened at `now`, when the last batch carrying calls left at `lastAt`.
 * @param {number} flushMs  the quiet window (0: none)
 * @param {number} now
 * @param {number} lastAt
 */
export function batchWindow(flushMs, now, lastAt) {
  return isBusy(now, lastAt) ? Math.min(MAX_FLUSH_MS, Math.max(flushMs, flushMs * BUSY_FACTOR)) : flushMs
}

/** Is the page still calling (the last batch that carried calls left under BUSY_MS ago)? */
export const isBusy = (now, lastAt) => now - lastAt < BUSY_MS

// When a busy page's window ends while a call is under way (running, or its answer on its way back to the
// page), the batch waits for the page's next quiet moment: right after the agent accounted that call (behind
// the page's own continuation when the page awaited it). A batch sent at a random moment lands, a few times a
// second, on a call in progress (its send, the relay's ack and the browser's IPC for them delay that call),
// which is what moves a page's p95. With no call under way it leaves when its window ends: the page is between
// calls, and the last calls of a burst are not held back. At most MAX_FLUSH_MS more.
export const QUIET_WAIT_MS = MAX_FLUSH_MS

/**
 * One batch timer (an outlet's window, the uplink's and the channel mirror's; a session's ledger wait): a batch
 * leaves when its window ends, or, when the page is busy (its last batch under BUSY_MS before) and a call is under way then, at the page's next quiet
 * moment (quiet()), QUIET_WAIT_MS at most. The outlet says what its window is and what leaving means.
 */
export class Lane {
  /**
   * @param {object} o
   * @param {Function} o.setTimeout
   * @param {Function} o.clearTimeout
   * @param {() => number} o.clock
   * @param {boolean} [o.alignQuiet]  a busy page's batch waits for the quiet moment
   * @param {() => boolean} [o.calling]  is a call under way (the pacer's)?
   */
  constructor({ setTimeout: st, clearTimeout: ct, clock, alignQuiet = false, calling = () => false }) {
    this.st = st
    this.ct = ct
    this.clock = clock
    this.alignQuiet = !!alignQuiet
    this.calling = calling
    this.timer = null
    /** the window ended on a busy page with a call under way: the batch waits for quiet() */
    this.awaitingQuiet = false
  }

  get armed() {
    return this.timer !== null
  }

  /**
   * Open a window of `ms`: then `run(false)`, or, busy since `lastAt()` with a call under way, `run(true)` at the
   * quiet moment (or QUIET_WAIT_MS later). False when no timer can be had (the outlet sends now instead).
   * @param {number} ms
   * @param {() => number} lastAt  when the outlet's last batch carrying calls left
   * @param {(aligned: boolean) => void} run
   */
  arm(ms, lastAt, run) {
    return this.after(ms, () => {
      if (!this.alignQuiet || !isBusy(this.clock(), lastAt()) || !this.calling()) return run(false)
      this.awaitingQuiet = true
      if (!this.after(QUIET_WAIT_MS, () => run(true))) run(true)
    })
  }

  /** `fn` after `ms` on the lane's one timer; false when no timer can be had. */
  after(ms, fn) {
    let fired = false
    const id = safely(() => this.st(() => {
      fired = true
      this.timer = null
      safely(fn)
    }, ms), null)
    if (fired) return true // a timer that ran at once
    if (id === null || id === undefined) return false
    this.timer = id
    return true
  }

  /** The batch leaves now (whatever asked): the window's timer, and any wait for quiet, end. */
  cancel() {
    this.awaitingQuiet = false
    if (this.timer === null) return
    const t = this.timer
    this.timer = null
    safely(() => this.ct(t))
  }
}

// What is watched sets the cadence (issue 33). The relay says, with a `watch {session, watched, intervalMs}`
// frame after the hello's ack and whenever it changes, whether a viewer shows the session. Watched: the window
// above (the screen repaints four times a second). Unwatched: one flush per `intervalMs` (a second by default),
// sooner only when the unsent spans reach the mark, so the buffer never evicts what no socket carried; nothing
// while idle (a flush is armed only by something to send). The buffer, ack and replay rules are the same on
// both cadences. An agent never told (an older relay) is watched.
export const UNWATCHED_MS = 1000
const MAX_INTERVAL_MS = 10000
// The ledger (totals, registered tools, schema bytes) changes with every call but is read by a person: watched,
// once a second is enough, and each frame is a send the page pays for; unwatched, one every few batches. Half
// the frames of an unwatched busy page were ledgers (tests/bench: 11 frames in 5 s at 100 calls/s, 5 of them spans).
export const LEDGER_EVERY_MS = 1000
export const UNWATCHED_LEDGER_MS = 5000

/**
 * How long a session's changed ledger waits before its frame leaves (0: now).
 * @param {number} ledgerAt  when its last ledger frame left
 * @param {number} now
 * @param {boolean} watched
 */
export function ledgerWait(ledgerAt, now, watched) {
  return Math.max(0, ledgerAt + (watched ? LEDGER_EVERY_MS : UNWATCHED_LEDGER_MS) - now)
}

/**
 * A `watch` frame's state, checked: watched or not, and the interval (watched: at most MAX_FLUSH_MS; unwatched:
 * MAX_FLUSH_MS to MAX_INTERVAL_MS). Null when the frame is malformed.
 * @param {any} msg
 * @returns {{watched: boolean, intervalMs: number} | null}
 */
export function readWatch(msg) {
  if (!msg || typeof msg.watched !== "boolean" || !Number.isInteger(msg.intervalMs) || msg.intervalMs < 0) return null
  const intervalMs = msg.watched ? Math.min(msg.intervalMs, MAX_FLUSH_MS) : Math.min(Math.max(msg.intervalMs, MAX_FLUSH_MS), MAX_INTERVAL_MS)
  return { watched: msg.watched, intervalMs }
}

/**
 * The unsent spans that send an unwatched session's batch at once: half its buffer (the ring evicts at the
 * buffer), at most a frame's worth.
 * @param {number} buffer  spans the ring holds
 */
export function unwatchedMark(buffer) {
  return Math.max(1, Math.min(250, Math.floor(buffer / 2)))
}

/**
 * The wait before an unwatched batch leaves: its interval, or none once `unsent` reached `mark`.
 * @param {number} intervalMs
 * @param {number} unsent
 * @param {number} mark
 */
export function unwatchedWindow(intervalMs, unsent, mark) {
  return unsent >= mark ? 0 : intervalMs
}

/**
 * When the uplink's batch leaves: its window (batchWindow watched, the relay's interval unwatched, at once when the
 * unsent spans reach the mark or a resume ack asks for what the relay lacks), what the relay said is watched, and
 * whether a batch waits for the page's quiet moment. The uplink says what leaving means (`leave`) and tells this
 * what happened (spans ready, spans carried, a flush, a watch frame, a resume); it decides nothing of its own.
 */
export class Cadence {
  /**
   * @param {object} o
   * @param {number} [o.flushMs]  the quiet window (0: the next macrotask, unless unwatched)
   * @param {number} [o.mark]  unsent spans that send an unwatched batch at once (unwatchedMark)
   * @param {() => number} o.clock
   * @param {(fn: Function) => void} o.schedule  macrotask scheduler
   * @param {Function} o.setTimeout
   * @param {Function} o.clearTimeout
   * @param {boolean} [o.alignQuiet]  a busy page's batch, its window over while a call is under way, waits for quiet
   * @param {() => boolean} [o.calling]  is a call under way (the Pacer's)?
   * @param {() => Iterable<string>} o.sessions  the sessions the uplink carries
   * @param {() => void} o.leave  the batch leaves (the uplink's flush)
   */
  constructor({ flushMs = 0, mark = unwatchedMark(500), clock, schedule, setTimeout: st, clearTimeout: ct, alignQuiet = false, calling = () => false, sessions, leave }) {
    this.flushMs = Number.isFinite(flushMs) && flushMs > 0 ? Math.min(flushMs, MAX_FLUSH_MS) : 0
    this.mark = mark
    this.clock = clock
    this.schedule = schedule
    this.sessions = sessions
    this.leave = leave
    /** the batch window's timer */
    this.lane = new Lane({ setTimeout: st, clearTimeout: ct, clock, alignQuiet, calling })
    /** a batch is due (its window armed, or its task scheduled) */
    this.scheduled = false
    this.lastSpansAt = -Infinity // when a batch last carried spans: calls within BUSY_MS of it mean a busy page
    /** @type {Map<string, {watched: boolean, intervalMs: number}>} what the relay last said of each session */
    this.watch = new Map()
    this.unsent = 0 // spans ready since the last batch
    this.resuming = false // a resume ack came: what the relay lacks goes on the next task, whatever the cadence
  }

  /** Null while any session is watched (or never told); else the shortest interval the relay gave. */
  interval() {
    let interval = null
    for (const id of this.sessions()) {
      const w = this.watch.get(id)
      if (!w || w.watched) return null
      if (interval === null || w.intervalMs < interval) interval = w.intervalMs
    }
    return interval
  }

  watched() {
    return this.interval() === null
  }

  /** A batch is due: it leaves when its window ends (or at the quiet moment after), else on the next task. */
  due() {
    if (this.scheduled) return
    this.scheduled = true
    const wait = this.flushMs || !this.watched() ? this.window() : 0
    // a busy page's batch, its window over while a call is under way, waits for the quiet moment
    const leave = (aligned) => {
      if (!aligned) this.scheduled = false
      safely(this.leave)
    }
    if (wait > 0 && this.lane.arm(wait, () => this.lastSpansAt, leave)) return
    this.schedule(() => {
      this.scheduled = false
      safely(this.leave)
    })
  }

  /** The window for a batch due now: `flushMs` after a quiet spell, wider while busy; unwatched, the relay's interval. */
  window() {
    const interval = this.interval()
    if (interval !== null) return this.resuming ? 0 : unwatchedWindow(interval, this.unsent, this.mark)
    return batchWindow(this.flushMs, this.clock(), this.lastSpansAt)
  }

  /** New spans wait: an unwatched batch that reached the mark no longer waits for its interval. */
  spansReady() {
    this.unsent++
    if (this.unsent === this.mark && this.lane.armed && !this.lane.awaitingQuiet && !this.watched()) {
      this.lane.cancel()
      this.scheduled = false
    }
  }

  /** The page's quiet moment: does a batch wait for it? */
  awaitingQuiet() {
    return this.lane.awaitingQuiet
  }

  /** The accounting's window ran out: watched, the batch leaves now; unwatched, only at a quiet moment it waited for. */
  leavesAtWindowEnd() {
    return this.watched() || this.lane.awaitingQuiet
  }

  /** A flush was asked for, whether or not it can send: no batch waits for quiet any more. */
  asked() {
    this.lane.awaitingQuiet = false
    if (!this.lane.armed && this.scheduled && this.flushMs) this.scheduled = false
  }

  /** A batch leaves now (whoever asked: open, bye, detach, a navigating form): it serves the one the window waited for. */
  leaving() {
    if (this.lane.armed) {
      this.lane.cancel()
      this.scheduled = false
    }
    this.unsent = 0
    this.resuming = false
  }

  /** A batch carried spans now. */
  carried() {
    this.lastSpansAt = this.clock()
  }

  /** The relay's resume ack: what it lacks goes on the next task, whatever the cadence. */
  resumed() {
    this.resuming = true
  }

  /**
   * A `watch` frame for a session: true when the uplink became watched by it (its batch leaves now: the screen
   * shows the current numbers, not those at the end of an unwatched interval). Malformed: ignored.
   * @param {any} msg
   */
  told(msg) {
    const w = readWatch(msg)
    if (!w) return false
    const was = this.interval()
    this.watch.set(msg.session, w)
    const now = this.interval()
    if (now !== null && (was === null || now < was)) this.retime()
    return was !== null && now === null
  }

  /**
   * The cadence became unwatched (or its interval shorter): the batch waiting in a window opened before waits for
   * the new window, from now. A hello's ack opens a watched window and the relay's watch frame comes right after:
   * else the calls the page makes in the rest of that window leave at the watched rate, for no screen.
   */
  retime() {
    if (!this.lane.armed) return
    this.lane.cancel()
    this.scheduled = false
    this.due()
  }

  /** A session starts again watched (a hello, or gone): the relay says otherwise after its ack. */
  forget(id) {
    this.watch.delete(id)
  }

  stop() {
    this.lane.cancel()
  }
}

// Accounting held while the page awaits an executeTool (Pacer.due): at most this long, this many calls.
export const HOLD_MS = 500
export const HOLD_CALLS = 64

/**
 * What the pacer paces the accounting of: the collector's calls settled and awaiting accounting, the calls in
 * flight, and accounting them now.
 * @typedef {{pending: unknown[], inFlight: {size: number}, flush: () => void}} Accounts
 */

/**
 * Where a batch leaves once accounted (the uplink, the channel mirror): `windowEnded` when the accounting's
 * window ran out (the window it would have waited for), `quiet` after any other accounting (the page's quiet
 * moment, which a busy page's batch waits for).
 * @typedef {{windowEnded: () => void, quiet: () => void}} Outlet
 */

/**
 * The one pacer of a page's agent: when settled calls are accounted (in the batch window they will leave in,
 * behind the page's answer while the page awaits a call) and, right after, that the outlets' batches may leave.
 * Whether a call is under way (calling), for the outlets' quiet alignment, is read here too.
 */
export class Pacer {
  /**
   * @param {object} o
   * @param {number} [o.windowMs]  the quiet batch window calls are accounted in (0: none, each settle gets a task)
   * @param {() => number} o.clock
   * @param {(fn: Function) => void} o.schedule  macrotask scheduler
   * @param {Function} o.setTimeout
   * @param {Function} o.clearTimeout
   * @param {((fn: Function) => void)|null} [o.microtask]  queues a microtask (null: accounting always gets a task)
   */
  constructor({ windowMs = 0, clock, schedule, setTimeout: st, clearTimeout: ct, microtask = null }) {
    this.windowMs = Number.isFinite(windowMs) && windowMs > 0 ? windowMs : 0
    this.clock = clock
    this.schedule = schedule
    this.st = st
    this.ct = ct
    this.microtask = microtask
    /** @type {Accounts} */
    this.accounts = { pending: [], inFlight: new Map(), flush() {} }
    /** @type {Outlet[]} */
    this.outlets = []
    /** `executeTool` calls the page is awaiting (interceptor.js): accounting waits for them, see due() */
    this.pageWaits = 0
    this.holdTimer = null
    this.flushScheduled = false
    /** the accounting's batch window (inWindow): its timer, whether it ran out, when the last batch was accounted */
    this.windowTimer = null
    this.windowOver = false
    this.lastBatchAt = -Infinity
  }

  /**
   * Settled calls await accounting. It runs as its own task after a call settles. When the page itself called
   * the tool (`executeTool`) and awaits the answer, that task would run while the browser carries the result
   * back to the page (a round trip through the browser process), and the page would wait for our serialising
   * of a 128 KB result too. So while the page awaits any executeTool, settled calls wait for the next answer
   * the page gets (`force`); at most HOLD_MS, and never more than HOLD_CALLS of them.
   */
  due(force = false) {
    const n = this.accounts.pending.length
    if (this.flushScheduled || !n) return
    if (n < HOLD_CALLS && this.inWindow()) return
    if (!force && this.pageWaits > 0 && n < HOLD_CALLS) {
      // One deadline timer at a time, left to run out rather than cleared and set again for every call. A batch
      // whose window ran out waits as long as the uplink's would (QUIET_WAIT_MS), and then goes in that task.
      if (this.holdTimer === null) this.holdTimer = safely(() => this.st(() => {
        this.holdTimer = null
        if (this.windowOver) this.accounts.flush()
        else this.due(true)
      }, this.windowOver ? QUIET_WAIT_MS : HOLD_MS), null)
      if (this.holdTimer !== null) return
    }
    this.flushScheduled = true
    // After the page's answer the accounting may run in this very task, behind the page's own continuation
    // (a microtask queued now runs after the ones already queued): no task of its own to wake for.
    if (force && this.microtask) this.microtask(() => safely(() => this.accounts.flush()))
    else this.schedule(() => this.accounts.flush())
  }

  /**
   * Calls are accounted in the batch window they would leave in (`windowMs` after a quiet spell, up to 250 ms
   * while the page keeps calling), all together when it runs out, and what they produce leaves at once
   * (accounted): true while the window holds them. Then the batch goes as any other (behind the page's answer
   * while the page awaits a call). Code run once every 10 ms runs cold, and the same accounting for 25 calls in
   * one go runs warm: a page calling 100 times a second pays the whole agent 0.7 to 1.1 points of a core less
   * (the README's "What watching costs the page").
   */
  inWindow() {
    if (this.windowTimer !== null) return true
    if (!this.windowMs || this.windowOver) return false
    this.windowTimer = safely(() => this.st(() => {
      this.windowTimer = null
      this.windowOver = true
      // in this very task, unless the page awaits an answer (then right after it has it, due)
      if (this.pageWaits > 0) this.due()
      else this.accounts.flush()
    }, batchWindow(this.windowMs, this.clock(), this.lastBatchAt)), null)
    return this.windowTimer !== null
  }

  /**
   * A batch is being accounted now (whoever asked: its window, a read, an event): the window closes. Returns
   * whether the window held it (its outlets' batches then leave at once, see accounted).
   */
  accounting() {
    const windowed = this.windowOver || this.windowTimer !== null
    if (this.windowTimer !== null) safely(() => this.ct(this.windowTimer))
    this.windowTimer = null
    this.windowOver = false
    this.lastBatchAt = this.clock()
    return windowed
  }

  /**
   * Right after the agent accounted a batch is the page's quiet moment: batches waiting for it leave, and a batch
   * accounted when its window ran out leaves now (the window was the one it would have waited for).
   * @param {boolean} windowed
   */
  accounted(windowed) {
    for (const o of this.outlets) safely(() => (windowed ? o.windowEnded() : o.quiet()))
  }

  /** Is a call under way: running, settled and not yet accounted, or its answer on the way to the page? */
  calling() {
    return this.accounts.inFlight.size > 0 || this.accounts.pending.length > 0 || this.pageWaits > 0
  }

  /** The page called `executeTool` and awaits it: returns the function to call when it has its answer. */
  pageWait() {
    this.pageWaits++
    let done = false
    return () => {
      if (done) return
      done = true
      if (this.pageWaits > 0) this.pageWaits--
      this.due(true)
    }
  }

  stop() {
    if (this.holdTimer !== null) safely(() => this.ct(this.holdTimer))
    this.holdTimer = null
    if (this.windowTimer !== null) safely(() => this.ct(this.windowTimer))
    this.windowTimer = null
  }
}
