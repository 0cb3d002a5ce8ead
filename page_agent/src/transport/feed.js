// A feed: one session as the uplink carries it. Whoever owns the session (the page's sink, sink.js; or the channel
// relaying another context's session) pushes into it as things happen, and the uplink sends from it alone: at a
// flush and after a reconnect nothing is read back from the page. It holds
// - the spans, handed over as they are made and held until the page's ring evicts them (handed over too), so a
//   reconnect replays what the relay has not acked; `delivery` says what the relay holds of them;
// - what describes the session (its hello) and what restates it after hello: its tools, status and ledger frames
//   as last made, and the calls running;
// - the calls begun since the last flush (each one's `start` leaves with the flush if it still runs then) and the
//   seqs that will still become spans (the `floor`).

import { Delivery } from "./delivery.js"
import * as frames from "./frames.js"

export const MAX_STARTS_PER_FRAME = 500
// Calls accounted are dropped from `live` at each flush, or when it grew to this many (twice what was left the
// last time; a socket that stays closed has no flush).
const PRUNE_AT = 256

/**
 * A call as its `start` says it, handed over when it begins (again, as a new one, when a form's user submits), and
 * then marked by the feed as its owner says it settled or was accounted. Flags, not maps keyed by seq: the call
 * path pays an object and a push.
 * @typedef {{seq: number, tool: string, invokedAt: number, depth: number, parent: number|null, terminal: boolean,
 *   waiting: boolean, settled?: boolean, accounted?: boolean, checked?: boolean, saidWaiting?: boolean,
 *   afterWait?: boolean}} Begun
 */

/** Begun as its owner makes it. */
export const begun = (seq, tool, invokedAt, depth, parent, terminal, waiting) => ({ seq, tool, invokedAt, depth, parent, terminal, waiting, settled: false, accounted: false, checked: false, saidWaiting: false, afterWait: false })

/** A `start` entry: `invokedBy` only where the flush says it (the replay never did). */
function entryOf(b, by) {
  const e = { seq: b.seq, tool: b.tool, invokedAt: b.invokedAt, depth: b.depth, parent: b.parent }
  if (by && b.terminal) e.invokedBy = "terminal"
  if (b.waiting) e.waiting = true
  return e
}

export class Feed {
  /**
   * @param {string} id  the session id
   * @param {{session: object, config: object}} about  the hello's session and config
   * @param {{max?: number, seqs?: boolean}} [o]  `max`: spans held at most (the oldest is evicted past it; 0: as
   *   many as are handed, the page's ring evicts and says so); `seqs`: the owner hands over every call it begins
   *   and accounts, so the uplink can send a `floor`
   */
  constructor(id, about, { max = 0, seqs = false } = {}) {
    this.id = id
    this.about = about
    this.delivery = new Delivery()
    /** @type {Map<number, any>} held spans by seq, oldest first */
    this.held = new Map()
    this.max = max
    /** @type {Map<string, object|null>} tool name -> its last `tool` frame while registered (null after), in first-registration order */
    this.tools = new Map()
    /** @type {object|null} */
    this.statusFrame = null
    /** @type {object|null} */
    this.ledgerFrame = null
    /** @type {Begun[]} calls begun and not yet accounted, in the order they began (accounted ones pruned lazily) */
    this.live = []
    this.pruneAt = PRUNE_AT
    /** the owner hands over every call it begins and accounts (then the uplink sends a `floor`) */
    this.tracksSeqs = seqs
    this.next = 0
    /** @type {((n: number) => void)|null} the owner hears the exact loss count when it changes */
    this.onLost = null
    /** @type {((id: string) => void)|null} the owner goes on under a new id (the relay refused the first hello as
     * taken); without it such a hello is tried again after a backoff */
    this.onRename = null
  }

  // ---- what the owner pushes ----------------------------------------------------------------------------

  /** @param {{session: object, config: object}} about */
  describe(about) {
    this.about = about
  }

  /** A span was made (or relayed): held until evicted. False when a span of that seq is held already. */
  span(span) {
    if (this.held.has(span.seq)) return false
    this.held.set(span.seq, span)
    if (this.max && this.held.size > this.max) {
      const [seq] = this.held.keys()
      this.evicted(seq)
    }
    return true
  }

  /** A span left the ring: not held any more, and lost unless the relay has it (or may: Delivery). */
  evicted(seq) {
    this.held.delete(seq)
    const lost = this.delivery.lost
    this.delivery.evicted(seq)
    if (this.delivery.lost !== lost) this.lostChanged()
  }

  /** A `tool` frame: a registered one restates the session after hello, until the tool is unregistered. */
  tool(frame) {
    if (frame.change === "registered") this.tools.set(frame.name, frame)
    else if (this.tools.has(frame.name)) this.tools.set(frame.name, null)
  }

  status(frame) {
    this.statusFrame = frame
  }

  ledger(frame) {
    this.ledgerFrame = frame
  }

  /**
   * A call began. `prev`: the same call's earlier entry, when a waiting form call's user submitted (the new entry
   * says the submit; the old one is done with).
   * @param {Begun} b
   * @param {Begun} [prev]
   */
  begin(b, prev) {
    if (prev) {
      prev.settled = prev.accounted = prev.checked = true
      b.afterWait = prev.saidWaiting
    }
    if (b.seq >= this.next) this.next = b.seq + 1
    this.live.push(b)
  }

  /** A call settled: it needs no start any more (unless its form's wait was said). */
  settled(b) {
    b.settled = true
  }

  /** A settled call runs again (the transport observer adopted it: it ends with its response). */
  reopened(b) {
    b.settled = false
  }

  /** A call became its span (or its accounting failed): it no longer holds the floor down. */
  accounted(b) {
    b.accounted = true
    if (this.live.length >= this.pruneAt) this.prune()
  }

  /** Drop the calls accounted, but a form's submit whose start has yet to leave. */
  prune() {
    this.live = this.live.filter((b) => !b.accounted || (b.afterWait && !b.checked))
    this.pruneAt = Math.max(PRUNE_AT, 2 * this.live.length)
  }

  // ---- what the uplink reads (its own side of the feed) ---------------------------------------------------

  /** Held spans, oldest first. */
  spans() {
    return this.held.values()
  }

  /** The relay acked (delivery.js); the owner hears of spans that turned out lost. */
  acked(seq, above, resume) {
    const lost = this.delivery.lost
    this.delivery.ack(seq, above, resume)
    if (this.delivery.lost !== lost) this.lostChanged()
  }

  lostChanged() {
    const n = this.delivery.lost
    if (this.onLost) this.onLost(n)
  }

  /** The lowest seq still running or awaiting accounting (or null), and the next seq; null when the owner does not say. */
  seqs() {
    if (!this.tracksSeqs) return null
    let open = null
    for (const b of this.live) if (!b.accounted && (open === null || b.seq < open)) open = b.seq
    return { open, next: this.next }
  }

  /**
   * The `start` frames for this flush: every call begun since the last one that still runs (as it is now), and a
   * form call's submit after its wait was said. A call that settled within the window needs none: its span (same
   * seq, depth and parent) says it all, and at a busy page's rate most calls settle before their window ends.
   */
  starts() {
    this.prune()
    const calls = []
    for (const b of this.live) {
      if (b.checked) continue
      b.checked = true
      // A form call's submit after the relay saw it waiting: its start goes even when the call settled meanwhile.
      if (b.settled && !b.afterWait) continue
      if (b.waiting) b.saidWaiting = true
      calls.push(entryOf(b, true))
    }
    const out = []
    for (let i = 0; i < calls.length; i += MAX_STARTS_PER_FRAME) out.push(frames.start(this.id, calls.slice(i, i + MAX_STARTS_PER_FRAME)))
    return out
  }

  /** What restates the session after hello: its tools, status and ledger, and the calls running now. */
  replay() {
    const out = []
    for (const f of this.tools.values()) if (f) out.push(f)
    if (this.statusFrame) out.push(this.statusFrame)
    if (this.ledgerFrame) out.push(this.ledgerFrame)
    this.prune()
    const calls = []
    for (const b of this.live) {
      b.checked = true
      // A wait said here is said as surely as by a flush: its user's submit is owed a start (a call made while
      // the socket was still opening is said first by this replay).
      if (b.waiting) b.saidWaiting = true
      // A submit after a said wait goes even when the call settled: the relay still holds the wait.
      if (!b.settled || b.afterWait) calls.push(entryOf(b, false))
    }
    if (calls.length) out.push(frames.start(this.id, calls.slice(0, MAX_STARTS_PER_FRAME)))
    return out
  }

  /**
   * The relay refused our first hello: another socket holds this id. The feed goes on under `id` (its held spans
   * re-stamped) and tells its owner, who restates the session under it.
   * @param {string} id
   */
  renamed(id) {
    this.id = id
    for (const span of this.held.values()) span.sessionId = id
    if (this.onRename) this.onRename(id)
  }
}
