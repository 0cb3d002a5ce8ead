// The uplink: one WebSocket to the relay, carrying one or more sessions (ours, and any relayed from the
// channel). hello first (again on every reconnect, same session id, current `lost`); the relay answers
// `ack {session, seq, above}` with what it holds, and we send every held span it does not hold, once per
// connection, whatever order the calls settled in. Everything it sends of a session comes from that session's
// feed (feed.js), where its owner pushed it: the spans (held after sending until the page's ring evicts them, so a
// reconnect replays what the relay has not acked), the hello, what restates the session after it, the calls
// begun; nothing is read back from the page. What the relay says back (acks, refusals, commands) goes to the feed
// or to the agent's handlers.
// Never throws into the page; while no relay is there it costs one timer.
//
// Ownership: the ack that answers our first hello carries `resume`, a secret only this page holds; every
// later hello for that session presents it, so no other socket can take the session over. A hello the relay
// refuses (too many sessions, `session_taken` while our old socket is still closing, a frame it could not
// read) is tried again after a backoff; `unknown_session` for a session it had accepted means the relay
// forgot it (restart): hello again at once.

import { FLUSH_MS, MAX_FLUSH_MS, BUSY_MS, LEDGER_EVERY_MS, Lane, Cadence, ledgerWait, unwatchedMark } from "./pacing.js"
import { safely, newSessionId } from "../shared/util.js"
import * as frames from "./frames.js"
import { PROTOCOL } from "./frames.js"

export const MAX_SPANS_PER_FRAME = 500
const BACKOFF = [250, 500, 1000, 2000, 4000, 5000]
const MAX_QUEUED = 500
const RATE_PAUSE_MS = 500
// Refusals of data the relay did not keep (never acked): the rate cap, a memory cap or share, the session log
// behind. The spans stay held; after RATE_PAUSE_MS every one the relay has not acked goes again.
const RESEND_ON = new Set(["rate_limited", "limit", "log_full"])
// The console hears of refusals at most this often (the counters in __webmcpPerf.relay() count every one).
const WARN_EVERY_MS = 10000
// The batch window's constants, for the agent's config and the tests.
export { FLUSH_MS, MAX_FLUSH_MS, BUSY_MS, LEDGER_EVERY_MS }
// History that nothing restates after a reconnect waits in the (bounded) queue; payloads and results do not.
const KEPT_OFFLINE = new Set(["event", "update", "prompt"])
// Facts (facts.js) leave after their span, batched: up to this many wait, oldest dropped first.
const MAX_FACTS_QUEUED = 500

/** @typedef {import("./feed.js").Feed} Feed */

export class Uplink {
  /**
   * @param {object} o
   * @param {{url:string, protocol?:string}} o.relay
   * @param {string} o.agent  "name/version"
   * @param {new (url: string) => WebSocket} [o.WebSocket]
   * @param {Function} [o.setTimeout]
   * @param {Function} [o.clearTimeout]
   * @param {(fn: Function) => void} [o.schedule]  macrotask scheduler (flushes ride on it when flushMs is 0)
   * @param {number} [o.flushMs]  batch window: frames gathered within it leave in one flush (0: next macrotask)
   * @param {boolean} [o.alignQuiet]  a busy page's batch, its window over while a call is under way, waits for quiet()
   * @param {() => boolean} [o.calling]  is a call under way (running, or its answer on the way to the page)?
   * @param {() => number} [o.clock]
   * @param {number} [o.mark]  unsent spans that send an unwatched batch at once (pacing.js unwatchedMark)
   * @param {(text: string) => void} [o.warn]  where a refusal is said (default: the page's console.warn)
   */
  constructor({ relay, agent, WebSocket: WS = globalThis.WebSocket, setTimeout: st = globalThis.setTimeout, clearTimeout: ct = globalThis.clearTimeout, schedule, flushMs = 0, clock, alignQuiet = false, calling = () => false, mark = unwatchedMark(500), warn }) {
    this.relay = relay
    this.agent = agent
    this.WS = WS
    this.st = st
    this.ct = ct
    this.schedule = schedule || ((fn) => st(fn, 0))
    this.clock = clock || (() => Date.now())
    /** `sent`: seqs written on this connection and not yet known held (each goes out once a connection).
     * `lastStatus`: the last status frame's text written (or replayed): a status frame leaves only when it says something new.
     * @type {Map<string, {feed: Feed, lastStatus: string|null, helloSent:boolean, resumed:boolean, sent:Set<number>, toldLost:number, queue:object[], late:object[], ledgerDirty:boolean, ledgerAt:number, ledgerWait:Lane, resume:string|null, helloAttempt:number, helloTimer:any, said:boolean}>} */
    this.feeds = new Map()
    this.ws = null
    this.state = "idle"
    this.attempt = 0
    this.timer = null
    /** when a batch leaves (pacing.js) */
    this.pace = new Cadence({ flushMs, mark, clock: this.clock, schedule: this.schedule, setTimeout: st, clearTimeout: ct, alignQuiet, calling, sessions: () => this.feeds.keys(), leave: () => this.flush() })
    this.flushing = false
    this.closed = false
    this.counters = { connects: 0, disconnects: 0, framesSent: 0, spansSent: 0, acks: 0, errors: 0, rateLimited: 0, refused: 0, renamed: 0 }
    this.lastRefusal = null
    this.warnedAt = -Infinity
    this.warn = warn || ((text) => { const c = globalThis.console; if (c && c.warn) c.warn(text) })
    this.paused = false
    this.pauseTimer = null
    this.lastError = null
    this.onCommand = null
    /** @type {((welcome: {relay: string, protocol: string, payloads: boolean, rows: boolean}) => void)|null} */
    this.onWelcome = null
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
    this.pace.forget(s.feed.id) // a hello starts watched; the relay says otherwise after its ack (pacing.js)
    s.helloSent = false
    s.resumed = false
    s.sent = new Set()
    // Restated by replay() after hello; what is left is events and updates.
    s.queue = s.queue.filter((f) => KEPT_OFFLINE.has(f.type))
  }

  // ---- feeds -----------------------------------------------------------------------------------------

  /** @param {Feed} feed */
  addFeed(feed) {
    if (this.feeds.has(feed.id)) return
    this.feeds.set(feed.id, { feed, lastStatus: null, helloSent: false, resumed: false, sent: new Set(), toldLost: 0, queue: [], late: [], ledgerDirty: false, ledgerAt: -Infinity, ledgerWait: new Lane({ setTimeout: this.st, clearTimeout: this.ct, clock: this.clock }), resume: null, helloAttempt: 0, helloTimer: null, said: false })
    this.kick()
  }

  /**
   * The page is going away (pagehide): say `bye` for every session and send nothing more for them, since
   * whatever the unload still produces (the `visibility` event fired after pagehide, a status, a ledger)
   * would reach a relay that has ended the session and be refused. A bfcache restore calls `resume()`.
   */
  bye(reason) {
    // What the batch window still holds leaves first: nothing said before the bye is dropped.
    this.flush()
    for (const [id, s] of this.feeds) {
      if (this.open && s.helloSent && !s.said) this.write(frames.bye(id, reason))
      s.said = true
      s.queue = []
    }
  }

  /**
   * The resume secret the relay gave this session, or null: the proof a navigation link carries (the next
   * document of this tab names this session, and the relay writes into this session's timeline only for it).
   * @param {string} id
   */
  secretOf(id) {
    const s = this.feeds.get(id)
    return s && s.resume ? s.resume : null
  }

  /** The page is back (pageshow from the bfcache): every session says hello again. */
  resume() {
    for (const s of this.feeds.values()) {
      if (!s.said) continue
      s.said = false
      this.resetLink(s)
    }
    this.kick()
  }

  removeFeed(id, reason) {
    const s = this.feeds.get(id)
    if (!s) return
    if (this.open && s.helloSent) this.write(frames.bye(id, reason))
    s.ledgerWait.cancel()
    if (s.helloTimer !== null) this.ct(s.helloTimer)
    this.feeds.delete(id)
    this.pace.forget(id)
  }

  /** Queue a small frame for a session (start, update, tool, status, event). */
  send(id, frame) {
    const s = this.feeds.get(id)
    if (!s || s.said) return
    if (frame.type === "facts") {
      s.late.push(frame)
      if (s.late.length > MAX_FACTS_QUEUED) s.late.shift()
      this.kick()
      return
    }
    // Starts, tools and status are restated from state on reconnect; events and updates wait (bounded).
    if (!this.open && !KEPT_OFFLINE.has(frame.type)) return
    // A span not yet sent on this connection carries its blockingMs when it goes.
    if (frame.type === "update" && !s.sent.has(frame.seq) && !s.feed.delivery.has(frame.seq)) return
    if (frame.type === "status") {
      const text = JSON.stringify(frame)
      if (text === s.lastStatus) return
      s.lastStatus = text
    }
    s.queue.push(frame)
    if (s.queue.length > MAX_QUEUED) s.queue.shift()
    this.kick()
  }

  /** New spans are held by a feed: flush soon (an unwatched batch that reached the mark: now). */
  spansReady() {
    this.pace.spansReady()
    this.kick()
  }

  ledgerDirty(id) {
    const s = this.feeds.get(id)
    if (!s) return
    s.ledgerDirty = true
    this.kick()
  }

  kick() {
    if (this.flushing || !this.open) return
    this.pace.due()
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

  /** Does this connection's relay read spans as rows and facts short (its welcome said `rows`)? */
  rows() {
    return !!this.welcome && this.welcome.rows
  }

  /** The page's quiet moment (the agent just accounted a settled call): a batch waiting for it leaves now. */
  quiet() {
    if (this.pace.awaitingQuiet()) this.flush()
  }

  /** The agent's accounting window ran out: watched, its batch leaves now; unwatched, at its interval (pacing.js). */
  windowEnded() {
    if (this.pace.leavesAtWindowEnd()) this.flush()
  }

  flush() {
    this.pace.asked()
    if (!this.open || this.paused) return
    // A flush made now (open, bye, detach, a navigating form) also serves the one the window was waiting for.
    this.pace.leaving()
    this.flushing = true
    try {
      this.flushFeeds()
    } finally {
      this.flushing = false
    }
  }

  flushFeeds() {
    for (const s of this.feeds.values()) {
      if (s.said) continue // said bye: nothing more until resume()
      if (!s.helloSent) {
        if (s.helloTimer !== null) continue // refused a moment ago: the retry timer sends it again
        const h = s.feed.about
        const hello = frames.hello({ protocol: this.relay.protocol || PROTOCOL, agent: this.agent, session: h.session, config: h.config, lost: s.feed.delivery.lost })
        if (s.resume) hello.resume = s.resume
        if (!this.write(hello)) return
        s.helloSent = true
        s.toldLost = s.feed.delivery.lost
        for (const f of s.feed.replay()) {
          this.write(f)
          if (f.type === "status") s.lastStatus = JSON.stringify(f)
        }
        s.ledgerDirty = false
        s.ledgerAt = this.clock()
      }
      for (const f of s.feed.starts()) this.send(s.feed.id, f)
      const q = s.queue
      s.queue = []
      for (const f of q) this.write(f)
      if (s.resumed) this.sendSpans(s)
      if (s.resumed && s.late.length) this.sendFacts(s)
      if (s.ledgerDirty) this.sendLedger(s)
    }
  }

  /**
   * Send every held span the relay does not hold and this connection has not carried yet, in seq order,
   * with `floor`: the lowest seq this feed may still send (a call in flight, a held span the relay lacks, an
   * unsure eviction) or else the next seq to be given out. Below it the relay may stop waiting.
   */
  sendSpans(s) {
    const d = s.feed.delivery
    const pending = []
    let low = d.lowestUnsure()
    for (const span of s.feed.spans()) {
      if (d.has(span.seq)) continue
      if (low === null || span.seq < low) low = span.seq
      if (!s.sent.has(span.seq)) pending.push(span)
    }
    // Nothing to send but news of a loss (settled by a resume ack): an empty frame says it.
    if (!pending.length && d.lost === s.toldLost) return
    pending.sort((a, b) => a.seq - b.seq)
    let floor = null
    const seqs = s.feed.seqs()
    if (seqs) {
      floor = seqs.next
      for (const v of [seqs.open, low]) if (v !== null && v !== undefined && v < floor) floor = v
    }
    for (let i = 0; i === 0 || i < pending.length; i += MAX_SPANS_PER_FRAME) {
      const chunk = pending.slice(i, i + MAX_SPANS_PER_FRAME)
      const last = i + MAX_SPANS_PER_FRAME >= pending.length
      // The last frame of the batch carries the facts that are ready (their span sent, or in it): one send, not two.
      const ride = last && s.late.length ? this.readyFacts(s, chunk) : null
      const frame = frames.spans(s.feed.id, chunk, d.lost, ride && ride.items, this.rows())
      if (floor !== null) frame.floor = floor
      if (!this.write(frame)) return
      if (ride) s.late = ride.wait
      s.toldLost = d.lost
      for (const span of chunk) {
        s.sent.add(span.seq)
        d.written(span.seq)
      }
      this.counters.spansSent += chunk.length
      if (chunk.length) this.pace.carried()
    }
  }

  /**
   * The facts that may ride on a spans frame carrying `chunk`: those whose span is in it, was carried on this
   * connection or is held by the relay (at most MAX_SPANS_PER_FRAME); `wait` is what stays queued.
   * @param {any} s
   * @param {object[]} chunk
   */
  readyFacts(s, chunk) {
    const d = s.feed.delivery
    const here = new Set(chunk.map((span) => span.seq))
    const items = []
    const wait = []
    for (const f of s.late) {
      if (items.length < MAX_SPANS_PER_FRAME && (here.has(f.seq) || s.sent.has(f.seq) || d.has(f.seq))) items.push({ seq: f.seq, facts: f.facts })
      else wait.push(f)
    }
    return { items, wait }
  }

  /**
   * Facts whose span this connection carried (or the relay holds) leave now, batched (`items`, at most
   * MAX_SPANS_PER_FRAME a frame); the others wait for their span. Not restated after a reconnect.
   */
  sendFacts(s) {
    const d = s.feed.delivery
    const ready = []
    const wait = []
    for (const f of s.late) (s.sent.has(f.seq) || d.has(f.seq) ? ready : wait).push(f)
    s.late = wait
    for (let i = 0; i < ready.length; i += MAX_SPANS_PER_FRAME) {
      const chunk = ready.slice(i, i + MAX_SPANS_PER_FRAME)
      const short = this.rows()
      const frame =
        chunk.length === 1
          ? short ? frames.facts(s.feed.id, chunk[0].seq, frames.shortFacts(chunk[0].facts)) : chunk[0]
          : frames.factsItems(s.feed.id, chunk.map((f) => ({ seq: f.seq, facts: short ? frames.shortFacts(f.facts) : f.facts })))
      if (!this.write(frame)) return
    }
  }

  sendLedger(s) {
    const wait = ledgerWait(s.ledgerAt, this.clock(), this.pace.watched())
    if (wait > 0) {
      // pacing.js: at most one a second watched; unwatched, with the next batch after UNWATCHED_LEDGER_MS
      if (!s.ledgerWait.armed) s.ledgerWait.after(wait, () => (this.pace.watched() ? this.flush() : this.kick()))
      return
    }
    const f = s.feed.ledgerFrame
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
      if (!s || !Number.isInteger(msg.seq) || msg.seq < -1) return
      if (typeof msg.resume === "string" && /^[0-9a-f]{32}$/.test(msg.resume)) s.resume = msg.resume
      const resume = !s.resumed
      if (resume) s.helloAttempt = 0
      const d = s.feed.delivery
      s.feed.acked(msg.seq, msg.above, resume)
      for (const seq of s.sent) if (d.has(seq)) s.sent.delete(seq)
      if (resume) {
        s.resumed = true
        this.pace.resumed()
        this.kick()
      }
    } else if (msg.type === "error") {
      this.counters.errors++
      this.lastError = String(msg.code || "error")
      if (RESEND_ON.has(msg.code)) this.slowDown(String(msg.code))
      const s = typeof msg.session === "string" ? this.feeds.get(msg.session) : undefined
      if (s && s.said) {
        // said bye: a refusal now is of something sent before it, never a reason to say hello again
      } else if (s && s.helloSent && !s.resumed && msg.code === "session_taken" && s.resume === null && typeof s.feed.onRename === "function") this.renameFeed(s)
      else if (s && s.helloSent && !s.resumed) this.helloRefused(s)
      else if (s && s.resumed && msg.code === "unknown_session") {
        // The relay accepted this session once and no longer knows it (it restarted): hello again now.
        this.resetLink(s)
        this.kick()
      }
      if (msg.fatal) this.stop()
    } else if (msg.type === "watch") {
      // A session that became watched shows its current numbers now, not at the end of an unwatched interval.
      if (this.feeds.has(msg.session) && this.pace.told(msg)) this.flush()
    } else if (msg.type === "command") {
      // The terminal asked (through the relay) for something: only this socket can deliver one.
      if (typeof this.onCommand === "function") this.onCommand(msg)
    } else if (msg.type === "welcome") {
      // `payloads`: the relay has a use for opt-in payload frames (--otlp or --show-payloads); without it the
      // agent sends none, so bodies never cross the socket for nothing.
      this.welcome = { relay: String(msg.relay || ""), protocol: String(msg.protocol || ""), payloads: msg.payloads === true, rows: msg.rows === true }
      if (typeof this.onWelcome === "function") safely(() => this.onWelcome(this.welcome))
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
   * Our first hello was refused as `session_taken`: another socket holds that id, and this feed never had it (no
   * resume secret yet). The feed goes on under a new id (its owner restates the session under it) and says hello
   * at once; what waits in its queue goes under the new id.
   * @param {any} s
   */
  renameFeed(s) {
    const old = s.feed.id
    let id = newSessionId()
    while (id === old || this.feeds.has(id)) id = newSessionId()
    s.feed.renamed(id)
    this.feeds.delete(old)
    this.feeds.set(id, s)
    this.pace.forget(old)
    for (const f of s.queue) if (f.session === old) f.session = id
    for (const f of s.late) if (f.session === old) f.session = id
    this.counters.renamed++
    safely(() => this.warn(`[wmcp-top] session ${old} is held by another socket; this page goes on as session ${id}`))
    this.resetLink(s)
    safely(() => this.flush())
  }

  /**
   * The relay refused data (its rate cap, a memory cap or share, its session log behind: not stored, not
   * acked): hold off for a moment, then send again every held span it has not acked by then (the acks of what
   * it did take arrive meanwhile). Counted, and said in the console now and then.
   * @param {string} [code]
   */
  slowDown(code = "rate_limited") {
    if (code === "rate_limited") this.counters.rateLimited++
    this.counters.refused++
    this.lastRefusal = code
    const now = this.clock()
    if (now - this.warnedAt >= WARN_EVERY_MS) {
      this.warnedAt = now
      const text = `[wmcp-top] the relay refused data (${code}); kept in the page and sent again in ${RATE_PAUSE_MS} ms (${this.counters.refused} refusals so far)`
      safely(() => this.warn(text))
    }
    if (this.pauseTimer) return
    this.paused = true
    this.pauseTimer = this.st(() => {
      this.paused = false
      this.pauseTimer = null
      for (const s of this.feeds.values()) s.sent = new Set()
      safely(() => this.flush())
    }, RATE_PAUSE_MS)
  }

  /** Stop for good (fatal error, or detach): byes are sent by removeFeed beforehand. */
  stop() {
    this.closed = true
    this.state = "stopped"
    if (this.timer !== null) this.ct(this.timer)
    if (this.pauseTimer) this.ct(this.pauseTimer)
    this.pace.stop()
    this.timer = null
    for (const s of this.feeds.values()) {
      s.ledgerWait.cancel()
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
    return { state: this.state, url, ...this.counters, lastError: this.lastError, lastRefusal: this.lastRefusal, sessions: Array.from(this.feeds.keys()), acked, lost, watched: this.pace.watched() }
  }
}
