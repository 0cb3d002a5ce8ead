// Page-supplied classifiers and the facts 001 (autotel-webmcp) adds to a call: a handler fingerprint, the
// built-in English refusal match, the consent label check. Pure helpers; nothing here keeps a body.

import { cap } from "../shared/util.js"
import { fnv1a32, sourceOf, descriptorFingerprint } from "./fingerprint.js"

export { fnv1a32, sourceOf, descriptorFingerprint }

/**
 * The built-in refusal match (used when the page gives no `isRefusal`):
 *   autotel-webmcp's (001) two sentences, at the end of the text and case-sensitive as 001 has them:
 *   "… was not confirmed." is "confirm", "… is not available right now." is "unavailable";
 *   and, case-insensitive at the start: "Confirmation required" / "User confirmation required" / "This action
 *   requires (user) confirmation" ("confirm"), "Tool unavailable" / "This tool is (currently) not available".
 * A library that rewords its refusals is not recognised: give `isRefusal` then.
 */
/** @type {Array<[string, RegExp]>} */
const REFUSALS = [
  ["confirm", / was not confirmed\.$/],
  ["unavailable", / is not available right now\.$/],
  ["confirm", /^\s*(?:(?:user )?confirmation (?:is )?required\b|this (?:action|tool|call) requires (?:user |the user's )?confirmation\b)/i],
  ["unavailable", /^\s*(?:this )?tool (?:is )?(?:currently )?(?:not available|unavailable)\b/i],
]
const REFUSAL_SCAN = 2048
const REFUSAL_LABEL = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,31}$/

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

/**
 * What a page's isRefusal returned, as the wire takes it: 001's "confirm" / "unavailable", or the page's own
 * label (a short identifier, up to 32 characters: letters, digits, `_ . : -`). Anything else is no refusal.
 */
export function refusalOf(v) {
  return typeof v === "string" && REFUSAL_LABEL.test(v) ? v : null
}

/**
 * A captured payload text cut at `max` characters the way autotel-webmcp (001) cuts it: the kept head, then
 * `...[N chars]` naming the full length, so a cut is never mistaken for the whole (nor for valid JSON).
 * Counts UTF-16 units like 001; never splits a surrogate pair.
 */
export function cutPayload(text, max, fullLength) {
  const s = String(text)
  const n = fullLength === undefined ? s.length : fullLength
  if (n <= max) return s
  let end = Math.min(max, s.length)
  const c = s.charCodeAt(end - 1)
  if (c >= 0xd800 && c <= 0xdbff) end--
  return `${s.slice(0, end)}...[${n} chars]`
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
