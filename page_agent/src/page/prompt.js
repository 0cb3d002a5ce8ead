// The Prompt API lane (issue 8): wrap LanguageModel.create (and the older ai.languageModel.create,
// ai.createTextSession), then each session's prompt, promptStreaming, clone and destroy. Every step becomes
// one `prompt` frame with timings and CHARACTER COUNTS; the text itself is never kept or sent, except under the
// page's opt-in `capturePayloads` (then a `payload` frame carries the prompt and the answer, cut at
// maxPayloadLength, for the terminal's detail pane under --show-payloads).
// promptStreaming hands the page a pull-through stream: each original chunk is passed on as it is read,
// nothing is read ahead or buffered, and the chunk values are the original ones.

import { safely, cap } from "../shared/util.js"
import { errorText } from "./measure.js"
import { cutPayload } from "./hooks.js"

const MAX_SESSIONS = 64
const MAX_STEPS = 200
const SURROGATE_PAIR = /[\uD800-\uDBFF][\uDC00-\uDFFF]/g

/** Characters (code points) of a string: a surrogate pair counts once. */
export function countChars(s) {
  if (typeof s !== "string") return 0
  const pairs = s.match(SURROGATE_PAIR)
  return s.length - (pairs ? pairs.length : 0)
}

/**
 * Characters of a prompt's input: a string; or messages [{role, content}] whose content is a string or parts
 * ({type: "text", value} / {text}); non-text parts (images, audio) count 0.
 */
export function countInput(input, depth = 0) {
  if (typeof input === "string") return countChars(input)
  if (!input || typeof input !== "object" || depth > 3) return 0
  if (Array.isArray(input)) {
    let n = 0
    for (const x of input) n += countInput(x, depth + 1)
    return n
  }
  if ("content" in input) return countInput(input.content, depth + 1)
  if (input.type !== undefined && input.type !== "text") return 0
  if (typeof input.value === "string") return countChars(input.value)
  if (typeof input.text === "string") return countChars(input.text)
  return 0
}

/** A prompt's input as text: a string as itself, messages as their JSON; null when it has none. */
function inputText(input) {
  if (typeof input === "string") return input
  const t = JSON.stringify(input)
  return typeof t === "string" ? t : null
}

/** The factories to wrap: [owner, method name, label]. */
function factories(g) {
  const out = []
  const lm = safely(() => g.LanguageModel, null)
  if (lm && typeof safely(() => lm.create, null) === "function") out.push([lm, "create", "LanguageModel"])
  const ai = safely(() => g.ai, null)
  if (ai && typeof ai === "object") {
    const alm = safely(() => ai.languageModel, null)
    if (alm && alm !== lm && typeof safely(() => alm.create, null) === "function") out.push([alm, "create", "ai.languageModel"])
    for (const m of ["createTextSession", "createGenericSession"]) if (typeof safely(() => ai[m], null) === "function") out.push([ai, m, `ai.${m}`])
  }
  return out
}

export class PromptWatcher {
  /**
   * @param {object} o
   * @param {object} o.global
   * @param {() => number} o.clock  page clock (performance.now)
   * @param {(frame: object) => void} o.send  one prompt step, without type/session
   * @param {string} o.sessionId
   * @param {string} [o.errorPolicy]
   * @param {((p: {promptSession: string, seq: number, arguments: string|null, result: string|null}) => void)|null} [o.payload]
   *   opt-in text capture (capturePayloads); null: no text ever leaves
   * @param {number} [o.maxPayload]  characters kept of each text
   */
  constructor({ global: g, clock, send, sessionId, errorPolicy = "message", payload = null, maxPayload = 2048 }) {
    this.g = g
    this.clock = clock
    this.send = send
    this.payload = payload
    this.maxPayload = maxPayload
    this.sessionId = sessionId
    this.errorPolicy = errorPolicy
    this.active = true
    this.patched = [] // [owner, method, wrapper, own descriptor]
    this.adopted = new WeakMap() // page session object -> state
    this.n = 0
    /** id -> {id, api, createdAt, destroyedAt, steps[]}: sizes and timings only */
    this.sessions = new Map()
  }

  /** Look for the Prompt API; wrap the factories not wrapped yet. Cheap; called on every registry sweep. */
  sweep() {
    if (!this.active) return
    for (const [owner, method, label] of factories(this.g)) {
      const current = owner[method]
      if (this.patched.some((p) => p[0] === owner && p[1] === method && p[2] === current)) continue
      this.patchFactory(owner, method, label)
    }
  }

  patchFactory(owner, method, label) {
    const original = owner[method]
    const own = Object.getOwnPropertyDescriptor(owner, method)
    const self = this
    const wrapper = function () {
      if (!self.active) return original.apply(this, arguments)
      const t0 = self.clock()
      let ret
      try {
        ret = original.apply(this, arguments)
      } catch (e) {
        safely(() => self.createFailed(label, t0, e))
        throw e
      }
      return self.follow(ret, t0, label)
    }
    try {
      Object.defineProperty(wrapper, "name", { value: original.name || method, configurable: true })
      Object.defineProperty(owner, method, { value: wrapper, writable: true, configurable: true, enumerable: own ? own.enumerable : false })
    } catch {
      return
    }
    if (owner[method] === wrapper) this.patched.push([owner, method, wrapper, own])
  }

  /** A create/clone promise: adopt the session it resolves to. Returns a promise of the same session. */
  follow(ret, t0, label) {
    if (!ret || typeof ret.then !== "function") {
      safely(() => this.adopt(ret, t0, label))
      return ret
    }
    return ret.then(
      (session) => {
        safely(() => this.adopt(session, t0, label))
        return session
      },
      (e) => {
        safely(() => this.createFailed(label, t0, e))
        throw e
      },
    )
  }

  newId() {
    return `${this.sessionId}-${++this.n}`
  }

  record(id, step) {
    const s = this.sessions.get(id)
    if (s) {
      if (step.kind === "destroy") s.destroyedAt = step.at
      else if (step.kind !== "create") {
        s.steps.push(step)
        if (s.steps.length > MAX_STEPS) s.steps.shift()
      }
    }
    this.send({ promptSession: id, ...step })
  }

  createFailed(label, t0, e) {
    const id = this.newId()
    this.remember(id, label, t0)
    this.record(id, { kind: "create", at: t0, seq: 0, totalMs: Math.max(0, this.clock() - t0), error: this.err(e) })
  }

  remember(id, label, at) {
    this.sessions.set(id, { id, api: label, createdAt: at, destroyedAt: null, steps: [] })
    if (this.sessions.size > MAX_SESSIONS) this.sessions.delete(this.sessions.keys().next().value)
  }

  err(e) {
    return cap(errorText(e, this.errorPolicy === "none" ? "name" : this.errorPolicy) || "Error", 200)
  }

  /** A session the page now holds: give it an id, wrap its methods on the instance. */
  adopt(session, t0, label) {
    if (!session || (typeof session !== "object" && typeof session !== "function") || this.adopted.has(session)) return
    const id = this.newId()
    const state = { id, seq: 0 }
    this.adopted.set(session, state)
    this.remember(id, label, t0)
    this.record(id, { kind: "create", at: t0, seq: 0, totalMs: Math.max(0, this.clock() - t0) })
    const self = this
    const wrap = (method, make) => {
      const original = safely(() => session[method], null)
      if (typeof original !== "function") return
      const wrapped = make(original)
      safely(() => Object.defineProperty(session, method, { value: wrapped, writable: true, configurable: true, enumerable: false }))
    }
    wrap("prompt", (original) =>
      function (input) {
        if (!self.active) return original.apply(this, arguments)
        const seq = state.seq++
        const t0 = self.clock()
        const charsIn = safely(() => countInput(input), 0)
        const promptText = self.payload ? safely(() => inputText(input), null) : null
        const done = (charsOut, error, answer = null) => {
          safely(() => self.record(id, { kind: "prompt", at: t0, seq, totalMs: Math.max(0, self.clock() - t0), charsIn, charsOut, error }))
          if (self.payload) self.sendText(id, seq, promptText, typeof answer === "string" ? answer : null)
        }
        let ret
        try {
          ret = original.apply(this, arguments)
        } catch (e) {
          done(0, self.err(e))
          throw e
        }
        if (ret && typeof ret.then === "function") {
          safely(() =>
            ret.then(
              (v) => done(countChars(v), null, v),
              (e) => done(0, self.err(e)),
            ),
          )
        } else done(countChars(ret), null, ret)
        return ret
      },
    )
    wrap("promptStreaming", (original) =>
      function (input) {
        if (!self.active) return original.apply(this, arguments)
        const seq = state.seq++
        const t0 = self.clock()
        const charsIn = safely(() => countInput(input), 0)
        let src
        try {
          src = original.apply(this, arguments)
        } catch (e) {
          safely(() => self.record(id, { kind: "stream", at: t0, seq, totalMs: Math.max(0, self.clock() - t0), firstChunkMs: null, chunks: 0, charsIn, charsOut: 0, error: self.err(e) }))
          throw e
        }
        const promptText = self.payload ? safely(() => inputText(input), null) : null
        return self.passThrough(src, id, seq, t0, charsIn, promptText)
      },
    )
    wrap("destroy", (original) =>
      function () {
        if (!self.active) return original.apply(this, arguments)
        const ret = original.apply(this, arguments)
        safely(() => self.record(id, { kind: "destroy", at: self.clock(), seq: 0 }))
        return ret
      },
    )
    wrap("clone", (original) =>
      function () {
        if (!self.active) return original.apply(this, arguments)
        const t0 = self.clock()
        const ret = original.apply(this, arguments)
        return self.follow(ret, t0, `${label}.clone`)
      },
    )
  }

  /**
   * The stream the page reads: pulls one chunk from the original per read, counts it, hands the same value
   * on. No read-ahead (highWaterMark 0), no text kept. Ends (done, error or cancel) send the step.
   */
  passThrough(src, id, seq, t0, charsIn, promptText = null) {
    const RS = safely(() => this.g.ReadableStream, null) || (typeof ReadableStream === "function" ? ReadableStream : null)
    if (!src || typeof src.getReader !== "function" || typeof RS !== "function") {
      safely(() => this.record(id, { kind: "stream", at: t0, seq, totalMs: Math.max(0, this.clock() - t0), firstChunkMs: null, chunks: null, charsIn, charsOut: null, error: null }))
      return src
    }
    let reader
    try {
      reader = src.getReader()
    } catch {
      return src
    }
    const self = this
    let chunks = 0
    let chars = 0
    let first = null
    let ended = false
    // Opt-in capture only: the answer's text so far, kept to a little over the cut (the cut names the length).
    let text = self.payload ? "" : null
    let textLength = 0
    const end = (error) => {
      if (ended) return
      ended = true
      safely(() => self.record(id, { kind: "stream", at: t0, seq, totalMs: Math.max(0, self.clock() - t0), firstChunkMs: first, chunks, charsIn, charsOut: chars, error }))
      if (text !== null) self.sendText(id, seq, promptText, cutPayload(text, self.maxPayload, textLength), true)
      text = null
    }
    return new RS(
      {
        async pull(ctl) {
          let r
          try {
            r = await reader.read()
          } catch (e) {
            end(self.err(e))
            ctl.error(e)
            return
          }
          if (r.done) {
            end(null)
            ctl.close()
            return
          }
          chunks++
          if (first === null) first = Math.max(0, self.clock() - t0)
          chars += countChars(r.value)
          if (text !== null && typeof r.value === "string") {
            textLength += r.value.length
            if (text.length <= self.maxPayload) text = (text + r.value).slice(0, self.maxPayload + 1)
          }
          ctl.enqueue(r.value)
        },
        cancel(reason) {
          end("cancelled")
          return reader.cancel(reason)
        },
      },
      { highWaterMark: 0 },
    )
  }

  /** Opt-in capture: the prompt and the answer of one step, cut at maxPayload, to the payload sink. */
  sendText(id, seq, promptText, answer, answerIsCut = false) {
    safely(() =>
      this.payload({
        promptSession: id,
        seq,
        arguments: promptText === null ? null : cutPayload(promptText, this.maxPayload),
        result: answer === null || answerIsCut ? answer : cutPayload(answer, this.maxPayload),
      }),
    )
  }

  /** Sizes and timings per prompt session (for the console): never text. */
  view() {
    return Array.from(this.sessions.values(), (s) => ({ ...s, steps: s.steps.map((x) => ({ ...x })) }))
  }

  restore() {
    this.active = false
    for (const [owner, method, wrapper, own] of this.patched.reverse()) {
      safely(() => {
        if (owner[method] !== wrapper) return
        if (own) Object.defineProperty(owner, method, own)
        else delete owner[method]
      })
    }
    this.patched = []
  }
}
