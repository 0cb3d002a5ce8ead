// The interceptor: find modelContext registries (document, navigator, window), however late; patch
// registerTool / unregisterTool / provideContext / clearContext / executeTool on the instance; wrap each tool's execute
// in place before the host sees it (Chromium captures execute at registration). detach() restores all.

import { wrapExecute, isWrapper, originalOf, isInternal, isPlainPromise, NATIVE_THEN } from "./wrap.js"
import { descriptorFingerprint, fnv1a32, sourceOf } from "./fingerprint.js"
import { utf8Length, safely, read, cap, isScalar, listenWhile } from "../shared/util.js"
import { watchRegistries, isNativeFunction } from "./traps.js"

const LOCATIONS = ["document", "navigator", "window"]
const METHODS = ["registerTool", "unregisterTool", "provideContext", "clearContext", "executeTool"]
const MAX_DESCRIPTOR = 64 * 1024

/** Descriptor facts of a tool: the text the host ships to the model anyway (never a body). */
export function describeTool(tool) {
  const d = {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: tool.inputSchema,
    annotations: tool.annotations,
  }
  let text = null
  try {
    text = JSON.stringify(d)
  } catch {
    text = null
  }
  const schemaBytes = typeof text === "string" ? utf8Length(text) : 0
  return {
    schemaBytes,
    descriptor: text !== null && schemaBytes <= MAX_DESCRIPTOR ? text : null,
    annotationsSent: scalars(tool.annotations),
  }
}

/** The scalar entries of an annotations object (at most 16), or null. */
export function scalars(obj) {
  if (!obj || typeof obj !== "object") return null
  const out = {}
  let n = 0
  for (const k of Object.keys(obj)) {
    if (n >= 16) break
    const v = obj[k]
    if (!isScalar(v) || k.length > 64) continue
    out[k] = typeof v === "string" ? cap(v, 200) : v
    n++
  }
  return out
}

/** A tool name as the wire takes it: 1..128 code points. */
export const toolName = (name) => cap(String(name), 128) || "(unnamed)"

/** How this host serialises results (see measure.js): the polyfill marks its instances. */
export function profileOf(host) {
  return host && read(host, "__isWebMCPPolyfill", false) === true ? "mcp-b" : "chromium"
}

/**
 * The registries the agent patched, by identity, held weakly: a registry the page swapped out (a package
 * replacing document.modelContext, hundreds of times on some pages) is collected with everything the agent hung
 * on it. Its entry is a WeakMap value, so the entry's own references to the registry (restore closures,
 * listeners) keep nothing alive; iteration visits the registries still reachable.
 */
class HostTable {
  constructor() {
    /** @type {WeakMap<object, any>} */
    this.map = new WeakMap()
    /** @type {Set<{deref: () => object|undefined}>} */
    this.refs = new Set()
  }
  has(host) {
    return this.map.has(host)
  }
  get(host) {
    return this.map.get(host)
  }
  set(host, entry) {
    if (!this.map.has(host)) this.refs.add(weakRef(host))
    this.map.set(host, entry)
  }
  /** The registries still reachable and their entries, as they are now (arrays: the sweep at load reads them). */
  entries() {
    const out = []
    for (const ref of this.refs) {
      const host = ref.deref()
      if (host === undefined) this.refs.delete(ref)
      else out.push([host, this.map.get(host)])
    }
    return out
  }
  values() {
    const out = []
    for (const [, entry] of this.entries()) out.push(entry)
    return out
  }
  [Symbol.iterator]() {
    return this.entries()[Symbol.iterator]()
  }
  clear() {
    this.map = new WeakMap()
    this.refs.clear()
  }
}

/** A weak reference where the engine has them (every browser the agent targets); a strong one elsewhere. */
export function weakRef(target) {
  return typeof WeakRef === "function" ? new WeakRef(target) : { deref: () => target }
}

export class Interceptor {
  /**
   * @param {import("./collector.js").Collector} collector
   * @param {object} [o]
   * @param {object} [o.global]  the window (globalThis)
   * @param {number} [o.pollMs]
   * @param {Function} [o.setInterval]
   * @param {Function} [o.clearInterval]
   */
  constructor(collector, { global: g = globalThis, pollMs = 250, setInterval: si = globalThis.setInterval, clearInterval: ci = globalThis.clearInterval } = {}) {
    this.c = collector
    this.g = g
    this.pollMs = pollMs
    this.si = si
    this.ci = ci
    this.timer = null
    /** listed: getTools() has answered; activations: the `toolactivated` listener (countActivations)
     * later: the `toolcancel` and `toolchange` listeners, on once the rest is here (resume)
     * @type {HostTable} of {location:string, restore:Function[], names:Set<string>, listed:boolean, activations:?object, later:?object[]} */
    this.hosts = new HostTable()
    /** tool object -> {original, wrapper} for in-place wraps */
    this.wrapped = new Map()
    /** name -> {host, tool, wrapper, passed} of the live registration; `host` a weak reference (HostTable) */
    this.live = new Map()
    this.busy = 0 // inside provideContext/clearContext: nested calls pass through
    this.gen = 0 // bumps on every accepted registration (reconcile ignores newer ones)
    this.epoch = 0 // bumps on every registration change the agent saw
    /** name -> epoch of its last change: a getTools() answer older than that is stale for the name */
    this.changed = new Map()
    /** names whose registration the host has not answered yet */
    this.pendingNames = new Map()
    this.onFound = null
    this.onSweep = null
    /** the declarative tools (forms.js): names it owns are not "registered before the agent" */
    this.forms = null
    /** [host, name] of each patched registerTool running its host's original: a registration of the same
     * name on another registry meanwhile is that host's mirror (@mcp-b/global's server copies each tool onto
     * the native registry); any other name is a registration of its own */
    this.mirroring = []
    /** name -> the host holding a mirror of our registration: not the page's tool a second time */
    this.mirrors = new Map()
    /** name -> native calls entered through a mirror whose page function has not run yet (profileFor) */
    this.nativeCalls = new Map()
    this.unwatch = null
    /** tools on an MCP server registered before the agent: their MCP-client calls reach no wrapper */
    this.unseen = new Set()
    this.unseenReason = null
    /** reporting to the early buffer (eager.js): the host's list waits for resume() */
    this.early = false
    /** @type {((host: any) => void)|null} reads a host's list (listing.js), set by the agent */
    this.lister = null
  }

  start() {
    // A registry installed later (a polyfill, @mcp-b/global's server, a page's own) is patched the moment it
    // is defined, before the page can register on it (traps.js); the poll stays for what no trap sees.
    this.unwatch = watchRegistries(this.g, () => {
      if (this.c.active) this.sweep()
    })
    this.sweep()
    if (!this.hasDocumentHost()) this.timer = this.si(() => safely(() => this.sweep()), this.pollMs)
  }

  /**
   * The rest of the agent arrived (eager.js) with its collector: what it adds to each registry found so far
   * (forms, the report tool), a fresh look at each host's list, and a sweep.
   */
  resume() {
    this.early = false
    for (const [host, entry] of this.hosts) {
      if (this.onFound) safely(() => this.onFound(host, entry.location))
      if (entry.later) for (const l of entry.later) l.want(true)
      this.reconcile(host)
    }

    safely(() => this.sweep())
  }

  hasDocumentHost() {
    for (const h of this.hosts.values()) if (h.location === "document") return true
    return false
  }

  /** Look for registries; patch the new ones. Stops polling once document.modelContext is found. */
  sweep() {
    let docHost = null
    for (const loc of LOCATIONS) {
      // Beside a document registry, navigator's is at most its alias, or a legacy one a page made itself: looked
      // at once the rest is here (resume), not at load, where reading `navigator` makes the engine build its
      // interface (about 0.3 ms and 18 KB of a cold page's main thread and heap) for a page that may never touch it.
      if (loc === "navigator" && docHost && this.early) continue
      const owner = loc === "window" ? this.g : this.g[loc]
      if (!owner) continue
      let host
      try {
        // navigator.modelContext is a deprecated alias: a polyfill's getter for it warns when read. Read it
        // only where it is the engine's own, or where document has no registry to stand for it.
        if (loc === "navigator" && docHost && !plainOrNative(owner, "modelContext")) continue
        host = owner.modelContext
      } catch {
        continue
      }
      if (loc === "document" && host && typeof host === "object") docHost = host
      if (!host || (typeof host !== "object" && typeof host !== "function") || this.hosts.has(host)) continue
      if (typeof host.registerTool !== "function" && typeof host.provideContext !== "function") continue
      this.patch(host, loc)
    }
    if (this.onSweep) safely(() => this.onSweep())
    if (this.timer !== null && this.hasDocumentHost()) {
      this.ci(this.timer)
      this.timer = null
    }
  }

  patch(host, location) {
    const entry = { location, restore: [], names: new Set(), originals: {}, listed: false, activations: null, later: null }
    this.hosts.set(host, entry)
    this.c.hostFound(location)
    const self = this
    for (const m of METHODS) {
      const original = host[m]
      if (typeof original !== "function") continue
      entry.originals[m] = original
      const own = Object.getOwnPropertyDescriptor(host, m)
      const patched = {
        // A function in parentheses (compiled with the script: pages register at load), named as the host's.
        registerTool: (function (tool, options) {
          if (self.busy || !self.c.active) return original.apply(this, arguments)
          if (self.mirroring.length && self.isMirror(host, tool)) return self.mirror(host, original, this, arguments, tool)
          return self.registerTool(host, original, this, arguments, tool, options)
        }),
        unregisterTool(name) {
          const ret = original.apply(this, arguments)
          if (!self.busy && self.c.active) safely(() => self.dropName(host, String(name), undefined, true))
          return ret
        },
        provideContext(context) {
          if (self.busy || !self.c.active) return original.apply(this, arguments)
          return self.provideContext(host, original, this, arguments, context)
        },
        // A tool calling another tool: the call the browser makes next is this caller's child (collector.js).
        // The page awaiting a call holds the accounting until it has its answer (Collector.scheduleFlush); only
        // the engine's own promises are watched, so no page `then` runs for our sake.
        executeTool(tool) {
          if (!self.c.active) return original.apply(this, arguments)
          // Before the agent's rest is here (early.js): the call goes to the host once it is listening.
          const wait = self.c.restWait()
          if (wait) return NATIVE_THEN.call(wait, () => patched.apply(this, arguments))
          const release = safely(() => self.c.nestedCall(toolName(typeof tool === "string" ? tool : tool && tool.name)), null)
          let ret
          try {
            ret = original.apply(this, arguments)
          } catch (err) {
            if (release) release()
            throw err
          }
          if (isPlainPromise(ret)) {
            const answered = self.c.pageWait()
            const done = () => {
              answered()
              if (release) release()
            }
            safely(() => NATIVE_THEN.call(ret, done, done))
          } else if (release) {
            if (ret && typeof ret.then === "function") safely(() => ret.then(release, release))
            else release()
          }
          return ret
        },
        clearContext() {
          self.busy++
          let ret
          try {
            ret = original.apply(this, arguments)
          } finally {
            self.busy--
          }
          if (self.c.active) safely(() => self.contextCleared(host))
          return ret
        },
      }[m]
      try {
        Object.defineProperty(host, m, { value: patched, writable: true, configurable: true, enumerable: own ? own.enumerable : false })
        entry.restore.push(() => {
          if (host[m] !== patched) return // someone replaced it after us: leave theirs
          if (own) Object.defineProperty(host, m, own)
          else delete host[m]
        })
      } catch {
        this.c.wrapFailed(m)
      }
    }
    if (typeof host.addEventListener === "function") {
      const onChange = () => safely((() => this.reconcile(host)))
      const onCancel = (e) => safely(() => this.c.toolCancel(e && (e.toolName || e.name || (e.detail && e.detail.toolName)) || ""))
      const onActivated = (e) => safely(() => this.activated(e && typeof e.toolName === "string" ? e.toolName : ""))
      // (A host whose addEventListener throws has its list read at each sweep.) A change is looked at once the rest
      // is here: before, reconcile() has nothing to do (resume() reads every host's list), and at load the first
      // change's Event would build that interface, about 4 KB of a page's heap.
      // A toolcancel listener on a frame's registry from the start of its load leaves Chromium 156's host in that
      // frame silent for good now and then (its getTools() never answers): 9 of 240 framed loads under load,
      // 0 of 240 with the listener added after the load. It waits for the rest, as the toolchange one does.
      const later = (entry.later = [listenWhile(host, "toolcancel", onCancel), listenWhile(host, "toolchange", onChange)])
      for (const l of later) l.want(!this.early)
      entry.restore.push(() => later.forEach((l) => l.want(false)))
      // Until getTools() first answers whether a tool was registered before us, every call is heard; then only
      // while one is counted rather than measured (countActivations). A host that never lists keeps listening.
      entry.activations = listenWhile(host, "toolactivated", onActivated)
      entry.activations.want(true)
      entry.restore.push(() => entry.activations.want(false))
    }
    // Tools registered before we arrived: listed, not wrapped (use instrument()).
    this.reconcile(host)
    if (this.onFound) safely(() => this.onFound(host, location))
    // @mcp-b/global's server stands in front of the registry it mirrors onto (the native one, or the strict
    // polyfill's): patched too, so its toolactivated counts the native calls of tools we could not wrap.
    const behind = mcpServerOf(host) ? safely(() => host.native, null) : null
    if (behind && typeof behind === "object" && typeof behind.registerTool === "function" && !this.hosts.has(behind)) this.patch(behind, location)
  }

  /**
   * Listen for `toolactivated` only while the host lists a tool whose calls it would count (activated): one the
   * host runs unwrapped, even after instrument() wrapped the page's own object. Chromium fires it for every
   * call, and a listener costs each call of a wrapped tool too (about 20 µs of the page's main thread, the
   * README's "What watching costs the page").
   */
  countActivations() {
    let wanted = false
    for (const [name, live] of this.live) {
      if (!live.wrapper && name !== this.c.reportToolName && !(live.rec && live.rec.internal)) {
        wanted = true
        break
      }
    }
    for (const entry of this.hosts.values()) if (entry.activations && entry.listed) entry.activations.want(wanted)
  }

  /**
   * The host is about to run `name` (Chromium fires `toolactivated` for every call, before execute). A tool
   * the agent wrapped is measured by its span: not counted again here. One it could not wrap (registered
   * before the agent loaded, or an execute it could not replace) is counted: a call and its time, no more.
   */
  activated(name) {
    if (!name || name === this.c.reportToolName || this.pendingNames.has(name)) return
    if (this.forms && this.forms.tools.has(name)) return // a declarative tool: measured by forms.js
    const live = this.live.get(toolName(name))
    if (live && live.wrapper) return
    this.c.countedCall(toolName(name))
  }

  /** Wrap `tool.execute` in place; when the object refuses, register a copy. Returns what to hand the host. */
  prepare(tool, host) {
    if (!tool || typeof tool !== "object" || typeof tool.execute !== "function" || typeof tool.name !== "string") return { passed: tool, wrapper: null }
    if (isInternal(tool)) return { passed: tool, wrapper: null }
    const current = tool.execute
    if (isWrapper(current)) return { passed: tool, wrapper: current }
    // A polyfill registers each declarative form through registerTool: its execute answers with what the page
    // gave respondWith (validation messages included), serialised the polyfill's way.
    const form = this.forms ? this.forms.formOf(tool.name) : null
    const base = form ? "mcp-b-form" : this.profileFor(host, tool.name)
    // Wrapped before forms.js loaded (eager.js): whether the tool is a form is asked at its first call once forms.js
    // is here (a polyfill registers a form's tool while the form is in the document).
    const name = tool.name
    let isForm = null
    const profile = this.forms
      ? base
      : (self) => {
          isForm ??= this.forms && this.forms.formOf(name) !== null
          return isForm ? "mcp-b-form" : typeof base === "function" ? base(self) : base
        }
    const wrapper = wrapExecute(this.c, toolName(tool.name), current, profile)
    try {
      tool.execute = wrapper
    } catch {
      /* frozen or a getter without setter */
    }
    if (tool.execute === wrapper) {
      this.wrapped.set(tool, { original: current, wrapper })
      return { passed: tool, wrapper }
    }
    try {
      const copy = { ...tool, name: tool.name, title: tool.title, description: tool.description, inputSchema: tool.inputSchema, annotations: tool.annotations, execute: wrapper }
      for (const k of Object.keys(copy)) if (copy[k] === undefined) delete copy[k]
      return { passed: copy, wrapper }
    } catch {
      this.c.wrapFailed(tool.name)
      return { passed: tool, wrapper: null }
    }
  }

  record(tool, internal = false) {
    const name = toolName(tool.name)
    /** @type {Record<string, any>} */
    const rec = { name, ...describeTool(tool), annotationsKept: null, internal }
    if (!internal) this.asForm(rec, tool.inputSchema)
    // 001's descriptor fingerprint (webmcp.tool.descriptor), with the handler's source folded in only under
    // `fingerprintHandler` (off by default: a bundled handler moves on every load), so a swapped function under
    // an identical descriptor still counts as a redefinition. The page's function, never our wrapper.
    if (!internal) {
      const withHandler = this.c.config.fingerprintHandler === true
      const fp = safely((() => descriptorFingerprint(withHandler ? { ...tool, execute: originalOf(tool.execute) } : tool, withHandler)), null)
      if (fp) rec.fingerprint = fp
      // Kept in the page only: tells the `redefined` event whether the handler moved too.
      if (withHandler) rec.handlerHash = safely(() => fnv1a32(sourceOf(originalOf(tool.execute)) ?? ""), null)
    }
    return rec
  }

  /** A declarative form's tool (forms.js) says so in its record, with the form's facts. */
  asForm(rec, inputSchema) {
    const form = this.forms && !rec.kind ? this.forms.formOf(rec.name) : null
    if (form) Object.assign(rec, { kind: "form", form: this.forms.factsOf(form, inputSchema) })
  }

  registerTool(host, original, thisArg, args, tool, options) {
    let prep
    let rec = null
    try {
      prep = this.prepare(tool, host)
      if (prep.passed && typeof prep.passed === "object" && typeof tool.name === "string" && tool.name) rec = this.record(tool, isInternal(tool))
    } catch {
      prep = { passed: tool, wrapper: null }
    }
    const a = Array.prototype.slice.call(args)
    a[0] = prep.passed
    if (rec) this.pend(rec.name, 1)
    let ret
    this.mirroring.push([host, rec ? rec.name : null])
    try {
      ret = original.apply(thisArg, a)
    } catch (err) {
      if (rec) {
        this.pend(rec.name, -1)
        safely(() => this.refused(tool, rec, err))
      }
      throw err
    } finally {
      this.mirroring.pop()
    }
    if (!rec) return ret
    const ok = () => {
      this.pend(rec.name, -1)
      safely((() => this.accepted(host, tool, prep, rec, options)))
    }
    const bad = (err) => {
      this.pend(rec.name, -1)
      safely(() => this.refused(tool, rec, err))
    }
    if (ret && typeof ret.then === "function") {
      try {
        ret.then(ok, bad)
      } catch {
        ok()
      }
    } else ok()
    return ret
  }

  pend(name, d) {
    const n = (this.pendingNames.get(name) || 0) + d
    if (n > 0) this.pendingNames.set(name, n)
    else this.pendingNames.delete(name)
  }

  accepted(host, tool, prep, rec, options) {
    const signal = options && options.signal
    // Aborted before the host accepted it: the host drops it, and so does the ledger (webmcp-profiler's rule).
    if (signal && safely(() => signal.aborted === true, false)) return this.unwrap(tool, rec.name)
    // Stamped when the host accepted it: the annotations read below arrive a little later.
    rec.acceptedAt = this.c.clock()
    const entry = this.hosts.get(host)
    if (entry) entry.names.add(rec.name)
    // Reported to the collector once the host says which annotations it kept (getTools() can take a round trip
    // to the browser process), or at once when the tool is withdrawn before that answer.
    const live = { host: weakRef(host), tool, wrapper: prep.wrapper, since: ++this.gen, rec, reported: false }
    this.live.set(rec.name, live)
    this.changed.set(rec.name, ++this.epoch)
    if (!prep.wrapper && !rec.internal) this.c.unwrappedTool(rec.name)
    else this.c.wrappedTool(rec.name)
    this.countActivations()
    if (signal && typeof signal.addEventListener === "function") {
      // Only while this registration is the live one: a host that allows a name again (webmcp-profiler's fake host
      // does) keeps the newer registration when the older one's signal aborts, and so do we.
      const onAbort = () => safely(() => this.live.get(rec.name) === live && this.dropName(host, rec.name, tool, true))
      safely(() => signal.addEventListener("abort", onAbort, { once: true }))
    }
    // Listed now, as webmcp-profiler lists it on acceptance; its tool frame waits for the annotations kept.
    this.c.registered(rec, false)
    // Before the rest of the agent (eager.js) the host is not asked yet (a getTools() a registration): askKeptLater.
    if (!this.early) this.askKept(host, live)
  }

  /** The registrations made before the rest of the agent, once the collector has them: ask their hosts now. */
  askKeptLater() {
    for (const live of this.live.values()) {
      const host = live.rec && !live.reported ? live.host.deref() : undefined
      if (host) safely(() => this.askKept(host, live))
    }
  }

  /** Ask the host which annotations it kept of a live registration; its tool frame leaves with the answer. */
  askKept(host, live) {
    const name = live.rec.name
    this.withKept(host, name, (kept) => {
      if (live.reported || this.live.get(name) !== live) return
      live.reported = true
      this.c.keptAnnotations(name, kept)
    })
  }

  /** Put the page's execute back on a tool that no registration holds any more (webmcp-profiler's unregister). */
  unwrap(tool, name) {
    const w = this.wrapped.get(tool)
    if (!w) return
    for (const l of this.live.values()) if (l.tool === tool) return
    for (const e of this.hosts.values()) if (e.names.has(name)) return
    safely(() => {
      if (tool.execute === w.wrapper) tool.execute = w.original
    })
    this.wrapped.delete(tool)
  }

  refused(tool, rec, err) {
    // A refused registration keeps nothing of ours: put the page's execute back.
    const w = this.wrapped.get(tool)
    const live = this.live.get(rec.name)
    if (w && !(live && live.tool === tool)) {
      safely(() => {
        if (tool.execute === w.wrapper) tool.execute = w.original
      })
      this.wrapped.delete(tool)
    }
    this.c.rejected(rec, err)
  }

  /** Ask the host's getTools() what it kept of this tool's annotations; `done(null)` when it cannot say. */
  withKept(host, name, done) {
    let finished = false
    const finish = (v) => {
      if (finished) return
      finished = true
      done(v)
    }
    if (typeof host.getTools !== "function") return finish(null)
    try {
      const r = host.getTools()
      const read = (list) => {
        const t = Array.isArray(list) ? list.find((x) => x && x.name === name && this.ownFrame(x)) : null
        finish(t ? scalars(t.annotations) || {} : null)
      }
      if (r && typeof r.then === "function") r.then(read, () => finish(null))
      else read(r)
    } catch {
      finish(null)
    }
  }

  provideContext(host, original, thisArg, args, context) {
    const tools = context && Array.isArray(context.tools) ? context.tools : []
    const preps = tools.map((t) => {
      try {
        return { tool: t, ...this.prepare(t, host), rec: t && typeof t.name === "string" && t.name ? this.record(t) : null }
      } catch {
        return { tool: t, passed: t, wrapper: null, rec: null }
      }
    })
    let passedContext = context
    if (preps.some((p) => p.passed !== p.tool)) passedContext = { ...context, tools: preps.map((p) => p.passed) }
    const a = Array.prototype.slice.call(args)
    a[0] = passedContext
    this.busy++
    let ret
    try {
      ret = original.apply(thisArg, a)
    } finally {
      this.busy--
    }
    const done = () =>
      safely(() => {
        // One event for the replacement, then the withdrawals and the new registrations it stands for.
        const entry = this.hosts.get(host)
        const withdrawn = entry ? entry.names.size : 0
        this.c.event("context-provide", { tools: preps.filter((p) => p.rec).length, withdrawn, host: entry ? entry.location : "unknown" })
        this.dropAll(host)
        for (const p of preps) if (p.rec) this.accepted(host, p.tool, p, p.rec, null)
      })
    if (ret && typeof ret.then === "function") ret.then(done, () => {})
    else done()
    return ret
  }

  /** `unwrap`: an unregistration by the page (unregisterTool, its signal): the tool gets its execute back. */
  dropName(host, name, tool, unwrap = false) {
    const live = this.live.get(name)
    if (!live || live.host.deref() !== host || (tool && live.tool !== tool)) return
    if (live.rec && !live.reported) {
      live.reported = true
      this.c.keptAnnotations(name, null)
    }
    this.live.delete(name)
    this.mirrors.delete(name)
    this.changed.set(name, ++this.epoch)
    const entry = this.hosts.get(host)
    if (entry) entry.names.delete(name)
    this.c.unregistered(name)
    if (!live.wrapper) this.countActivations()
    if (unwrap && live.tool) this.unwrap(live.tool, name)
  }

  /** clearContext succeeded on `host`: one event, then each tool withdrawn. */
  contextCleared(host) {
    const entry = this.hosts.get(host)
    this.c.event("context-clear", { withdrawn: entry ? entry.names.size : 0, host: entry ? entry.location : "unknown" })
    this.dropAll(host)
  }

  /**
   * Read the host's list (getTools(), listing.js): tools registered before the agent, withdrawals the host made
   * alone. Before the rest of the agent (eager.js) there are no forms to tell the page's declarative tools from
   * tools registered before the agent: the list is read once the rest is here (resume).
   */
  reconcile(host) {
    if (!this.early && this.lister) this.lister(host)
  }

  dropAll(host) {
    const entry = this.hosts.get(host)
    if (!entry) return
    for (const name of Array.from(entry.names)) this.dropName(host, name)
  }

  /** Is this registration, made inside a patched registerTool, the outer one's copy (same name, other host)? */
  isMirror(host, tool) {
    const outer = this.mirroring[this.mirroring.length - 1]
    const name = safely(() => (tool && typeof tool.name === "string" ? toolName(tool.name) : null), null)
    return outer[0] !== host && outer[1] !== null && outer[1] === name
  }

  /**
   * A registration made while a patched registerTool was running its host's original: that host's copy of
   * the tool on another registry (@mcp-b/global's server registers a mirror on the native one, whose execute
   * runs the same page function the agent already wrapped). Passed through unwrapped, so a native call is
   * measured once, by the page function's wrapper; the copy is not listed as a second tool.
   */
  mirror(host, original, thisArg, args, tool) {
    const name = safely(() => (tool && typeof tool.name === "string" && tool.name ? toolName(tool.name) : null), null)
    if (name) {
      this.mirrors.set(name, host)
      // The mirror's execute only tells which caller the page function's next run answers (profileFor): a
      // native caller receives the host's serialisation, not the MCP envelope. It measures nothing itself.
      safely(() => {
        const run = tool.execute
        if (typeof run !== "function" || isWrapper(run)) return
        const calls = this.nativeCalls
        tool.execute = function () {
          calls.set(name, Math.min(64, (calls.get(name) || 0) + 1))
          return run.apply(this, arguments)
        }
      })
    }
    return original.apply(thisArg, args)
  }

  /**
   * How the caller of a tool registered on `host` receives its result. On @mcp-b/global's server one page
   * function answers two callers: a native executeTool (through the server's mirror: the registry behind it
   * serialises the value) and an MCP client's tools/call (the CallToolResult envelope, mcp_result.js). The
   * mirror counts its calls in; the page function's run after one is the native caller's, any other the MCP
   * client's. The page's own call of its tool object gets the value as is (sized as the registry behind would).
   */
  profileFor(host, name) {
    if (!mcpServerOf(host)) return profileOf(host)
    const behind = safely(() => host.native, null)
    const native = behind ? profileOf(behind) : "chromium"
    const key = toolName(name)
    const calls = this.nativeCalls
    const g = this.g
    return (self) => {
      // The server runs the page function as Reflect.apply(execute, undefined, [args]); the page calling its
      // own tool object (tool.execute(x)) has the tool as `this` and receives the value itself.
      if (self !== undefined && self !== g) return native
      const n = calls.get(key) || 0
      if (!n) return "mcp"
      if (n === 1) calls.delete(key)
      else calls.set(key, n - 1)
      return native
    }
  }

  /**
   * Is a getTools() entry this document's own? Chromium lists same-origin frames' tools too, each with the
   * `window` it lives in; an iframe's tools belong to the iframe's session, not to this one.
   */
  ownFrame(t) {
    const w = safely(() => t.window, undefined)
    return w === undefined || w === null || w === this.g
  }

  /** Put back every original: registry methods, listeners, tools' execute. Idempotent. */
  restore() {
    if (this.unwatch) safely(this.unwatch)
    this.unwatch = null
    if (this.timer !== null) {
      this.ci(this.timer)
      this.timer = null
    }
    for (const entry of this.hosts.values()) for (const f of entry.restore.reverse()) safely(f)
    for (const [tool, w] of this.wrapped) {
      safely(() => {
        if (tool.execute === w.wrapper) tool.execute = w.original
      })
    }
    this.wrapped.clear()
    this.hosts.clear()
    this.live.clear()
  }
}

/**
 * Is obj[key] a data property or the engine's own getter (reading it runs no page code)? Looked up along the
 * prototype chain, as a read would find it.
 */
function plainOrNative(obj, key) {
  let o = obj
  for (let i = 0; o && i < 16; i++) {
    const d = Object.getOwnPropertyDescriptor(o, key)
    if (d) return !d.get || isNativeFunction(d.get)
    o = Object.getPrototypeOf(o)
  }
  return true
}

/** Is `host` @mcp-b/global's BrowserMcpServer (it marks its instances)? */
export function mcpServerOf(host) {
  return read(host, "__isBrowserMcpServer", false) === true
}
