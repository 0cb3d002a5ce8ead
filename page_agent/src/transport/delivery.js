// The delivery guarantees of design section 5, kept per feed (feed.js): pure, no clock, no I/O.

/**
 * What the relay holds of one feed, as far as its acks tell, and which evicted spans it may not have.
 *
 * The relay answers `ack {seq, above}`: `seq` its highest contiguous seq (counting what a `floor` let it
 * skip), `above` the first ranges [lo, hi] it holds beyond that. Spans settle in any seq order (a slow call
 * settles after faster, later ones), so what the relay holds is not a prefix. A span evicted from the ring is:
 * known held by the relay (no loss); never written to any socket (lost); written but not yet confirmed
 * (`unsure`). An unsure seq is settled by the first ack that covers it (held), or by the resume ack of the next
 * connection (what that relay does not hold by then it never will: lost). Until then `floor` stays at or
 * below it, so the relay's contiguous ack cannot pass it and later claim it held.
 */
export class Delivery {
  constructor() {
    this.acked = -1
    /** @type {number[][]} [lo, hi] ranges above `acked`, lowest first, as the relay last said */
    this.above = []
    /** seqs written to a socket (this connection or an earlier one) and not yet known held */
    this.pending = new Set()
    /** @type {number[]} evicted seqs that were written and are not yet known held */
    this.unsure = []
    this.lost = 0
  }

  /** Does the relay hold `seq` (as far as its last ack said)? */
  has(seq) {
    if (seq <= this.acked) return true
    for (const [lo, hi] of this.above) {
      if (seq < lo) return false
      if (seq <= hi) return true
    }
    return false
  }

  evicted(seq) {
    if (this.has(seq)) return
    if (this.pending.delete(seq)) this.unsure.push(seq)
    else this.lost++
  }

  written(seq) {
    if (!this.has(seq)) this.pending.add(seq)
  }

  /**
   * An ack. `resume` is the one right after hello: it replaces what an earlier relay said (a restarted relay
   * holds nothing), and whatever unsure seq it does not cover was not stored.
   * @param {number} seq
   * @param {unknown} above  the ack's `above` ranges (validated here)
   * @param {boolean} resume
   */
  ack(seq, above, resume) {
    if (resume || seq > this.acked) this.acked = seq
    this.above = ranges(above, this.acked)
    for (const s of this.pending) if (this.has(s)) this.pending.delete(s)
    if (!this.unsure.length) return
    if (resume) this.lost += this.unsure.filter((s) => !this.has(s)).length
    this.unsure = resume ? [] : this.unsure.filter((s) => !this.has(s))
  }

  /** The lowest unsure seq, or null: the floor may not pass it. */
  lowestUnsure() {
    let low = null
    for (const s of this.unsure) if (low === null || s < low) low = s
    return low
  }
}

export const MAX_ACK_RANGES = 64 // the relay sends at most this many `above` ranges

/** An ack's `above`: at most MAX_ACK_RANGES integer [lo, hi] pairs above `acked`, ascending; junk dropped. */
function ranges(above, acked) {
  const out = []
  if (!Array.isArray(above)) return out
  let last = acked
  for (const r of above.slice(0, MAX_ACK_RANGES)) {
    if (!Array.isArray(r) || !Number.isInteger(r[0]) || !Number.isInteger(r[1])) break
    const [lo, hi] = r
    if (lo <= last || hi < lo) break
    out.push([lo, hi])
    last = hi
  }
  return out
}
