// The registry ledger: what the page's registry did (000's "The ledger"): where the host was found and when,
// every tool registered and withdrawn with its schema bytes, the tools the agent could not wrap and the calls
// counted for them. State and its rules only: times are handed in, and what a change means for the wire (a tool
// frame, an event, a status) is the collector's to say.

export const MAX_LEDGER_TOOLS = 1024

/**
 * A registered tool as the ledger keeps it.
 * @typedef {{name: string, schemaBytes: number, descriptor?: string|null, internal?: boolean, fingerprint?: string|null, handlerHash?: string|null,
 *   registered: boolean, registeredAt: number|null, unregisteredAt: number|null, redefined?: boolean, framePending?: boolean, annotationsKept?: unknown, [k: string]: unknown}} ToolRecord
 */

export class Ledger {
  /** @param {number} attachedAt  epoch ms */
  constructor(attachedAt) {
    this.attachedAt = attachedAt
    /** @type {number|null} */
    this.hostFoundAt = null
    /** @type {string|null} */
    this.hostLocation = null
    /** @type {number|null} */
    this.firstRegistrationAt = null
    /** @type {Map<string, ToolRecord>} name -> tool record */
    this.tools = new Map()
    /** counts changes: the ledger frame's `rev` */
    this.rev = 0
    this.wrapFailures = 0
    /** tools the host lists that were registered before the agent could wrap them */
    this.unwrapped = new Set()
    /** @type {Map<string, number>} tool name -> calls counted from `toolactivated` (tools the agent could not wrap) */
    this.counted = new Map()
  }

  /** The registry was found at `t` on `location`; false when it was found before. */
  hostFound(location, t) {
    if (this.hostFoundAt !== null) return false
    this.hostFoundAt = t
    this.hostLocation = location
    return true
  }

  /**
   * A tool was registered at `t`. `rec`: {name, schemaBytes, descriptor (JSON text|null), annotationsSent,
   * annotationsKept, internal, fingerprint, handlerHash}. `redefined`: what moved when the same name came again
   * with another descriptor (or another handler source, when the fingerprint covers it), else null.
   * @param {any} rec
   * @param {number} t
   * @returns {{full: ToolRecord, redefined: {descriptor: boolean, handler: boolean}|null}}
   */
  registered(rec, t) {
    if (this.firstRegistrationAt === null && !rec.internal) this.firstRegistrationAt = t
    const prev = this.tools.get(rec.name)
    /** @type {ToolRecord} */
    const full = { ...rec, registered: true, registeredAt: t, unregisteredAt: null }
    if (prev && prev.registered && prev.registeredAt !== null) full.registeredAt = prev.registeredAt
    let redefined = null
    // Redefinition (001): the fingerprint covers the descriptor (and the handler under fingerprintHandler, whose
    // own hash the record keeps in the page to say which of the two moved).
    if (prev && !rec.internal) {
      const descriptor = (prev.descriptor ?? null) !== (rec.descriptor ?? null) || (!prev.handlerHash && (prev.fingerprint ?? null) !== (rec.fingerprint ?? null))
      const handler = (prev.handlerHash ?? null) !== (rec.handlerHash ?? null)
      if (descriptor || handler) {
        full.redefined = true
        redefined = { descriptor, handler }
      } else full.redefined = !!prev.redefined
    }
    this.tools.set(rec.name, full)
    return { full, redefined }
  }

  /** The host said which annotations it kept of a tool whose frame waits for it: the record, or null. */
  keptAnnotations(name, kept) {
    const rec = this.tools.get(name)
    if (!rec || !rec.framePending) return null
    rec.framePending = false
    rec.annotationsKept = kept
    return rec
  }

  /** A tool was withdrawn at `t`: its record, or null when it was not registered. */
  unregistered(name, t) {
    const rec = this.tools.get(name)
    if (!rec || !rec.registered) return null
    rec.registered = false
    rec.unregisteredAt = t
    return rec
  }

  /** A tool the host lists that was registered before the agent could wrap it; false when already known. */
  unwrappedTool(name) {
    if (this.unwrapped.has(name)) return false
    this.unwrapped.add(name)
    return true
  }

  /** A tool listed as unwrapped is measured after all; false when it was not listed. */
  wrappedTool(name) {
    return this.unwrapped.delete(name)
  }

  /** A call of a tool the agent cannot measure, counted; false past MAX_LEDGER_TOOLS names. */
  countedCall(name) {
    if (!this.counted.has(name) && this.counted.size >= MAX_LEDGER_TOOLS) return false
    this.counted.set(name, (this.counted.get(name) || 0) + 1)
    return true
  }

  /** Calls counted from `toolactivated`, every tool's. */
  countedCalls() {
    let n = 0
    for (const v of this.counted.values()) n += v
    return n
  }

  /** Registered tools, and whether any of them is the page's own (not the agent's report tool). */
  registeredCount() {
    let count = 0
    let own = false
    for (const r of this.tools.values()) {
      if (!r.registered) continue
      count++
      if (!r.internal) own = true
    }
    return { count, own }
  }

  /** What the ledger says of coverage (the status's reasons): wraps that failed, tools counted, not measured. */
  reasons() {
    const out = []
    if (this.wrapFailures) out.push(`${this.wrapFailures} tool execute() could not be wrapped`)
    if (this.unwrapped.size) {
      let n = 0
      for (const name of this.unwrapped) n += this.counted.get(name) || 0
      out.push(`${this.unwrapped.size} tool(s) registered before the agent loaded are counted, not measured (${n} call(s) counted from toolactivated)`)
    }
    return out
  }

  /**
   * The ledger frame's body: the registry's side from here, the calls' side handed in.
   * @param {{sessionId: string, firstCallAt: number|null, lastSettledAt: number|null, totals: object}} calls
   */
  frame({ sessionId, firstCallAt, lastSettledAt, totals }) {
    const tools = {}
    const registeredTools = []
    // The wire caps the map at 1024 tools: the registered ones first, then the withdrawn ones.
    const all = Array.from(this.tools)
    const ordered = all.filter(([, r]) => r.registered).concat(all.filter(([, r]) => !r.registered)).slice(0, MAX_LEDGER_TOOLS)
    for (const [name, r] of ordered) {
      tools[name] = { schemaBytes: r.schemaBytes, registeredAt: r.registeredAt, unregisteredAt: r.unregisteredAt, internal: !!r.internal }
      // Counted, not measured: calls seen through `toolactivated` only (no timing, no bytes).
      if (this.unwrapped.has(name)) tools[name].measured = false
      if (this.counted.has(name)) tools[name].counted = this.counted.get(name)
      if (r.registered) registeredTools.push(name)
    }
    return {
      sessionId,
      attachedAt: this.attachedAt,
      hostFoundAt: this.hostFoundAt,
      hostLocation: this.hostLocation,
      firstRegistrationAt: this.firstRegistrationAt,
      registeredTools,
      tools,
      firstCallAt,
      lastSettledAt,
      totals,
    }
  }
}
