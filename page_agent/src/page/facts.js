// @ts-check
// Facts about each call, for the diagnosis (docs/diagnosis-facts.md): result bloat, the input against the
// tool's inputSchema, a repeat of an earlier call, a refusal by the browser, and (sampled) the largest image
// re-encoded. Computed off the call path: the collector hands each accounted call here (`take`, a push), and
// the work runs in an idle callback later; at most one `facts` frame per span leaves, after the span. Only
// numbers, a keyword, a pointer into the schema and an earlier seq leave: never an input, a result or an image.

import { bloatOf, addBloat, emptyBloat } from "./bloat.js"
import { checkInput } from "./schema_check.js"
import { largestImage, measureImage } from "./images.js"
import { safely } from "../shared/util.js"
import { measuredText } from "./measure.js"

export const IMAGE_EVERY_MS = 30_000 // at most one image re-encoded per tool in this interval
// Bloat is one pass over the text: a 128 KB result took 170 us a call (0.5 ms pretty-printed), at 100 calls/s
// more than the page's own work. Results up to BLOAT_ALWAYS_CHARS are measured on up to BLOAT_SHORT_PER_WINDOW
// calls per tool in BLOAT_EVERY_MS (every call of a tool an agent calls; a page calling back to back pays a
// few µs a call for nothing new); a longer one at most once per tool in BLOAT_EVERY_MS. The diagnosis averages
// the calls that carry bloat (a tool's results are alike), so sampling changes its numbers by no more than the
// results differ.
export const BLOAT_ALWAYS_CHARS = 16_384
export const BLOAT_EVERY_MS = 1000
export const BLOAT_SHORT_PER_WINDOW = 16
export const MAX_QUEUED = 64 // calls awaiting facts; beyond this a call gets none (counted in `dropped`)
export const MAX_REPEAT_KEYS = 4096 // remembered (tool, input) hashes per session, oldest forgotten first
const MAX_CANONICAL = 262144 // inputs whose canonical text is longer are not checked for repeats
const IDLE_TIMEOUT_MS = 1000
const IDLE_FALLBACK_MS = 50

/**
 * @typedef {object} Job
 * @property {number} seq
 * @property {string} tool
 * @property {unknown} input
 * @property {unknown} value  the result (undefined for a thrown call)
 * @property {boolean} ok
 * @property {string|undefined} profile
 * @property {boolean} refused  a form call the browser refused before the page ran
 * @property {string} [text]  the JSON text the accounting measured of an object result (measure.js measuredText)
 */

/**
 * The canonical text of an input: JSON with every object's keys sorted, so {a,b} and {b,a} are one input.
 * Null for what is not JSON (a cycle, a bigint) or too long.
 * @param {unknown} v @returns {string|null}
 */
export function canonical(v) {
  const seen = new Set()
  let size = 0
  /** @param {unknown} x @returns {string} */
  const go = (x) => {
    if (++size > MAX_CANONICAL) throw new Error("long")
    if (x === null || typeof x !== "object") {
      const t = JSON.stringify(x)
      if (t === undefined) return "null"
      size += t.length
      return t
    }
    if (seen.has(x)) throw new Error("cycle")
    seen.add(x)
    let out
    if (Array.isArray(x)) out = "[" + x.map(go).join(",") + "]"
    else {
      const keys = Object.keys(x).sort()
      const parts = []
      for (const k of keys) {
        const val = /** @type {any} */ (x)[k]
        if (val === undefined || typeof val === "function" || typeof val === "symbol") continue
        parts.push(JSON.stringify(k) + ":" + go(val))
      }
      out = "{" + parts.join(",") + "}"
    }
    seen.delete(x)
    return out
  }
  try {
    const text = go(v === undefined ? {} : v)
    return text.length > MAX_CANONICAL ? null : text
  } catch {
    return null
  }
}

/**
 * A keyed hash (two seeded 32-bit murmur-style lanes and the length): the key is made per session and never
 * leaves the page, nor does the hash; only the seq of the earlier call does.
 * @param {string} s @param {Uint32Array} key @returns {string}
 */
export function keyedHash(s, key) {
  let h1 = key[0] >>> 0
  let h2 = key[1] >>> 0
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    h1 = Math.imul(h1 ^ c, 0x85ebca6b)
    h1 = (h1 << 13) | (h1 >>> 19)
    h2 = Math.imul(h2 ^ c, 0xc2b2ae35)
    h2 = (h2 << 17) | (h2 >>> 15)
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 0x85ebca6b) ^ key[2]
  h2 = Math.imul(h2 ^ (h2 >>> 13), 0xc2b2ae35) ^ key[3]
  return `${h1 >>> 0}.${h2 >>> 0}.${s.length}`
}

/** @param {any} g @returns {Uint32Array} */
function newKey(g) {
  const key = new Uint32Array(4)
  const c = g.crypto
  if (c && typeof c.getRandomValues === "function") safely(() => c.getRandomValues(key))
  else for (let i = 0; i < 4; i++) key[i] = Math.floor(Math.random() * 0x100000000)
  return key
}

/**
 * The texts a result's bloat is measured on: an MCP envelope's text items (the model reads each as a
 * document), a string result as itself, any other object or array as its JSON text.
 * @param {unknown} value @param {string|undefined} profile
 * @param {string} [measured]  the JSON text the accounting already made of an object `value`: not made again
 * @returns {string[]|null}
 */
export function textsOf(value, profile, measured) {
  let v = value
  if (typeof v === "string") {
    if (v.charCodeAt(0) === 123 && v.includes('"content"')) {
      const inner = safely(() => JSON.parse(/** @type {string} */ (v)), null)
      if (isEnvelope(inner)) return envelopeTexts(inner)
    }
    return v === "" && profile !== "form" ? null : [v]
  }
  if (v === null || typeof v !== "object") return null
  if (isEnvelope(v)) return envelopeTexts(v)
  const text = typeof measured === "string" ? measured : safely(() => JSON.stringify(v), undefined)
  return typeof text === "string" ? [text] : null
}

/** @param {any} v */
const isEnvelope = (v) => v !== null && typeof v === "object" && !Array.isArray(v) && Array.isArray(v.content)

/** @param {any} env @returns {string[]|null} */
function envelopeTexts(env) {
  const out = []
  for (const item of env.content) if (item && typeof item === "object" && item.type === "text" && typeof item.text === "string") out.push(item.text)
  return out.length ? out : null
}

export class FactsTaker {
  /**
   * @param {object} o
   * @param {(seq: number, facts: object) => void} o.send  one call's facts (only called with at least one member)
   * @param {(tool: string) => unknown} o.schemaOf  the tool's inputSchema, or undefined
   * @param {any} [o.global]
   * @param {() => number} [o.clock]
   * @param {boolean} [o.images]  re-encode images (default true)
   * @param {Function} [o.setTimeout]  where the page has no requestIdleCallback
   */
  constructor({ send, schemaOf, global: g = globalThis, clock, images = true, setTimeout: st }) {
    this.send = send
    this.schemaOf = schemaOf
    this.g = g
    this.clock = clock || (() => (g.performance ? g.performance.now() : Date.now()))
    this.images = images
    this.st = st || ((/** @type {Function} */ fn, /** @type {number} */ ms) => g.setTimeout(fn, ms))
    /** @type {Job[]} */
    this.queue = []
    this.scheduled = false
    this.key = newKey(g)
    /** @type {Map<string, number>} keyed hash -> the first seq with it */
    this.seen = new Map()
    /** @type {Map<string, number>} tool -> when its last image was re-encoded */
    this.imageAt = new Map()
    /** @type {Map<string, number>} tool -> when a long result of it was last measured for bloat */
    this.bloatAt = new Map()
    /** @type {Map<string, {from: number, n: number}>} tool -> its short results measured in the current window */
    this.shortBloat = new Map()
    this.cost = { calls: 0, ms: 0, dropped: 0, images: 0, imageMs: 0, bloatSkipped: 0 }
    this.stopped = false
  }

  /** The collector accounted a call: queue it (its bodies are held here until the idle callback). @param {Job} job */
  take(job) {
    if (this.stopped) return
    if (this.queue.length >= MAX_QUEUED) {
      this.cost.dropped++
      return
    }
    if (job.ok && job.value !== null && typeof job.value === "object") {
      const text = measuredText(job.value)
      if (text !== undefined) job.text = text
    }
    this.queue.push(job)
    if (!this.scheduled) {
      this.scheduled = true
      this.later(() => this.run())
    }
  }

  /** @param {() => void} fn  an idle callback where the page has them, else a task a little later */
  later(fn) {
    const g = this.g
    if (typeof g.requestIdleCallback === "function") safely(() => g.requestIdleCallback(() => safely(fn), { timeout: IDLE_TIMEOUT_MS }))
    else safely(() => this.st(() => safely(fn), IDLE_FALLBACK_MS))
  }

  run() {
    this.scheduled = false
    const jobs = this.queue
    this.queue = []
    const t0 = this.clock()
    for (const job of jobs) {
      safely(() => this.one(job))
      // drop the bodies as soon as they are measured
      job.input = undefined
      job.value = undefined
      job.text = undefined
    }
    this.cost.calls += jobs.length
    this.cost.ms += this.clock() - t0
  }

  /** @param {Job} job */
  one(job) {
    /** @type {Record<string, any>} */
    const facts = {}
    if (job.refused) facts.refused = { by: "browser" }
    if (job.ok) {
      const texts = textsOf(job.value, job.profile, job.text)
      if (texts && this.bloatDue(job.tool, texts)) {
        const total = emptyBloat()
        for (const t of texts) addBloat(total, bloatOf(t))
        facts.bloat = total
      }
    }
    if (!job.refused && job.profile !== "form" && job.profile !== "mcp-b-form") {
      const schema = safely(() => this.schemaOf(job.tool), undefined)
      if (schema !== undefined) {
        const s = checkInput(schema, job.input)
        if (s) facts.schema = s
      }
      const text = canonical(job.input)
      if (text !== null) {
        const k = keyedHash(JSON.stringify(job.tool) + text, this.key)
        const first = this.seen.get(k)
        if (first !== undefined) facts.repeat = { of: first }
        else {
          this.seen.set(k, job.seq)
          if (this.seen.size > MAX_REPEAT_KEYS) this.seen.delete(this.seen.keys().next().value)
        }
      }
    }
    const data = job.ok && this.images ? largestImage(job.value) : null
    const last = this.imageAt.get(job.tool)
    if (data !== null && (last === undefined || this.clock() - last >= IMAGE_EVERY_MS)) {
      this.imageAt.set(job.tool, this.clock())
      if (this.imageAt.size > 1024) this.imageAt.delete(this.imageAt.keys().next().value)
      const cost = { ms: 0, images: 0 }
      measureImage(data, { g: this.g, cost }).then(
        (image) => {
          this.cost.images += cost.images
          this.cost.imageMs += cost.ms
          if (image) facts.image = image
          this.emit(job.seq, facts)
        },
        () => this.emit(job.seq, facts),
      )
      return
    }
    this.emit(job.seq, facts)
  }

  /**
   * Whether this call's texts are measured for bloat: short ones on BLOAT_SHORT_PER_WINDOW calls a tool a
   * BLOAT_EVERY_MS, long ones once a tool a BLOAT_EVERY_MS. @param {string} tool @param {string[]} texts
   */
  bloatDue(tool, texts) {
    let chars = 0
    for (const t of texts) chars += t.length
    const now = this.clock()
    if (chars <= BLOAT_ALWAYS_CHARS) {
      let w = this.shortBloat.get(tool)
      if (w === undefined || now - w.from >= BLOAT_EVERY_MS) {
        if (w === undefined && this.shortBloat.size >= 1024) this.shortBloat.delete(this.shortBloat.keys().next().value)
        w = { from: now, n: 0 }
        this.shortBloat.set(tool, w)
      }
      if (w.n < BLOAT_SHORT_PER_WINDOW) {
        w.n++
        return true
      }
      this.cost.bloatSkipped++
      return false
    }
    const last = this.bloatAt.get(tool)
    if (last !== undefined && now - last < BLOAT_EVERY_MS) {
      this.cost.bloatSkipped++
      return false
    }
    this.bloatAt.delete(tool) // re-inserted last: the map forgets the tool measured longest ago
    this.bloatAt.set(tool, now)
    if (this.bloatAt.size > 1024) this.bloatAt.delete(this.bloatAt.keys().next().value)
    return true
  }

  /** @param {number} seq @param {Record<string, any>} facts */
  emit(seq, facts) {
    if (this.stopped) return
    for (const _ in facts) return safely(() => this.send(seq, facts))
  }

  /** The page reset its numbers (the relay drops its facts too): repeats count from here. */
  reset() {
    this.seen.clear()
    this.imageAt.clear()
    this.bloatAt.clear()
    this.shortBloat.clear()
  }

  /** Detached: nothing more is taken or sent. */
  stop() {
    this.stopped = true
    this.queue = []
  }
}
