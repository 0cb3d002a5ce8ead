// The uplink: one WebSocket to the relay, carrying one or more sessions (ours, and any relayed from the
// channel). hello first (again on every reconnect, same session id, current `lost`); the relay answers
// `ack {session, seq}` with the highest contiguous seq it stored, and we send every span after it. Spans
// stay in the ring buffer after sending, so a reconnect replays what the relay has not acked.
// Never throws into the page; while no relay is there it costs one timer.
//
// Ownership: the ack that answers our first hello carries `resume`, a secret only this page holds; every
// later hello for that session presents it, so no other socket can take the session over. A hello the relay
// refuses (too many sessions, `session_taken` while our old socket is still closing, a frame it could not
// read) is tried again after a backoff; `unknown_session` for a session it had accepted means the relay
// forgot it (restart): hello again at once.

import { safely } from "./util.js"

export const PROTOCOL = "wmcp-relay/1"
export const MAX_SPANS_PER_FRAME = 500
const BACKOFF = [250, 500, 1000, 2000, 4000, 5000]
const LEDGER_EVERY_MS = 250
const MAX_QUEUED = 500
const RATE_PAUSE_MS = 500
// History that nothing restates after a reconnect waits in the (bounded) queue; payloads and results do not.
const KEPT_OFFLINE = new Set(["event", "update", "prompt"])

/**
 * Which evicted spans the relay may not have. Evictions are oldest-first and acks only grow, so:
 * evicted after the ack: stored; evicted before ever being written to a socket: lost; written but not
 * acked: unsure until the relay's next ack says.
 */
export class Delivery {
  constructor() {
    this.acked = -1
    this.writtenHigh = -1
    this.unsure = []
    this.lost = 0
  }

  evicted(seq) {
    if (seq <= this.acked) return
    if (seq <= this.writtenHigh) this.unsure.push(seq)
    else this.lost++
  }

  written(seq) {
    if (seq > this.writtenHigh) this.writtenHigh = seq
  }

  /** An ack. `resume` is the one right after hello: what it does not cover was not stored. */
  ack(seq, resume) {
    if (seq > this.acked) this.acked = seq
    if (!this.unsure.length) return
    if (resume) {
      this.lost += this.unsure.filter((s) => s > seq).length
      this.unsure = []
    } else this.unsure = this.unsure.filter((s) => s > this.acked)
  }
}

/**
 * A session as the uplink sees it.
 * @typedef {object} Feed
 * @property {string} id
 * @property {() => {session:object, config:object}} hello
 * @property {() => Iterable<object>} spans  held spans, oldest first
 * @property {() => object[]} replay  frames that restate the session after a (re)connect
 * @property {Delivery} delivery
 */

export class Uplink {
  /**
   * @param {object} o
   * @param {{url:string, protocol?:string}} o.relay
   * @param {string} o.agent  "name/version"
   * @param {Function} [o.WebSocket]
   * @param {Function} [o.setTimeout]
   * @param {Function} [o.clearTimeout]
   * @param {(fn: Function) => void} [o.schedule]  macrotask scheduler (flushes ride on it)
   * @param {() => number} [o.clock]
   */
  constructor({ relay, agent, WebSocket: WS = globalThis.WebSocket, setTimeout: st = globalThis.setTimeout, clearTimeout: ct = globalThis.clearTimeout, schedule, clock }) {
    this.relay = relay
    this.agent = agent
    this.WS = WS
    this.st = st
    this.ct = ct
    this.schedule = schedule || ((fn) => st(fn, 0))
    this.clock = clock || (() => Date.now())
    /** @type {Map<string, {feed: Feed, helloSent:boolean, resumed:boolean, sentHigh:number, queue:object[], ledgerDirty:boolean, ledgerAt:number, ledgerTimer:any, resume:string|null, helloAttempt:number, helloTimer:any}>} */
    this.feeds = new Map()
    this.ws = null
    this.state = "idle"
    this.attempt = 0
    this.timer = null
    this.flushScheduled = false
    this.closed = false
    this.counters = { connects: 0, disconnects: 0, framesSent: 0, spansSent: 0, acks: 0, errors: 0, rateLimited: 0 }
    this.paused = false
    this.pauseTimer = null
    this.lastError = null
    this.onCommand = null
  }

  start() {
    if (typeof this.WS !== "function") {
      this.state = "unavailable"
      return
    }
    this.connect()
  }

  connect() {
    if (this.closed) return
    this.timer = null
    this.state = "connecting"
    let ws
    try {
      ws = new this.WS(this.relay.url)
    } catch (e) {
      this.lastError = String((e && e.name) || "connect failed")
      return this.retry()
    }
    this.ws = ws
    ws.onopen = () =>
      safely(() => {
        if (this.ws !== ws) return
        this.state = "open"
        this.attempt = 0
        this.counters.connects++
        for (const s of this.feeds.values()) this.resetLink(s)
        this.flush()
      })
    ws.onmessage = (e) => safely(() => this.ws === ws && this.receive(e.data))
    ws.onclose = () => safely(() => this.ws === ws && this.lost())
    ws.onerror = () => {}
  }

  lost() {
    this.ws = null
    this.counters.disconnects++
    if (this.state === "open") this.state = "closed"
    this.retry()
  }

  retry() {
    if (this.closed || this.timer !== null) return
    this.state = "waiting"
    const delay = BACKOFF[Math.min(this.attempt, BACKOFF.length - 1)]
    this.attempt++
    this.timer = this.st(() => safely(() => this.connect()), delay)
  }

  get open() {
    return this.ws !== null && this.state === "open"
  }

  resetLink(s) {
    s.helloSent = false
    s.resumed = false
    s.sentHigh = -1
    // Restated by replay() after hello; what is left is events and updates.
    s.queue = s.queue.filter((f) => KEPT_OFFLINE.has(f.type))
  }

  // ---- feeds -----------------------------------------------------------------------------------------

  /** @param {Feed} feed */
  addFeed(feed) {
    if (this.feeds.has(feed.id)) return
    this.feeds.set(feed.id, { feed, helloSent: false, resumed: false, sentHigh: -1, queue: [], ledgerDirty: false, ledgerAt: -Infinity, ledgerTimer: null, resume: null, helloAttempt: 0, helloTimer: null })
    this.kick()
  }

  removeFeed(id, reason) {
    const s = this.feeds.get(id)
    if (!s) return
    if (this.open && s.helloSent) this.write({ type: "bye", session: id, reason })
    if (s.ledgerTimer !== null) this.ct(s.ledgerTimer)
    if (s.helloTimer !== null) this.ct(s.helloTimer)
    this.feeds.delete(id)
  }

  /** Queue a small frame for a session (start, update, tool, status, event). */
  send(id, frame) {
    const s = this.feeds.get(id)
    if (!s) return
    // Starts, tools and status are restated from state on reconnect; events and updates wait (bounded).
    if (!this.open && !KEPT_OFFLINE.has(frame.type)) return
    if (frame.type === "update" && frame.seq > Math.max(s.sentHigh, s.feed.delivery.acked)) return // the span, when sent, carries it
    s.queue.push(frame)
    if (s.queue.length > MAX_QUEUED) s.queue.shift()
    this.kick()
  }

  /** New spans are held by a feed: flush soon. */
  spansReady() {
    this.kick()
  }

  ledgerDirty(id) {
    const s = this.feeds.get(id)
    if (!s) return
    s.ledgerDirty = true
    this.kick()
  }

  kick() {
    if (this.flushScheduled || !this.open) return
    this.flushScheduled = true
    this.schedule(() => {
      this.flushScheduled = false
      safely(() => this.flush())
    })
  }

  // ---- wire ------------------------------------------------------------------------------------------

  write(frame) {
    if (!this.ws) return false
    try {
      this.ws.send(JSON.stringify(frame))
      this.counters.framesSent++
      return true
    } catch {
      return false
    }
  }

  flush() {
    if (!this.open || this.paused) return
    for (const s of this.feeds.values()) {
      const id = s.feed.id
      if (!s.helloSent) {
        if (s.helloTimer !== null) continue // refused a moment ago: the retry timer sends it again
        const h = s.feed.hello()
        const hello = { type: "hello", protocol: this.relay.protocol || PROTOCOL, agent: this.agent, session: h.session, config: h.config, lost: s.feed.delivery.lost }
        if (s.resume) hello.resume = s.resume
        if (!this.write(hello)) return
        s.helloSent = true
        for (const f of s.feed.replay()) this.write(f)
        s.ledgerDirty = false
        s.ledgerAt = this.clock()
      }
      const q = s.queue
      s.queue = []
      for (const f of q) this.write(f)
      if (s.resumed) this.sendSpans(s)
      if (s.ledgerDirty) this.sendLedger(s)
    }
  }

  sendSpans(s) {
    const pending = []
    for (const span of s.feed.spans()) if (span.seq > s.sentHigh) pending.push(span)
    if (!pending.length) return
    const held = s.feed.spans()
    let floor = null
    for (const span of held) {
      floor = span.seq
      break
    }
    for (let i = 0; i < pending.length; i += MAX_SPANS_PER_FRAME) {
      const chunk = pending.slice(i, i + MAX_SPANS_PER_FRAME)
      const frame = { type: "spans", session: s.feed.id, spans: chunk, lost: s.feed.delivery.lost }
      if (floor !== null) frame.floor = floor
      if (!this.write(frame)) return
      const last = chunk[chunk.length - 1].seq
      s.sentHigh = last
      s.feed.delivery.written(last)
      this.counters.spansSent += chunk.length
    }
  }

  sendLedger(s) {
    const wait = s.ledgerAt + LEDGER_EVERY_MS - this.clock()
    if (wait > 0) {
      if (s.ledgerTimer === null) {
        s.ledgerTimer = this.st(() => {
          s.ledgerTimer = null
          safely(() => this.flush())
        }, wait)
      }
      return
    }
    const f = s.feed.ledgerFrame && s.feed.ledgerFrame()
    s.ledgerDirty = false
    s.ledgerAt = this.clock()
    if (f) this.write(f)
  }

  receive(data) {
    if (typeof data !== "string") return
    const msg = JSON.parse(data)
    if (!msg || typeof msg !== "object") return
    if (msg.type === "ack") {
      this.counters.acks++
      const s = this.feeds.get(msg.session)
      if (!s || typeof msg.seq !== "number") return
      if (typeof msg.resume === "string" && /^[0-9a-f]{32}$/.test(msg.resume)) s.resume = msg.resume
      const resume = !s.resumed
      if (resume) s.helloAttempt = 0
      s.feed.delivery.ack(msg.seq, resume)
      if (resume) {
        s.resumed = true
        s.sentHigh = Math.max(msg.seq, -1)
        this.kick()
      }
    } else if (msg.type === "error") {
      this.counters.errors++
      this.lastError = String(msg.code || "error")
      if (msg.code === "rate_limited") this.slowDown()
      const s = typeof msg.session === "string" ? this.feeds.get(msg.session) : undefined
      if (s && s.helloSent && !s.resumed) this.helloRefused(s)
      else if (s && s.resumed && msg.code === "unknown_session") {
        // The relay accepted this session once and no longer knows it (it restarted): hello again now.
        this.resetLink(s)
        this.kick()
      }
      if (msg.fatal) this.stop()
    } else if (msg.type === "command") {
      // The terminal asked (through the relay) for something: only this socket can deliver one.
      if (typeof this.onCommand === "function") this.onCommand(msg)
    } else if (msg.type === "welcome") {
      this.welcome = { relay: String(msg.relay || ""), protocol: String(msg.protocol || "") }
    }
  }

  /**
   * The relay refused our hello (or a frame sent before its answer): try the hello again after a backoff,
   * so a page refused once (64 live sessions, a relay busy) is never cut off for good.
   */
  helloRefused(s) {
    if (s.helloTimer !== null) return
    const delay = BACKOFF[Math.min(s.helloAttempt, BACKOFF.length - 1)]
    s.helloAttempt++
    s.helloTimer = this.st(() => {
      s.helloTimer = null
      if (!this.feeds.has(s.feed.id)) return
      this.resetLink(s)
      safely(() => this.flush())
    }, delay)
  }

  /**
   * The relay dropped frames over its rate cap (not stored, not acked): hold off for a moment, then send
   * again everything after the last ack.
   */
  slowDown() {
    this.counters.rateLimited++
    for (const s of this.feeds.values()) if (s.resumed) s.sentHigh = Math.min(s.sentHigh, s.feed.delivery.acked)
    if (this.pauseTimer) return
    this.paused = true
    this.pauseTimer = this.st(() => {
      this.paused = false
      this.pauseTimer = null
      safely(() => this.flush())
    }, RATE_PAUSE_MS)
  }

  /** Stop for good (fatal error, or detach): byes are sent by removeFeed beforehand. */
  stop() {
    this.closed = true
    this.state = "stopped"
    if (this.timer !== null) this.ct(this.timer)
    if (this.pauseTimer) this.ct(this.pauseTimer)
    this.timer = null
    for (const s of this.feeds.values()) {
      if (s.ledgerTimer !== null) this.ct(s.ledgerTimer)
      if (s.helloTimer !== null) this.ct(s.helloTimer)
    }
    const ws = this.ws
    this.ws = null
    if (ws) safely(() => ws.close(1000))
  }

  info() {
    let url = ""
    safely(() => {
      const u = new URL(this.relay.url)
      url = `${u.protocol}//${u.host}${u.pathname}`
    })
    const acked = {}
    const lost = {}
    for (const [id, s] of this.feeds) {
      acked[id] = s.feed.delivery.acked
      lost[id] = s.feed.delivery.lost
    }
    return { state: this.state, url, ...this.counters, lastError: this.lastError, sessions: Array.from(this.feeds.keys()), acked, lost }
  }
}
