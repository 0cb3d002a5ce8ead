// Small helpers shared by every module. No page state here.

// Any UTF-16 unit above ASCII, written as the range up from \x80 and not as [^\x00-\x7f]: Chromium's V8 answers
// this one about 35 times faster over a string of one-byte characters (128 KB of ASCII in Chromium 156: 5.5
// against 190 µs), and far faster than the encoder below (100 to 140 µs), so in a page ASCII text, most results,
// never reaches the encoder. Node is the other way round: its encoder (simdutf) sizes those 128 KB in 18 µs and
// its older V8 takes 100 to 150 µs over the regex, so there a long string goes to the encoder first. Node runs
// the agent only in its tests; both orders give the same count (test/bytes.test.mjs, tests/bench/test_text_sizing.py).
const ABOVE_ASCII = /[\x80-\uffff]/
const ENCODER_FIRST = typeof process === "object" && process !== null && typeof process.versions === "object" && process.versions !== null && typeof process.versions.node === "string"

// Long strings that are not all ASCII go through the engine's own encoder, into one scratch buffer: far cheaper
// than the loop below. The encoder counts a lone surrogate as U+FFFD, 3 bytes, as the loop does. The buffer
// grows to fit a string's worst case (3 bytes a UTF-16 unit), up to SCRATCH_MAX: in Chromium each encodeInto
// call converts the whole string it is given, so 64 KiB rounds over 128 K characters of CJK cost 1.46 ms
// against 0.80 ms in one call (tests/bench/test_text_sizing.py).
const ENCODE_FROM = 4096
const SCRATCH_MIN = 64 * 1024
const SCRATCH_MAX = 1024 * 1024 // kept for the page's lifetime: longer strings are counted a megabyte at a time
let encoder = null
let scratch = null

/**
 * UTF-8 byte length of a JavaScript string, without allocating (beyond one scratch buffer kept for long
 * strings). A lone surrogate counts 3 bytes, as TextEncoder (U+FFFD) and Python's "surrogatepass" both do.
 * @param {string} s
 */
export function utf8Length(s) {
  if (s.length >= ENCODE_FROM) {
    if (!ENCODER_FIRST && !ABOVE_ASCII.test(s)) return s.length
    const n = encodedLength(s)
    if (n !== null) return n
  }
  // ASCII text (most JSON) is one byte a unit.
  if (!ABOVE_ASCII.test(s)) return s.length
  let n = 0
  const len = s.length
  for (let i = 0; i < len; i++) {
    const c = s.charCodeAt(i)
    if (c < 0x80) n += 1
    else if (c < 0x800) n += 2
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < len) {
      const d = s.charCodeAt(i + 1)
      if (d >= 0xdc00 && d <= 0xdfff) {
        n += 4
        i++
      } else n += 3
    } else n += 3
  }
  return n
}

/** utf8Length through TextEncoder.encodeInto, or null where there is none. */
function encodedLength(s) {
  if (encoder === null) {
    const TE = globalThis.TextEncoder
    if (typeof TE !== "function") return null
    try {
      encoder = new TE()
    } catch {
      return null
    }
  }
  try {
    const need = Math.min(SCRATCH_MAX, s.length * 3)
    if (scratch === null || scratch.length < need) {
      let size = SCRATCH_MIN
      while (size < need) size *= 2
      scratch = new Uint8Array(size)
    }
    return encodeRounds(s)
  } catch {
    return null // a page that broke its own TextEncoder: the scan below still counts
  }
}

function encodeRounds(s) {
  let n = 0
  let rest = s
  // Each round fills at most the buffer and stops before a character that would not fit whole (a surrogate
  // pair is never split), so the next round starts on a character boundary.
  for (;;) {
    const { read, written } = encoder.encodeInto(rest, scratch)
    n += written
    if (read >= rest.length) return n
    if (read === 0) return null
    rest = rest.slice(read)
  }
}

/** A new 8-lowercase-hex session id. */
export function newSessionId() {
  const c = globalThis.crypto
  if (c && typeof c.getRandomValues === "function") {
    const a = new Uint8Array(4)
    c.getRandomValues(a)
    return Array.from(a, (b) => b.toString(16).padStart(2, "0")).join("")
  }
  return Math.floor(Math.random() * 0x100000000).toString(16).padStart(8, "0")
}

// The page's clock, captured on first use: reading the global `performance` on every call goes through Window's
// accessor, and reading it at load builds the Performance interface, about 5 KB of a page's heap, in a page that
// may make no call. Until a call reads it, the agent's own stamps at load (its start, a registration) are the wall
// clock's, and replay.js pageTime() converts them when they are read.
/** @type {Performance | null | undefined} */
let clock
/** The engine's wall clock as it was at load: a page that replaces Date.now later does not move the agent's stamps. */
export const wall = Date.now
export function now() {
  if (clock === undefined) clock = typeof performance !== "undefined" && performance !== null && typeof performance.now === "function" ? performance : null
  return clock !== null ? clock.now() : wall()
}

/** The page's clock once something has read it, the wall clock before: an event's time, not a call's. */
export function stamp() {
  return clock === undefined ? wall() : now()
}

/** Cap a page-provided text to `max` code points (as the relay and Python count), never splitting a pair. */
export function cap(s, max) {
  s = String(s)
  if (s.length <= max) return s
  let out = ""
  let n = 0
  for (const ch of s) {
    if (n >= max) break
    out += ch
    n++
  }
  return out
}

/**
 * Run `fn`, never letting an exception escape into the page. An arrow handed to it in parentheses, `safely((() => ...))`,
 * is one the eager part runs at load: V8 compiles it with the script (page_agent/build.mjs, AT_LOAD).
 */
export function safely(fn, fallback) {
  try {
    return fn()
  } catch {
    return fallback
  }
}

/**
 * `obj[key]`, or `fallback` where reading it throws (a page's getter, a missing object): what `safely(() => obj[key])`
 * says with no closure to make and compile, for the reads the agent makes at load.
 */
export function read(obj, key, fallback = null) {
  try {
    return obj[key]
  } catch {
    return fallback
  }
}

/** Object.defineProperty that never throws into the page; false where the page's object refused it. */
export function tryDefine(obj, key, descriptor) {
  try {
    Object.defineProperty(obj, key, descriptor)
    return true
  } catch {
    return false
  }
}

/**
 * An event listener attached only while it is wanted (`want(true)`), removed by `want(false)`. Chromium 156
 * dispatches `toolactivated` for every tool call, and any listener on it costs the page each call (the README's
 * "What watching costs the page"): the agent listens only while there is something for the listener to count.
 * @returns {{want: (yes: boolean) => void, listening: () => boolean}}
 */
export function listenWhile(target, type, fn, capture = false) {
  let on = false
  const want = (yes) => {
    yes = !!yes
    if (yes === on || !target || typeof target.addEventListener !== "function") return
    try {
      if (yes) target.addEventListener(type, fn, capture)
      else target.removeEventListener(type, fn, capture)
      on = yes
    } catch {
      /* a page that broke its own EventTarget: nothing to count */
    }
  }
  return { want, listening: () => on }
}

/** Is this a scalar the wire accepts in `detail` / annotations? */
export function isScalar(v) {
  return v === null || typeof v === "boolean" || (typeof v === "number" && Number.isFinite(v)) || typeof v === "string"
}
