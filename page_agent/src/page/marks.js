// What marks a call before it enters: the terminal asked for it (an `invoke` command, commands.js), or the page
// reported the consent dialogue the host showed for it (001's recordConsent). Each mark waits for the next call
// of its tool, is taken when that call enters (collector.js), and is bounded. Pure.

const MAX_CONSENTS = 256

/** Calls the terminal asked for: per tool, first asked first taken. */
export class TerminalMarks {
  constructor() {
    /** @type {Map<string, {used: boolean}[]>} tool name -> tokens of calls that have not entered yet */
    this.pending = new Map()
  }

  /** The terminal is about to call `tool`: returns a function that withdraws the mark if the call never entered. */
  expect(tool) {
    const token = { used: false }
    const queue = this.pending.get(tool) || []
    queue.push(token)
    this.pending.set(tool, queue)
    return () => {
      if (token.used) return
      token.used = true
      const q = this.pending.get(tool)
      const i = q ? q.indexOf(token) : -1
      if (i >= 0) q.splice(i, 1)
      if (q && !q.length) this.pending.delete(tool)
    }
  }

  /** A call of `tool` entered: is it the terminal's? */
  take(tool) {
    const q = this.pending.get(tool)
    if (!q || !q.length) return false
    q.shift().used = true
    if (!q.length) this.pending.delete(tool)
    return true
  }
}

/** The consent recorded for each tool's next call; the oldest dropped past MAX_CONSENTS tools. */
export class ConsentMarks {
  constructor() {
    /** @type {Map<string, {consent: string, mismatch: boolean}>} */
    this.next = new Map()
  }

  /** @param {string} tool @param {boolean} granted @param {boolean} mismatch */
  record(tool, granted, mismatch) {
    this.next.set(tool, { consent: granted ? "granted" : "denied", mismatch })
    if (this.next.size > MAX_CONSENTS) this.next.delete(this.next.keys().next().value)
  }

  /** A call of `tool` entered: the consent recorded for it, or null. */
  take(tool) {
    const consent = this.next.get(tool)
    if (!consent) return null
    this.next.delete(tool)
    return consent
  }
}
