// The collector's sink: everything that leaves the collector turns into frames here (frames.js) and goes one way,
// to the uplink (its feed holds our spans, handed over as they are made) and to the channel mirror. Sessions
// the channel hears from other contexts are relayed the same way, each through a feed of its own. Nothing here
// reads spans back: the uplink has what it was handed.

import { Feed } from "../transport/feed.js"
import * as frames from "../transport/frames.js"
import { newSessionId, cap, safely } from "../shared/util.js"

const MAX_FOREIGN_SPANS = 500
const MAX_STARTS_PER_FRAME = 500
// Payload frames of calls made before the relay's welcome says whether it wants any (the socket still opening):
// held until it does, at most this many (each is already cut to maxPayloadLength).
const MAX_HELD_PAYLOADS = 64

/** A call's `start` entry (its span, same seq, says the rest). */
const startOf = (c) => ({ seq: c.seq, tool: c.tool, invokedAt: c.invokedAt, depth: c.depth, parent: c.parent })

export class Sink {
  /**
   * @param {object} o
   * @param {any} o.g  the global the agent runs in (the hello's title, visibility and timeOrigin)
   * @param {{origin: string, path: string, userAgent: string, context: string}} o.env
   */
  constructor({ g, env }) {
    this.g = g
    this.env = env
    /** @type {any} the collector, set by the agent once made (its state restates the session after a reconnect) */
    this.collector = null
    /** @type {import("../transport/uplink.js").Uplink|null} */
    this.uplink = null
    /** @type {import("./channel.js").ChannelMirror|null} */
    this.channel = null
    /** @type {Feed|null} our own session's feed (with an uplink) */
    this.feed = null
    /** @type {((id: string) => void)|null} the session went on under a new id */
    this.onRename = null
    /** calls begun since the last flush: their `start` leaves with it if they still run then */
    this.pendingStarts = []
    this.lastStatus = null
    /** @type {Map<string, Feed>} sessions relayed from the channel */
    this.foreign = new Map()
    /** payload frames waiting for the relay's welcome */
    this.heldPayloads = []
  }

  /**
   * Where frames go: the uplink (null: none) and the channel mirror (null: none).
   * @param {any} uplink
   * @param {any} channel
   */
  connect(uplink, channel) {
    this.uplink = uplink
    this.channel = channel
    if (!uplink) return
    uplink.onWelcome = (w) => this.welcomed(w)
    const c = this.collector
    this.feed = new Feed(c.sessionId, {
      hello: () => this.hello(),
      rename: () => this.rename(),
      seqs: () => c.openSeqs(),
      drain: () => this.sendStarts(),
      replay: () => this.replay(),
      ledgerFrame: () => frames.ledger(c.sessionId, c.registry.rev, c.ledger()),
    })
    c.lostFn = () => this.feed.delivery.lost
  }

  /** A frame of our own session: its `session` is the one the frame names (frames.js stamps it). */
  send(frame) {
    if (this.uplink) this.uplink.send(frame.session, frame)
  }

  // ---- what the collector says (Collector's `sink`) ------------------------------------------------------

  /** A call began: its `start` frame leaves with the uplink's next flush (the feed's drain) if it still runs then. */
  start(call) {
    const u = this.uplink
    if (!u || !u.open) return
    this.pendingStarts.push(call)
    u.kick()
  }

  span(span) {
    if (this.channel) this.channel.span(span)
    if (!this.feed) return
    this.feed.span(span)
    this.uplink.spansReady()
  }

  /** A span left the ring (evicted, or reset). */
  evicted(span) {
    if (this.feed) this.feed.evicted(span.seq)
  }

  update(seq, blockingMs) {
    const id = this.collector.sessionId
    if (this.channel) this.channel.update(id, seq, blockingMs)
    this.send(frames.update(id, seq, blockingMs))
  }

  /** A reset: what the uplink's window holds leaves first, under the spans' old seqs. */
  beforeReset() {
    if (this.uplink) safely(() => this.uplink.flush())
  }

  tool(rec, change) {
    if (this.uplink) this.send(this.toolFrame(rec, change))
  }

  ledger() {
    if (this.uplink) this.uplink.ledgerDirty(this.collector.sessionId)
  }

  /** The status may have changed: a status frame leaves when it says something new. */
  status() {
    if (!this.uplink) return
    const f = this.statusFrame()
    const key = JSON.stringify(f)
    if (key === this.lastStatus) return
    this.lastStatus = key
    this.send(f)
  }

  event(e) {
    if (this.uplink) this.send(frames.event(this.collector.sessionId, e.at, e.kind, e.detail))
  }

  /** Opt-in payload capture: the socket only (the relay hands it to OpenTelemetry), never the channel. */
  payload(p) {
    this.sendPayload(frames.payload(this.collector.sessionId, { seq: p.seq, arguments: p.arguments, result: p.result, ...(p.error ? { error: p.error } : {}) }))
  }

  // ---- what the agent's other parts say (facts.js, prompt.js) ---------------------------------------------

  /** Diagnosis facts of a span: to the relay only (never the channel). */
  facts(seq, facts) {
    if (this.uplink) this.send(frames.facts(this.collector.sessionId, seq, facts))
  }

  prompt(step) {
    if (this.uplink) this.send(frames.prompt(this.collector.sessionId, step))
  }

  /** A prompt's and its answer's text (capturePayloads), only to a relay that wants payloads. */
  promptPayload(p) {
    this.sendPayload(frames.payload(this.collector.sessionId, p))
  }

  /** Sent when the relay said it wants payloads; held (bounded) while it has not said yet; else dropped. */
  sendPayload(frame) {
    const u = this.uplink
    if (!u) return
    if (u.welcome) {
      if (u.welcome.payloads) this.send(frame)
    } else if (this.heldPayloads.length < MAX_HELD_PAYLOADS) {
      this.heldPayloads.push(frame)
    }
  }

  /** The relay's welcome: the payloads held for it leave now if it wants them. */
  welcomed(w) {
    const held = this.heldPayloads
    this.heldPayloads = []
    if (w.payloads) for (const f of held) this.send(f)
  }

  // ---- frames ---------------------------------------------------------------------------------------------

  /** Queue the `start` of every call begun since the last flush that still runs (or was a form's wait). */
  sendStarts() {
    if (!this.uplink) return
    const id = this.collector.sessionId
    // A call that settled within the window needs no start: its span (same seq, depth and parent) says it all,
    // and at a busy page's rate most calls settle before their window ends. A form call the relay saw waiting
    // for the user still says when the user submitted (its start again, no longer waiting).
    const running = this.pendingStarts.filter((c) => c.settledAt === null || (c.waitingSent && !c.waiting))
    this.pendingStarts = []
    for (const c of running) if (c.waiting) c.waitingSent = true
    while (running.length) {
      const calls = running.splice(0, MAX_STARTS_PER_FRAME).map((c) => ({ ...startOf(c), ...(c.terminal ? { invokedBy: "terminal" } : {}), ...(c.waiting ? { waiting: true } : {}) }))
      this.uplink.send(id, frames.start(id, calls))
    }
  }

  toolFrame(rec, change) {
    const at = (change === "unregistered" ? rec.unregisteredAt : rec.registeredAt) ?? this.collector.clock()
    return frames.tool(this.collector.sessionId, rec, change, at)
  }

  statusFrame() {
    return frames.status(this.collector.sessionId, this.collector.status(false))
  }

  // ---- our feed's hooks (the uplink asks at hello and after a reconnect) ------------------------------------

  hello() {
    const c = this.collector
    const g = this.g
    return {
      session: {
        id: c.sessionId,
        origin: this.env.origin,
        path: this.env.path,
        title: cap(safely(() => g.document.title, "") || "", 512),
        userAgent: this.env.userAgent,
        context: this.env.context,
        visibility: cap(safely(() => g.document.visibilityState, "visible") || "visible", 64),
        attachedAt: c.registry.attachedAt,
        timeOrigin: safely(() => g.performance.timeOrigin, 0) || 0,
      },
      config: { sample: c.config.sample, buffer: c.stats.buffer, errorPolicy: c.config.errorPolicy },
    }
  }

  /** What restates the session after hello: its tools, status, ledger and the calls running now. */
  replay() {
    const c = this.collector
    const out = []
    for (const rec of c.registry.tools.values()) if (rec.registered) out.push(this.toolFrame(rec, "registered"))
    const st = this.statusFrame()
    this.lastStatus = JSON.stringify(st)
    out.push(st)
    out.push(frames.ledger(c.sessionId, c.registry.rev, c.ledger()))
    this.pendingStarts = []
    const calls = Array.from(c.inFlight.values()).map((x) => ({ ...startOf(x), ...(x.waiting ? { waiting: true } : {}) }))
    if (calls.length) out.push(frames.start(c.sessionId, calls.slice(0, MAX_STARTS_PER_FRAME)))
    return out
  }

  /**
   * The relay refused our first hello: another socket holds this session id (a page that says it is us, or a
   * rare collision). The session carries on under a new id, never under the other's.
   * @returns {string} the new id
   */
  rename() {
    const c = this.collector
    const old = c.sessionId
    let id = newSessionId()
    while (id === old) id = newSessionId()
    c.rename(id)
    if (this.onRename) safely(() => this.onRename(id))
    this.lastStatus = null
    if (this.channel) {
      this.channel.sessionId = id
      safely(() => this.channel.announce())
    }
    return id
  }

  // ---- sessions relayed from the channel --------------------------------------------------------------------

  /** The channel heard a new session of another context of this origin: the uplink carries it, as relayed. */
  foreignSession(id) {
    if (!this.uplink) return
    const hello = () => ({ session: { id, origin: this.env.origin, context: "relayed", via: this.collector.sessionId, visibility: "unknown" }, config: {} })
    const feed = new Feed(id, { hello }, MAX_FOREIGN_SPANS)
    this.foreign.set(id, feed)
    this.uplink.addFeed(feed)
  }

  foreignSpan(span) {
    const feed = this.foreign.get(span.sessionId)
    if (feed && feed.span(span)) this.uplink.spansReady()
  }

  foreignUpdate(u) {
    const feed = this.foreign.get(u.sessionId)
    const span = feed && feed.held.get(u.seq)
    if (!span) return
    span.blockingMs = u.blockingMs
    this.uplink.send(u.sessionId, frames.update(u.sessionId, u.seq, u.blockingMs))
  }
}
