// @ts-check
// Does a call's input keep to its tool's own inputSchema? A small JSON-Schema subset, run off the call path:
// Chromium 156 validates form tools only, so a model's bad input to an imperative tool runs unnoticed.
// Only the count of broken constraints, the first one's keyword and its JSON Pointer into the SCHEMA leave
// the page, never the input. Vectors: tests/vectors/facts/schema.json.
//
// Checked: type (string or list; "integer" is a whole number), enum, const, required, properties,
// additionalProperties (false, or a schema), items (a schema), minimum, maximum, exclusiveMinimum/Maximum
// (numbers, reported as "minimum"/"maximum"), minLength/maxLength (code points), pattern (the u flag),
// minItems, maxItems, format (date-time, date, time, email, uri, uuid; others are not checked).
// Not checked (skipped, so they never count as broken): allOf/anyOf/oneOf/not/if, dependent* and the rest.
// A schema holding "$ref" anywhere is not checkable: no facts at all (a skipped $ref could hide a constraint
// an additionalProperties:false beside it depends on). Walks at most MAX_NODES schema nodes and MAX_DEPTH levels.

export const MAX_NODES = 2000
export const MAX_DEPTH = 32
const MAX_POINTER = 256
const MAX_PATTERN_INPUT = 10000 // strings longer than this are not tested against a pattern (page regexes may be slow)

/** @typedef {{violations:number, constraint?:string, path?:string}} SchemaFacts */

const FORMATS = /** @type {Record<string, RegExp>} */ ({
  "date-time": /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/,
  date: /^\d{4}-\d{2}-\d{2}$/,
  time: /^\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})?$/,
  email: /^[^\s@]+@[^\s@]+$/,
  uri: /^[A-Za-z][A-Za-z0-9+.-]*:[^\s]*$/,
  uuid: /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/,
})

/** @param {unknown} v */
const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v)

/** @param {string} token  RFC 6901 escaping */
const esc = (token) => token.replace(/~/g, "~0").replace(/\//g, "~1")

/** @param {unknown} v @returns {string} */
function typeOf(v) {
  if (v === null) return "null"
  if (Array.isArray(v)) return "array"
  return typeof v
}

/** @param {unknown} v @param {string} t */
function hasType(v, t) {
  const actual = typeOf(v)
  if (t === "integer") return typeof v === "number" && Number.isInteger(v)
  if (t === "number") return typeof v === "number" && Number.isFinite(v)
  return actual === t
}

/** Structural equality of JSON values (enum, const). @param {unknown} a @param {unknown} b @returns {boolean} */
function same(a, b) {
  if (a === b) return true
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false
  if (Array.isArray(a) !== Array.isArray(b)) return false
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => same(x, b[i]))
  const ka = Object.keys(a)
  const kb = Object.keys(b)
  return ka.length === kb.length && ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && same(/** @type {any} */ (a)[k], /** @type {any} */ (b)[k]))
}

/** @param {unknown} schema @param {number} depth @returns {boolean} */
function hasRef(schema, depth) {
  if (depth > MAX_DEPTH || schema === null || typeof schema !== "object") return false
  if (!Array.isArray(schema) && Object.prototype.hasOwnProperty.call(schema, "$ref")) return true
  for (const v of Object.values(schema)) if (hasRef(v, depth + 1)) return true
  return false
}

/** @type {WeakMap<object, boolean>} schema object -> holds a $ref */
const refs = new WeakMap()

/** @param {string} s */
const codePoints = (s) => {
  let n = 0
  for (const _ of s) n++
  return n
}

/**
 * Check `input` against `schema`. Null when the call is not checkable (no schema object, a $ref, an input
 * that is not JSON); otherwise the count of broken constraints and the first one.
 * @param {unknown} schema
 * @param {unknown} input
 * @returns {SchemaFacts|null}
 */
export function checkInput(schema, input) {
  if (!isObject(schema)) return null
  const o = /** @type {object} */ (schema)
  let ref = refs.get(o)
  if (ref === undefined) refs.set(o, (ref = hasRef(schema, 0))) // the agent hands the same parsed schema each call
  if (ref) return null
  let value = input
  if (value === undefined) value = {} // a call without arguments: the host passes an empty object
  if (typeof value === "function" || typeof value === "symbol" || typeof value === "bigint") return null
  const st = { violations: 0, constraint: /** @type {string|undefined} */ (undefined), path: /** @type {string|undefined} */ (undefined), nodes: 0 }
  try {
    walk(/** @type {Record<string, any>} */ (schema), value, "", 0, st)
  } catch {
    return null // a getter threw, a page regex failed: not checkable
  }
  /** @type {SchemaFacts} */
  const out = { violations: st.violations }
  if (st.constraint) {
    out.constraint = st.constraint
    out.path = st.path
  }
  return out
}

/**
 * @param {Record<string, any>} s  a schema object
 * @param {unknown} v  the value at this place of the input
 * @param {string} at  JSON Pointer of `s` in the tool's schema
 * @param {number} depth
 * @param {{violations:number, constraint:string|undefined, path:string|undefined, nodes:number}} st
 */
function walk(s, v, at, depth, st) {
  if (depth > MAX_DEPTH || ++st.nodes > MAX_NODES) return
  /** @param {string} keyword @param {string} [pointer] */
  const broke = (keyword, pointer) => {
    st.violations++
    if (st.constraint === undefined) {
      st.constraint = keyword
      const p = pointer ?? `${at}/${keyword}`
      st.path = p.length > MAX_POINTER ? p.slice(0, MAX_POINTER) : p
    }
  }
  if ("type" in s) {
    const types = Array.isArray(s.type) ? s.type : [s.type]
    if (types.every((t) => typeof t === "string") && types.length && !types.some((t) => hasType(v, t))) {
      broke("type")
      return // the other keywords describe a value of another type
    }
  }
  if (Array.isArray(s.enum) && !s.enum.some((/** @type {unknown} */ e) => same(e, v))) broke("enum")
  if ("const" in s && !same(s.const, v)) broke("const")
  if (typeof v === "number") {
    if (typeof s.minimum === "number" && v < s.minimum) broke("minimum")
    if (typeof s.exclusiveMinimum === "number" && v <= s.exclusiveMinimum) broke("minimum", `${at}/exclusiveMinimum`)
    if (typeof s.maximum === "number" && v > s.maximum) broke("maximum")
    if (typeof s.exclusiveMaximum === "number" && v >= s.exclusiveMaximum) broke("maximum", `${at}/exclusiveMaximum`)
  }
  if (typeof v === "string") {
    const needLength = typeof s.minLength === "number" || typeof s.maxLength === "number"
    const len = needLength ? codePoints(v) : 0
    if (typeof s.minLength === "number" && len < s.minLength) broke("minLength")
    if (typeof s.maxLength === "number" && len > s.maxLength) broke("maxLength")
    if (typeof s.pattern === "string" && v.length <= MAX_PATTERN_INPUT) {
      let re = null
      try {
        re = new RegExp(s.pattern, "u")
      } catch {
        re = null // not a pattern this engine reads: not checked
      }
      if (re && !re.test(v)) broke("pattern")
    }
    if (typeof s.format === "string" && Object.prototype.hasOwnProperty.call(FORMATS, s.format) && !FORMATS[s.format].test(v)) broke("format")
  }
  if (Array.isArray(v)) {
    if (typeof s.minItems === "number" && v.length < s.minItems) broke("minItems")
    if (typeof s.maxItems === "number" && v.length > s.maxItems) broke("maxItems")
    if (isObject(s.items)) for (let i = 0; i < v.length && st.nodes <= MAX_NODES; i++) walk(s.items, v[i], `${at}/items`, depth + 1, st)
  }
  if (isObject(v)) {
    const obj = /** @type {Record<string, unknown>} */ (v)
    const props = isObject(s.properties) ? s.properties : {}
    if (Array.isArray(s.required)) {
      for (const k of s.required) if (typeof k === "string" && !Object.prototype.hasOwnProperty.call(obj, k)) broke("required")
    }
    for (const k of Object.keys(obj)) {
      if (Object.prototype.hasOwnProperty.call(props, k)) {
        if (isObject(props[k])) walk(props[k], obj[k], `${at}/properties/${esc(k)}`, depth + 1, st)
      } else if (s.additionalProperties === false) broke("additionalProperties")
      else if (isObject(s.additionalProperties)) walk(s.additionalProperties, obj[k], `${at}/additionalProperties`, depth + 1, st)
    }
  }
}
