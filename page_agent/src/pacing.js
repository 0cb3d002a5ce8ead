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
