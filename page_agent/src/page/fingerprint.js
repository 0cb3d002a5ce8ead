// A tool descriptor's fingerprint (autotel-webmcp's, 001): taken when a tool is registered, so it is part of the
// registry hooks that run at load (eager.js); the rest of the page hooks (hooks.js) come later.

/** FNV-1a, 32 bits, over UTF-16 code units, as 8 hex digits (001's descriptor fingerprint hash). */
export function fnv1a32(text) {
  const s = String(text)
  let h = 0x811c9dc5
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193)
  return (h >>> 0).toString(16).padStart(8, "0")
}

/** The source text of a handler, or null when it has none we can read (proxies, revoked functions). */
export function sourceOf(fn) {
  if (typeof fn !== "function") return null
  try {
    const src = Function.prototype.toString.call(fn)
    return typeof src === "string" ? src : null
  } catch {
    return null
  }
}

/**
 * The descriptor fingerprint exactly as autotel-webmcp (001) computes `webmcp.tool.descriptor`, so a trace from
 * either tool joins on it: FNV-1a over the JSON text of [name, title (a string, else ""), description (as a
 * string, "" when absent), inputSchema (null when absent), annotations (null when absent), handler source (only
 * with `fingerprintHandler`, else null)]. A changed fingerprint under the same name is a redefinition.
 * Returns null when the descriptor cannot be serialised (a cyclic schema).
 * @param {object} tool  the tool object as the page passed it
 * @param {boolean} withHandler  fold the handler's source in (`fingerprintHandler`)
 */
export function descriptorFingerprint(tool, withHandler) {
  let text
  try {
    text = JSON.stringify([
      String(tool.name),
      typeof tool.title === "string" ? tool.title : "",
      String(tool.description ?? ""),
      tool.inputSchema ?? null,
      tool.annotations ?? null,
      withHandler ? sourceOf(tool.execute) : null,
    ])
  } catch {
    return null
  }
  return typeof text === "string" ? fnv1a32(text) : null
}
