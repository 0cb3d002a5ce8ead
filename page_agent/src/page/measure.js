// Sizes, token estimates and result facts of one call: what the agent receives, serialised the way
// Chromium's host does it (measured on Chromium 156, see page_agent/README.md):
//   string            -> itself; "" becomes "Operation succeeded" (substituted)
//   undefined         -> "undefined" (also a function: JSON.stringify gives nothing)
//   number/boolean/null/bigint -> String(value)   (NaN reads "NaN", not JSON's "null")
//   object/array      -> JSON.stringify(value); an MCP {content:[...]} envelope is NOT unwrapped
//   throws while serialising (cycle, nested bigint) -> the host reports UnknownError: an error
// Values are measured and dropped here: nothing in this module keeps a body.

import { utf8Length, cap, safely } from "../shared/util.js"
import { mcpResult, mcpErrorResult } from "./mcp_result.js"
import { callTokens } from "./stats.js"
import { NATIVE_THEN } from "./wrap.js"

export const EMPTY_SUBSTITUTE = "Operation succeeded"
export const UNDEFINED_TEXT = "undefined"
const SUBSTITUTE_BYTES = utf8Length(EMPTY_SUBSTITUTE)
const UNDEFINED_BYTES = utf8Length(UNDEFINED_TEXT)

/** UTF-8 bytes of the input's JSON text (what the model wrote); 0 when it has none. */
export function inputBytesOf(input) {
  if (input === undefined) return 0
  try {
    const text = typeof input === "string" ? input : JSON.stringify(input)
    return typeof text === "string" ? utf8Length(text) : 0
  } catch {
    return 0
  }
}

const isEnvelope = (v) => v !== null && typeof v === "object" && !Array.isArray(v) && Array.isArray(v.content)

/** MCP's content types (CallToolResult.content[].type); any other page string is counted as "other". */
export const CONTENT_TYPES = ["text", "image", "audio", "resource", "resource_link"]

/** @returns {[Record<string, number>, number]} the content types' counts, and the images' base64 length */
function contentFacts(envelope) {
  /** @type {Record<string, number>} */
  const types = {}
  let image = 0
  for (const item of envelope.content) {
    if (!item || typeof item !== "object") continue
    const kind = item.type
    if (typeof kind !== "string") continue
    // Keys are ours, never page text: a page's own `type` strings would otherwise travel to the terminal.
    const key = CONTENT_TYPES.includes(kind) ? kind : "other"
    types[key] = (types[key] || 0) + 1
    if (kind === "image" && typeof item.data === "string") image += item.data.length
  }
  return [types, image]
}

/**
 * How a host turns a result into text. "chromium" (the default, measured above) or "mcp-b" for
 * @mcp-b/webmcp-polyfill 5.x, which writes JSON.stringify(value) when that gives text and String(value)
 * otherwise (so a cycle reads "[object Object]" instead of failing), "" becoming "Operation succeeded".
 */
export const PROFILES = ["chromium", "mcp-b", "form", "mcp-b-form", "mcp"]

/**
 * A declarative (form) tool's answer: what the page passed to SubmitEvent.respondWith. Chromium 156 delivers it
 * as for an imperative tool except that "" stays "" (no substitute text). An array of strings is the page's
 * validation messages: an error, counted in `validation`.
 */
function formFacts(value) {
  if (value === "") return facts(0, "string", false, false, { text: 1 })
  return validationOf(value, resultFacts(value, "chromium"))
}

function validationOf(value, f) {
  if (Array.isArray(value) && value.length && value.every((m) => typeof m === "string")) {
    f.isError = true
    f.validation = value.length
  }
  return f
}

/**
 * Facts about what the agent reads for a tool that returned `value`.
 * @returns {{resultBytes:number, resultType:string, envelope:boolean, substituted:boolean,
 *   contentTypes:Object<string,number>, imageBytes:number, serializable:boolean, isError:boolean, validation?:number}}
 */
export function resultFacts(value, profile = "chromium") {
  const t = typeof value
  if (profile === "form") return formFacts(value)
  if (profile === "mcp-b-form") return validationOf(value, resultFacts(value, "mcp-b"))
  // An MCP client's tools/call through @mcp-b/global's server: the CallToolResult it received (mcp_result.js).
  if (profile === "mcp") return mcpbFacts(safely(() => mcpResult(value), value))
  if (profile === "mcp-b" && value !== null && (t === "object" || t === "function")) return mcpbFacts(value)
  if (t === "string") {
    if (value === "") return facts(SUBSTITUTE_BYTES, "string", false, true, { text: 1 })
    let envelope = false
    /** @type {Record<string, number>} */
    let types = { text: 1 }
    let image = 0
    let isError = false
    if (value.charCodeAt(0) === 123 /* { */ && value.includes('"content"')) {
      let inner = null
      try {
        inner = JSON.parse(value)
      } catch {
        inner = null
      }
      if (isEnvelope(inner)) {
        envelope = true
        ;[types, image] = contentFacts(inner)
        isError = inner.isError === true
      }
    }
    return facts(utf8Length(value), "string", envelope, false, types, image, true, isError)
  }
  if (value === undefined || t === "function" || t === "symbol") {
    return facts(UNDEFINED_BYTES, "undefined", false, true, {})
  }
  if (value === null) return facts(4, "null", false, false, {})
  if (t === "number" || t === "bigint") return facts(utf8Length(String(value)), "number", false, false, {})
  if (t === "boolean") return facts(value ? 4 : 5, "boolean", false, false, {})
  let bytes
  let envelope = false
  try {
    envelope = isEnvelope(value) // a hostile getter throws here as it would in JSON.stringify
    if (envelope) bytes = envelopeBytes(value)
    else {
      const text = JSON.stringify(value)
      if (typeof text === "string") handOver(value, text)
      bytes = jsonBytesOf(text)
    }
  } catch {
    return facts(0, "unserializable", false, false, {}, 0, false, true)
  }
  if (bytes === undefined) return facts(UNDEFINED_BYTES, "undefined", false, true, {})
  const [types, image] = envelope ? contentFacts(value) : [{}, 0]
  return facts(bytes, Array.isArray(value) ? "array" : "object", envelope, false, types, image, true, envelope && value.isError === true)
}

const jsonBytesOf = (text) => (typeof text === "string" ? utf8Length(text) : undefined)

// The JSON text the measurement made of the last object result, handed to the diagnosis facts of the same call
// (facts.js takes it while the collector accounts that call, in the same task): the README promises a result is
// read twice, the host's read and one measurement, so its getters and toJSON run once for the agent, not once
// per use. Dropped at the end of the task: no result's text outlives its accounting here.
let handoff = null

/** @param {object} value @param {string} text */
function handOver(value, text) {
  if (handoff === null) NATIVE_THEN.call(Promise.resolve(), () => (handoff = null)) // the engine's then: no page code runs
  handoff = { value, text }
}

/** The JSON text measured of `value` in this task (resultFacts), or undefined. @param {unknown} value */
export function measuredText(value) {
  const h = handoff
  return h !== null && h.value === value ? h.text : undefined
}

// An MCP envelope's long texts are sized where they are instead of copied into one JSON text: JSON.stringify of
// a 128 KB result builds a 128 KB string the engine must then flatten and collect, on every call (about half of
// what accounting a 128 KB call cost). The envelope is stringified with each long string as "", and each long
// string adds its own JSON length: UTF-8 bytes, quotes, and what JSON.stringify escapes. test/bytes.test.mjs
// holds this to utf8Length(JSON.stringify(value)) over every escape class.
const LONG_STRING = 4096
// What JSON.stringify escapes: the seven characters with a short escape (\" \\ \b \f \n \r \t, one byte more
// each) are counted with indexOf, a native search far quicker than a regex over long text (node 20: a 94 KB
// JSON text holding 24,000 quotes 0.98 → 0.33 ms, about node's copy; in Chromium 156 0.30 against the copy's
// 0.87 ms; one regex match over the text was slower than copying it: tests/bench/test_text_sizing.py). The other controls, rare in text,
// cost one regex test and are counted only when present (\u00XX, five bytes more each).
const SHORT_ESCAPED = ['"', "\\", "\b", "\f", "\n", "\r", "\t"]
const OTHER_CONTROL = /[\u0000-\u0007\u000b\u000e-\u001f]/
const OTHER_CONTROLS = /[\u0000-\u0007\u000b\u000e-\u001f]/g
const indexOf = String.prototype.indexOf // captured: a page that patches it later does not change a count
const SURROGATE = /[\ud800-\udfff]/
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g

function envelopeBytes(value) {
  // Short texts only (most results): JSON.stringify's own fast path. A replacer function sends the engine down
  // its slow path, which for a 1 KB result cost more than the copy it saves (about 9 µs a call, profiled).
  if (!hasLongText(value.content)) return jsonBytesOf(JSON.stringify(value))
  /** @type {string[]|null} */
  let longs = null
  const text = JSON.stringify(value, (key, v) => {
    if (typeof v !== "string" || v.length < LONG_STRING) return v
    ;(longs ||= []).push(v)
    return ""
  })
  let n = jsonBytesOf(text)
  if (n === undefined || longs === null) return n
  for (const s of longs) n += jsonStringBytes(s) - 2 // its "" is already counted
  return n
}

/** Does an envelope's content hold a text or data string long enough to be sized where it is? A long string
 * elsewhere in the envelope is still counted right, by the copy. */
function hasLongText(content) {
  for (let i = 0; i < content.length; i++) {
    const item = content[i]
    if (item === null || typeof item !== "object") continue
    const { text, data } = item
    if ((typeof text === "string" && text.length >= LONG_STRING) || (typeof data === "string" && data.length >= LONG_STRING)) return true
  }
  return false
}

/** UTF-8 bytes of JSON.stringify(s) for a string, without building it. */
export function jsonStringBytes(s) {
  let n = utf8Length(s) + 2
  for (const c of SHORT_ESCAPED) for (let i = indexOf.call(s, c); i !== -1; i = indexOf.call(s, c, i + 1)) n++
  if (OTHER_CONTROL.test(s)) n += 5 * s.match(OTHER_CONTROLS).length
  if (SURROGATE.test(s)) {
    // A lone surrogate is written as a \u escape: 6 bytes where utf8Length counted U+FFFD's 3.
    const lone = s.match(LONE_SURROGATE)
    if (lone !== null) n += 3 * lone.length
  }
  return n
}

function mcpbFacts(value) {
  let text
  try {
    text = JSON.stringify(value)
  } catch {
    text = undefined
  }
  if (text) {
    handOver(value, text)
    const envelope = isEnvelope(value)
    const [types, image] = envelope ? contentFacts(value) : [{}, 0]
    return facts(utf8Length(text), Array.isArray(value) ? "array" : typeof value === "function" ? "undefined" : "object", envelope, false, types, image, true, envelope && value.isError === true)
  }
  let s = ""
  try {
    s = String(value)
  } catch {
    s = ""
  }
  const substituted = s === ""
  return facts(utf8Length(substituted ? EMPTY_SUBSTITUTE : s), "unserializable", false, substituted, {}, 0, false, false)
}

function facts(resultBytes, resultType, envelope, substituted, contentTypes, imageBytes = 0, serializable = true, isError = false) {
  return { resultBytes, resultType, envelope, substituted, contentTypes, imageBytes, serializable, isError }
}

/** The error text a span keeps, per errorPolicy: "message" (capped at 200), "name", or "none". Never a stack. */
export function errorText(err, policy) {
  if (policy === "none") return null
  let name = "Error"
  let message = ""
  try {
    if (err && typeof err === "object") {
      name = typeof err.name === "string" && err.name ? err.name : "Error"
      message = typeof err.message === "string" ? err.message : ""
    } else {
      name = typeof err
      message = String(err)
    }
  } catch {
    /* a hostile getter: keep the defaults */
  }
  if (policy === "name" || !message) return cutError(name) || "Error"
  return cutError(message)
}

/** The wire's (and webmcp-profiler's) error limit, in code points. */
export const MAX_ERROR = 200

/**
 * An error text of at most MAX_ERROR code points: a longer one keeps MAX_ERROR - 1 and ends in "…", as
 * webmcp-profiler marks its cut (it keeps 200 and adds the "…"; here the mark fits within the wire's 200).
 */
export function cutError(text) {
  const s = String(text)
  if (s.length <= MAX_ERROR) return s
  const kept = cap(s, MAX_ERROR)
  return kept.length === s.length ? s : `${cap(kept, MAX_ERROR - 1)}\u2026`
}

export { callTokens }

/**
 * The text the agent reads for `value` (the same rules as resultFacts), or null when the host would fail the
 * call. Only used where a body is wanted on purpose: an invoke from the terminal (its dialog) and opt-in
 * payload capture (to OpenTelemetry). Never kept.
 */
export function resultText(value, profile = "chromium") {
  const t = typeof value
  if (t === "string") return value === "" && profile !== "form" ? EMPTY_SUBSTITUTE : value
  if (profile === "mcp") return resultText(safely(() => mcpResult(value), value), "mcp-b")
  if ((profile === "mcp-b" || profile === "mcp-b-form") && value !== null && (t === "object" || t === "function")) {
    let text
    try {
      text = JSON.stringify(value)
    } catch {
      text = undefined
    }
    if (text) return text
    let s = ""
    try {
      s = String(value)
    } catch {
      return null
    }
    return s === "" ? EMPTY_SUBSTITUTE : s
  }
  if (value === undefined || t === "function" || t === "symbol") return UNDEFINED_TEXT
  if (value === null || t === "number" || t === "bigint" || t === "boolean") return String(value)
  try {
    const text = JSON.stringify(value)
    return typeof text === "string" ? text : UNDEFINED_TEXT
  } catch {
    return null
  }
}

/** The input as JSON text (what the model wrote), or null. */
export function inputText(input) {
  if (input === undefined) return null
  if (typeof input === "string") return input
  try {
    const text = JSON.stringify(input)
    return typeof text === "string" ? text : null
  } catch {
    return null
  }
}

/** The facts of a throw, for a caller that receives one as a result (an MCP client: an isError CallToolResult). */
export function errorResultFacts(err, profile) {
  return profile === "mcp" ? mcpbFacts(mcpErrorResult(err)) : null
}
