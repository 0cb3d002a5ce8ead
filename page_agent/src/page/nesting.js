// Nesting: which measured call a call was made from (its caller, its parent span, its depth). Three ways to
// know: the synchronous execute() stack the wrapper pushes on (wrap.js); the async frame that carries a call's
// promise, named after its seq (wrap.js `carry`), found in V8's async stack trace after an `await`; and
// executeTool() calls page code makes from inside a measured call, expected by tool name.

export const MAX_DEPTH = 64
const MAX_EXPECTED = 64

/**
 * @typedef {{seq: number, depth: number}} Placed  what nesting reads of a call
 */

export class Nesting {
  /** @param {string} frameId  the id in async frame names: fixed for the page's life (a renamed session's calls are still found) */
  constructor(frameId) {
    this.frameId = frameId
    this.frameRe = new RegExp(`__wmcp_${frameId}_(\\d+)\\b`)
    /** @type {Placed[]} the synchronous execute() stack (wrap.js pushes and pops) */
    this.stack = []
    /** @type {{tool: string, parent: Placed}[]} executeTool() calls made from inside a measured call, oldest first */
    this.expected = []
  }

  /** The name of the async frame that carries a call's promise (wrap.js `carry`). */
  frameName(seq) {
    return `__wmcp_${this.frameId}_${seq}`
  }

  /**
   * The measured call the current code runs inside: the synchronous stack's top, else the innermost call whose
   * carrier frame is in V8's async stack trace (code after an `await` in a tool's async function). Null when
   * neither says (code reached through setTimeout, a plain .then chain, or no tool at all).
   * @param {Map<number, Placed>} inFlight  the calls running, by seq
   */
  callerOf(inFlight) {
    if (this.stack.length) return this.stack[this.stack.length - 1]
    if (!inFlight.size) return null
    const E = Error
    let text = null
    const limit = E.stackTraceLimit
    try {
      E.stackTraceLimit = 64
      text = new E().stack
    } catch {
      text = null
    } finally {
      try {
        E.stackTraceLimit = limit
      } catch {
        /* a frozen Error: the page's limit stays */
      }
    }
    const m = typeof text === "string" ? this.frameRe.exec(text) : null
    return m ? inFlight.get(Number(m[1])) || null : null
  }

  /**
   * Page code is calling `executeTool(tool)`: when that code runs inside a measured call, the call the browser
   * is about to make of `tool` is its child. Returns a release for when executeTool settles, or null.
   * @param {string} tool
   * @param {Map<number, Placed>} inFlight
   */
  nestedCall(tool, inFlight) {
    const parent = this.callerOf(inFlight)
    if (!parent) return null
    const e = { tool, parent }
    this.expected.push(e)
    if (this.expected.length > MAX_EXPECTED) this.expected.shift()
    return () => {
      const i = this.expected.indexOf(e)
      if (i >= 0) this.expected.splice(i, 1)
    }
  }

  /** The parent of a call of `tool` entering now: the stack's top, else the oldest executeTool expecting it. */
  parentOf(tool) {
    if (this.stack.length) return this.stack[this.stack.length - 1]
    const i = this.expected.findIndex((e) => e.tool === tool)
    return i < 0 ? null : this.expected.splice(i, 1)[0].parent
  }
}

/**
 * A child's depth (at most MAX_DEPTH) and parent seq.
 * @param {Placed|null} parent
 */
export function placeUnder(parent) {
  return parent ? { depth: Math.min(parent.depth + 1, MAX_DEPTH), parent: parent.seq } : { depth: 0, parent: null }
}
