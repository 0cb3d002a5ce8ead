// @ts-check
// Result bloat: how much of a text/JSON result is insignificant whitespace, keys repeated across the rows of
// an array of objects, and base64 inside strings. Counts and byte totals only: the text never leaves.
//
// One pass over the text, no parse (a capped prefix is not valid JSON, and a parse would build the whole
// value again). Definitions (docs/diagnosis-facts.md; vectors in tests/vectors/facts/bloat.json):
//   textBytes         UTF-8 bytes of the text examined (the first BLOAT_MAX_CHARS UTF-16 units)
//   whitespaceBytes   space, tab, LF, CR outside strings: what JSON.stringify without indentation drops
//   repeatedKeyBytes  for each array whose first element is an object: in every later object element whose key
//                     set equals the first's, the UTF-8 bytes of each quoted key as written plus its colon
//   repeatedKeyRows   how many such later rows
//   base64Bytes       total length of runs of [A-Za-z0-9+/] (then up to two "=") of >= BASE64_MIN_RUN
//                     characters inside string values (not keys), as written in the text
//   base64Runs        how many such runs
// Text that is not JSON (prose, a truncated or broken document) is counted as one string value: no
// whitespace or key figures, only its base64 runs.

import { utf8Length } from "../shared/util.js"

export const BLOAT_MAX_CHARS = 262144
export const BASE64_MIN_RUN = 256

/**
 * @typedef {{textBytes:number, whitespaceBytes:number, repeatedKeyBytes:number, repeatedKeyRows:number,
 *   base64Bytes:number, base64Runs:number, truncated?:boolean}} Bloat
 */

/** @returns {Bloat} */
function empty() {
  return { textBytes: 0, whitespaceBytes: 0, repeatedKeyBytes: 0, repeatedKeyRows: 0, base64Bytes: 0, base64Runs: 0 }
}

const B64 = new Uint8Array(128)
for (const c of "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/") B64[c.charCodeAt(0)] = 1

/**
 * Base64 runs in text[from, to): [bytes, runs].
 * @param {string} s @param {number} from @param {number} to @returns {[number, number]}
 */
function base64In(s, from, to) {
  let bytes = 0
  let runs = 0
  let i = from
  while (i < to) {
    const c = s.charCodeAt(i)
    if (c >= 128 || !B64[c]) {
      i++
      continue
    }
    const start = i
    while (i < to) {
      const d = s.charCodeAt(i)
      if (d >= 128 || !B64[d]) break
      i++
    }
    let pad = 0
    while (pad < 2 && i < to && s.charCodeAt(i) === 61 /* = */) {
      i++
      pad++
    }
    const len = i - start
    if (len >= BASE64_MIN_RUN) {
      bytes += len
      runs++
    }
  }
  return [bytes, runs]
}

/**
 * The bloat figures of one text (a result string, an envelope's text item, or an object's JSON text).
 * @param {string} text
 * @returns {Bloat}
 */
export function bloatOf(text) {
  const out = empty()
  const truncated = text.length > BLOAT_MAX_CHARS
  const s = truncated ? text.slice(0, BLOAT_MAX_CHARS) : text
  out.textBytes = utf8Length(s)
  if (truncated) out.truncated = true
  if (!scanJson(s, out, truncated)) {
    const [b, r] = base64In(s, 0, s.length)
    out.whitespaceBytes = 0
    out.repeatedKeyBytes = 0
    out.repeatedKeyRows = 0
    out.base64Bytes = b
    out.base64Runs = r
  }
  return out
}

/**
 * @typedef {{array:boolean, expectKey:boolean, keys:string[]|null, keyBytes:number, index:number,
 *   first:Set<string>|null, firstIsObject:boolean}} Frame
 */

/**
 * Scan JSON text, filling `out`. False when the text is not JSON (then `out`'s figures are discarded).
 * @param {string} s @param {Bloat} out @param {boolean} truncated @returns {boolean}
 */
function scanJson(s, out, truncated) {
  let i = 0
  const n = s.length
  while (i < n && isWs(s.charCodeAt(i))) i++
  if (i >= n) return false
  const c0 = s.charCodeAt(i)
  if (c0 !== 123 && c0 !== 91) return false // a bare string, number or prose: not a document with structure
  /** @type {Frame[]} */
  const stack = []
  let ws = i
  let b64Bytes = 0
  let b64Runs = 0
  let keyBytes = 0
  let keyRows = 0
  let done = false
  while (i < n) {
    const c = s.charCodeAt(i)
    if (done) {
      if (!isWs(c)) return false
      ws++
      i++
      continue
    }
    if (isWs(c)) {
      ws++
      i++
      continue
    }
    const top = stack.length ? stack[stack.length - 1] : null
    if (c === 34 /* " */) {
      const start = i
      i = stringEnd(s, i + 1)
      const closed = i < n
      if (!closed && !truncated) return false
      const end = Math.min(i, n) // the closing quote, or the cut
      if (closed) i++
      if (top && !top.array && top.expectKey) {
        // a key: its quoted text as written, and its colon
        const raw = s.slice(start, i)
        if (top.keys) top.keys.push(raw)
        top.keyBytes += utf8Length(raw) + 1
        top.expectKey = false
        while (i < n && isWs(s.charCodeAt(i))) {
          ws++
          i++
        }
        if (i < n && s.charCodeAt(i) !== 58 /* : */) return false
        i++
      } else if (end - start - 1 >= BASE64_MIN_RUN) {
        // a shorter string cannot hold a run
        const [b, r] = base64In(s, start + 1, end)
        b64Bytes += b
        b64Runs += r
      }
      continue
    }
    if (c === 123 /* { */ || c === 91 /* [ */) {
      const parent = top
      if (parent && parent.array && parent.index === 0) parent.firstIsObject = c === 123
      stack.push({ array: c === 91, expectKey: c === 123, keys: c === 123 ? [] : null, keyBytes: 0, index: 0, first: null, firstIsObject: false })
      i++
      continue
    }
    if (c === 125 /* } */ || c === 93 /* ] */) {
      if (!top || top.array !== (c === 93)) return false
      stack.pop()
      const parent = stack.length ? stack[stack.length - 1] : null
      if (!top.array && parent && parent.array && parent.firstIsObject && top.keys) {
        if (parent.index === 0) parent.first = new Set(top.keys)
        else if (parent.first && sameKeys(parent.first, top.keys)) {
          keyBytes += top.keyBytes
          keyRows++
        }
      }
      if (!stack.length) done = true
      i++
      continue
    }
    if (c === 44 /* , */) {
      if (!top) return false
      if (top.array) top.index++
      else top.expectKey = true
      i++
      continue
    }
    // a number or a literal
    if (!top || (!top.array && top.expectKey)) return false
    const start = i
    while (i < n && isLiteral(s.charCodeAt(i))) i++
    if (i === start) return false
  }
  if (!done && !truncated) return false
  out.whitespaceBytes = ws
  out.repeatedKeyBytes = keyBytes
  out.repeatedKeyRows = keyRows
  out.base64Bytes = b64Bytes
  out.base64Runs = b64Runs
  return true
}

const indexOf = String.prototype.indexOf // captured: a page that patches it later does not change a count

/**
 * The index of the quote that closes the string whose content starts at `i` (s.length when none): a native
 * search for each quote, and a quote after an odd run of backslashes is escaped.
 * @param {string} s @param {number} i @returns {number}
 */
function stringEnd(s, i) {
  for (;;) {
    const q = indexOf.call(s, '"', i)
    if (q < 0) return s.length
    let k = q - 1
    while (k >= i && s.charCodeAt(k) === 92) k--
    if ((q - 1 - k) % 2 === 0) return q
    i = q + 1
  }
}

/** @param {Set<string>} first @param {string[]} keys */
function sameKeys(first, keys) {
  if (keys.length !== first.size) return false
  for (const k of keys) if (!first.has(k)) return false
  return true
}

/** @param {number} c */
const isWs = (c) => c === 32 || c === 10 || c === 13 || c === 9

/** @param {number} c  digits, letters (true/false/null, exponents), + - . */
const isLiteral = (c) => (c >= 48 && c <= 57) || (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 43 || c === 45 || c === 46

/**
 * Add one text's figures into a running total (an envelope with several text items).
 * @param {Bloat} into @param {Bloat} b
 */
export function addBloat(into, b) {
  into.textBytes += b.textBytes
  into.whitespaceBytes += b.whitespaceBytes
  into.repeatedKeyBytes += b.repeatedKeyBytes
  into.repeatedKeyRows += b.repeatedKeyRows
  into.base64Bytes += b.base64Bytes
  into.base64Runs += b.base64Runs
  if (b.truncated) into.truncated = true
}

export { empty as emptyBloat }
