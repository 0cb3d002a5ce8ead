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
  const busy = now - lastAt < BUSY_MS
  return busy ? Math.min(MAX_FLUSH_MS, Math.max(flushMs, flushMs * BUSY_FACTOR)) : flushMs
}
