// A feed: one session as the uplink sees it. Spans are handed to it as they are made (push), and it holds them
// until they leave the page's ring (evicted: handed over too), so a reconnect replays what the relay has not
// acked without reading anything back; `delivery` says what the relay holds of them. What restates the session
// after a (re)connect (hello, replay, the ledger, the floor) comes from whoever made the feed.

import { Delivery } from "./uplink.js"

/**
 * @typedef {object} FeedHooks
 * @property {() => {session: object, config: object}} hello
 * @property {() => object[]} [replay]  frames that restate the session after a (re)connect
 * @property {() => object} [ledgerFrame]  the ledger frame, made when it leaves (at most once a second)
 * @property {() => {open: number|null, next: number}} [seqs]  the lowest seq still running or awaiting
 *   accounting (it will become a span later), and the next seq to be given out. Without it no `floor` is sent.
 * @property {() => void} [drain]  called at the start of each flush: queue what was gathered since (batched `start` frames)
 * @property {() => string} [rename]  the relay refused our first hello as taken: go on under a new id (returned)
 */

export class Feed {
  /**
   * @param {string} id  the session id
   * @param {FeedHooks} hooks
   * @param {number} [max]  spans held at most (the oldest is evicted past it); 0: as many as are handed (the
   *   page's ring evicts, and says so)
   */
  constructor(id, hooks, max = 0) {
    this.id = id
    this.delivery = new Delivery()
    /** @type {Map<number, any>} held spans by seq, oldest first */
    this.held = new Map()
    this.max = max
    this.hello = hooks.hello
    this.replay = hooks.replay || (() => [])
    if (hooks.ledgerFrame) this.ledgerFrame = hooks.ledgerFrame
    if (hooks.seqs) this.seqs = hooks.seqs
    if (hooks.drain) this.drain = hooks.drain
    if (hooks.rename) this.rename = hooks.rename
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
    this.delivery.evicted(seq)
  }

  /** Held spans, oldest first. */
  spans() {
    return this.held.values()
  }
}
