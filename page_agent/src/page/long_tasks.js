// Long-Task attribution: each millisecond of a Long Task goes to the most recently invoked call running at that
// moment, so no millisecond counts twice. Pure: the calls are handed in, their `blocking` grows.

/**
 * @typedef {{seq: number, invokedAt: number, settledAt: number|null, blocking: number}} Running
 */

/**
 * Add each Long Task's milliseconds to the calls it overlapped, split at every call's start and end.
 * @template {Running} T
 * @param {{startTime: number, duration: number}[]} entries
 * @param {Iterable<T>[]} groups  the calls that may have overlapped them (in flight, awaiting accounting, settled lately)
 * @returns {Map<number, T>} the calls that gained time, by seq
 */
export function attributeLongTasks(entries, groups) {
  /** @type {Map<number, T>} */
  const touched = new Map()
  for (const e of entries) {
    const s = e.startTime
    const end = s + e.duration
    /** @type {T[]} */
    const cands = []
    for (const group of groups) {
      for (const c of group) {
        const cEnd = c.settledAt === null ? Infinity : c.settledAt
        if (c.invokedAt < end && cEnd > s) cands.push(c)
      }
    }
    if (!cands.length) continue
    const cuts = new Set([s, end])
    for (const c of cands) {
      if (c.invokedAt > s && c.invokedAt < end) cuts.add(c.invokedAt)
      if (c.settledAt !== null && c.settledAt > s && c.settledAt < end) cuts.add(c.settledAt)
    }
    const points = Array.from(cuts).sort((a, b) => a - b)
    for (let i = 0; i + 1 < points.length; i++) {
      const a = points[i]
      const b = points[i + 1]
      let best = null
      for (const c of cands) {
        const cEnd = c.settledAt === null ? Infinity : c.settledAt
        if (c.invokedAt <= a && cEnd >= b && (!best || c.invokedAt > best.invokedAt || (c.invokedAt === best.invokedAt && c.seq > best.seq))) best = c
      }
      if (best) {
        best.blocking += b - a
        touched.set(best.seq, best)
      }
    }
  }
  return touched
}
