// The batch window shared by the uplink and the channel mirror. Every message a page sends costs the browser
// more than its script: a WebSocket send or a BroadcastChannel post is an IPC hop that wakes the renderer's
// and the browser's IO threads (and, for the channel, the browser's main thread) once per message, and on a
// laptop that is most of what watching costs the page. Messages gathered in a window leave together and
// share those wake-ups. After a quiet spell a window is FLUSH_MS; while the page keeps calling (a batch left
// under BUSY_MS ago) it stretches to BUSY_FACTOR times that, at most MAX_FLUSH_MS: a busy page pays four
// batches a second, a quiet one is seen within 50 ms. (Measured in tests/bench/test_observer_effect.py.)

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

// What is watched sets the cadence (issue 33). The relay says, with a `watch {session, watched, intervalMs}`
// frame after the hello's ack and whenever it changes, whether a viewer shows the session. Watched: the window
// above (the screen repaints four times a second). Unwatched: one flush per `intervalMs` (a second by default),
// sooner only when the unsent spans reach the mark, so the buffer never evicts what no socket carried; nothing
// while idle (a flush is armed only by something to send). The buffer, ack and replay rules are the same on
// both cadences. An agent never told (an older relay) is watched.
export const UNWATCHED_MS = 1000
const MAX_INTERVAL_MS = 10000
// The ledger (the page's totals) is read by a person: unwatched, one every few batches. Half the frames of an
// unwatched busy page were ledgers (tests/bench: 11 frames in 5 s at 100 calls/s, 5 of them spans).
export const UNWATCHED_LEDGER_MS = 5000

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
