// Page-supplied classifiers and the facts 001 (autotel-webmcp) adds to a call: a handler fingerprint, the
// built-in English refusal match, the consent label check. Pure helpers; nothing here keeps a body.

import { cap } from "./util.js"

/**
 * A short, stable hash of a text (two FNV-1a 32-bit lanes over UTF-16 units, 16 hex digits). Used for the
 * optional handler fingerprint: not cryptographic, only "did this function's source change".
 */
export function shortHash(text) {
  const s = String(text)
  let a = 0x811c9dc5
  let b = 0x01000193 ^ s.length
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    a = Math.imul(a ^ c, 0x01000193)
    b = Math.imul(b ^ c ^ (i & 0xff), 0x0100019d)
  }
  return (a >>> 0).toString(16).padStart(8, "0") + (b >>> 0).toString(16).padStart(8, "0")
}

/** The fingerprint of a handler: a short hash of its source text, or null when it has none we can read. */
export function fingerprintOf(fn) {
  if (typeof fn !== "function") return null
  let src
  try {
    src = Function.prototype.toString.call(fn)
  } catch {
    return null
  }
  return typeof src === "string" ? shortHash(src) : null
}

/**
 * The built-in refusal match (used when the page gives no `isRefusal`): two English sentences, at the start
 * of the text the agent reads, case-insensitive.
 *   "confirm":     "Confirmation required" / "User confirmation required" / "This action requires (user) confirmation"
 *   "unavailable": "Tool unavailable" / "This tool is (currently) not available" / "... is unavailable"
 * A library that rewords its refusals is not recognised: give `isRefusal` then.
 */
const REFUSALS = [
  ["confirm", /^\s*(?:(?:user )?confirmation (?:is )?required\b|this (?:action|tool|call) requires (?:user |the user's )?confirmation\b)/i],
  ["unavailable", /^\s*(?:this )?tool (?:is )?(?:currently )?(?:not available|unavailable)\b/i],
]
const REFUSAL_SCAN = 2048

/** The text a refusal would be written in: a string result, or the text items of an MCP envelope. */
function refusalText(value) {
  if (typeof value === "string") return value.length <= REFUSAL_SCAN ? value : null
  if (value && typeof value === "object" && !Array.isArray(value) && Array.isArray(value.content)) {
    for (const item of value.content) {
      if (item && item.type === "text" && typeof item.text === "string") return item.text.length <= REFUSAL_SCAN ? item.text : null
    }
  }
  return null
}

/** "confirm" | "unavailable" | null, by the built-in English match. */
export function defaultRefusal(value) {
  const text = refusalText(value)
  if (text === null) return null
  for (const [kind, re] of REFUSALS) if (re.test(text)) return kind
  return null
}

/** What a page's isRefusal returned, as the wire takes it. */
export function refusalOf(v) {
  return v === "confirm" || v === "unavailable" ? v : null
}

const norm = (s) => String(s).trim().replace(/\s+/g, " ").toLowerCase()

/**
 * Does the consent label the human read name the tool that ran? It does when it equals (case- and
 * space-insensitive) the tool's name, title or description, or contains its name as a word. `descriptor` is
 * the tool's {name, title, description} as registered (null when the agent never saw the tool).
 */
export function consentMismatch(shown, resolved, descriptor) {
  const label = norm(shown)
  if (!label) return true
  const name = norm(resolved)
  const same = [name]
  if (descriptor && typeof descriptor === "object") {
    for (const k of ["title", "description"]) if (typeof descriptor[k] === "string" && descriptor[k]) same.push(norm(descriptor[k]))
  }
  if (same.includes(label)) return false
  if (name) {
    const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
    if (new RegExp(`(^|[^a-z0-9_])${escaped}($|[^a-z0-9_])`).test(label)) return false
  }
  return true
}

/** The consent event's detail, capped to the wire's sizes. */
export function consentDetail(shown, resolved, granted, mismatch) {
  return { shown: cap(String(shown ?? ""), 200), resolved: cap(String(resolved), 128), granted: !!granted, mismatch: !!mismatch }
}
