// The collector's sink: everything that leaves the collector turns into frames here (frames.js) and goes one way,
// to the uplink's feed for our session (transport/feed.js: the spans, the calls begun and accounted, and what
// restates the session after a reconnect: its hello, tools, status and ledger, each pushed when it changes) and to
// the channel mirror. Sessions the channel hears from other contexts are relayed the same way, each through a feed
// of its own. The uplink sends from the feeds alone and never asks the page for anything.

import { Feed, begun } from "../transport/feed.js"
import * as frames from "../transport/frames.js"
import { cap, safely } from "../shared/util.js"

const MAX_FOREIGN_SPANS = 500
// Payload frames of calls made before the relay's welcome says whether it wants any (the socket still opening):
// held until it does, at most this many (each is already cut to maxPayloadLength).
const MAX_HELD_PAYLOADS = 64

export class Sink {
  /**
   * @param {object} o
   * @param {any} o.g  the global the agent runs in (the hello's title, visibility and timeOrigin)
   * @param {{origin: string, path: string, userAgent: string, context: string}} o.env
   * @param {(fn: () => void) => void} [o.microtask]  queues a microtask (the ledger of a burst of registry changes is made once)
   */
  constructor({ g, env, microtask = (fn) => queueMicrotask(fn) }) {
    this.g = g
    this.env = env
    this.microtask = microtask
    /** @type {any} the collector, set by the agent once made (its state is what the frames made here say) */
    this.collector = null
    /** @type {import("../transport/uplink.js").Uplink|null} */
    this.uplink = null
    /** @type {import("./channel.js").ChannelMirror|null} */
    this.channel = null
    /** @type {Feed|null} our own session's feed (with an uplink) */
    this.feed = null
    /** @type {((id: string) => void)|null} the session went on under a new id */
    this.onRename = null
    /** a registry change's ledger frame is due at the end of this task */
    this.ledgerQueued = false
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
    const feed = (this.feed = new Feed(c.sessionId, this.about(), { seqs: true }))
    // What the relay's acks tell of loss: the collector's status says it, and the feed restates that status.
    feed.onLost = (n) => {
      c.lost = n
      this.restateStatus()
    }
    feed.onRename = (id) => this.rename(id)
    this.pushLedger()
  }

  /** A frame of our own session: its `session` is the one the frame names (frames.js stamps it). */
  send(frame) {
    if (this.uplink) this.uplink.send(frame.session, frame)
  }

  // ---- what the collector says (Collector's `sink`) ------------------------------------------------------

  /** A call began: its `start` frame leaves with the uplink's next flush if it still runs then (feed.js). */
  start(call) {
    if (!this.feed) return
    // The call keeps what the feed was handed (again for a form's submit), to say when it settled and was accounted.
    const b = begun(call.seq, call.tool, call.invokedAt, call.depth, call.parent, !!call.terminal, !!call.waiting)
    this.feed.begin(b, call.begun || undefined)
    call.begun = b
    this.uplink.kick()
  }

  /** A call settled (its span follows once accounted). */
  settled(call) {
    if (call.begun) this.feed.settled(call.begun)
  }

  /** A settled call runs again: the transport observer adopted it (collector.adopt). */
  reopened(call) {
    if (call.begun) this.feed.reopened(call.begun)
  }

  /** These calls were accounted (each became its span, or its accounting failed). */
  accounted(calls) {
    for (const call of calls) if (call.begun) this.feed.accounted(call.begun)
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
    safely(() => this.deliver())
  }

  tool(rec, change) {
    if (!this.feed) return
    const f = this.toolFrame(rec, change)
    this.feed.tool(f)
    this.send(f)
  }

  /** A tool listed now whose frame waits for the host's kept annotations (keptAnnotations): restated meanwhile. */
  listed(rec) {
    if (this.feed) this.feed.tool(this.toolFrame(rec, "registered"))
  }

  /** A registration the host refused: said, never restated (not a tool). */
  rejected(rec) {
    if (this.feed) this.send(this.toolFrame(rec, "registered"))
  }

  /**
   * The ledger changed: its frame is made now for a batch of accounted calls (`batch`), else once at the end of this
   * task (a page registering a hundred tools in a row makes one), and handed to the feed; the uplink sends the
   * newest at its pace (pacing.js).
   */
  ledger(batch = false) {
    if (!this.feed) return
    if (batch) return this.pushLedger()
    if (this.ledgerQueued) return
    this.ledgerQueued = true
    this.microtask(() => {
      if (this.ledgerQueued) safely(() => this.pushLedger())
    })
  }

  pushLedger() {
    this.ledgerQueued = false
    const c = this.collector
    this.feed.ledger(frames.ledger(c.sessionId, c.registry.rev, c.ledger()))
    this.uplink.ledgerDirty(c.sessionId)
  }

  /** The status may have changed: its frame restates the session, and leaves if it says something new (uplink.js). */
  status() {
    if (!this.feed) return
    this.describe()
    const f = this.statusFrame()
    this.feed.status(f)
    this.send(f)
  }

  /** The status as it is now restates the session after a reconnect; it leaves with the next change. */
  restateStatus() {
    if (this.feed) this.feed.status(this.statusFrame())
  }

  event(e) {
    if (!this.feed) return
    this.describe()
    this.send(frames.event(this.collector.sessionId, e.at, e.kind, e.detail))
  }

  /** What waits leaves now (a navigation, pagehide, detach): the ledger a registry change made due, then the batch. */
  deliver() {
    if (!this.feed) return
    if (this.ledgerQueued) this.pushLedger()
    this.uplink.flush()
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

  toolFrame(rec, change) {
    const at = (change === "unregistered" ? rec.unregisteredAt : rec.registeredAt) ?? this.collector.clock()
    return frames.tool(this.collector.sessionId, rec, change, at)
  }

  statusFrame() {
    return frames.status(this.collector.sessionId, this.collector.status(false))
  }

  // ---- what describes and restates our session (the feed's) ----------------------------------------------

  /** The hello's session and config: title and visibility as they are when the session last changed. */
  about() {
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

  describe() {
    this.feed.describe(this.about())
  }

  /**
   * The relay refused our first hello: another socket holds this session id (a page that says it is us, or a
   * rare collision). The session carries on under the new id the uplink gave its feed, never under the other's,
   * and everything that restates it is made again under that id.
   * @param {string} id
   */
  rename(id) {
    const c = this.collector
    c.rename(id)
    if (this.onRename) safely(() => this.onRename(id))
    if (this.channel) {
      this.channel.sessionId = id
      safely(() => this.channel.announce())
    }
    const feed = this.feed
    this.describe()
    for (const rec of c.registry.tools.values()) feed.tool(this.toolFrame(rec, rec.registered ? "registered" : "unregistered"))
    feed.status(this.statusFrame())
    this.pushLedger()
    for (const f of this.foreign.values()) f.describe(this.foreignAbout(f.id))
  }

  // ---- sessions relayed from the channel --------------------------------------------------------------------

  /** The channel heard a new session of another context of this origin: the uplink carries it, as relayed. */
  foreignSession(id) {
    if (!this.uplink) return
    const feed = new Feed(id, this.foreignAbout(id), { max: MAX_FOREIGN_SPANS })
    this.foreign.set(id, feed)
    this.uplink.addFeed(feed)
  }

  /** A relayed session's hello: it came through our session. */
  foreignAbout(id) {
    return { session: { id, origin: this.env.origin, context: "relayed", via: this.collector.sessionId, visibility: "unknown" }, config: {} }
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
