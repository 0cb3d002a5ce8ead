// The agent's configuration, read once at attach: the page's options clamped to what the agent accepts, where its
// uplink dials, and what kind of context it runs in. Pure but for reading the global it is given.

import { PROTOCOL } from "../transport/frames.js"
import { FLUSH_MS } from "../transport/pacing.js"
import { DEFAULTS, BAKED_UPLINK } from "../shared/config.js"
import { safely } from "../shared/util.js"

/** The page's options over the defaults, each clamped (junk gets the default, as webmcp-profiler's do). */
export function normalise(config) {
  const cfg = { ...DEFAULTS, ...config }
  cfg.buffer = Number.isInteger(cfg.buffer) && cfg.buffer >= 1 ? Math.min(cfg.buffer, 100000) : DEFAULTS.buffer
  // 000 clamps: 5 measures every call, -1 none.
  cfg.sample = typeof cfg.sample === "number" && !Number.isNaN(cfg.sample) ? Math.min(1, Math.max(0, cfg.sample)) : 1
  if (!["message", "name", "none"].includes(cfg.errorPolicy)) cfg.errorPolicy = "message"
  cfg.pollMs = Number.isFinite(cfg.pollMs) && cfg.pollMs > 0 ? cfg.pollMs : 250
  // The batch window of the uplink and the channel mirror (0: every task flushes, as the unit tests drive it;
  // pacing.js); junk gets the default.
  cfg.flushMs = Number.isFinite(cfg.flushMs) && cfg.flushMs >= 0 ? Math.min(cfg.flushMs, 250) : FLUSH_MS
  cfg.capturePayloads = cfg.capturePayloads === true
  cfg.maxPayloadLength = Number.isInteger(cfg.maxPayloadLength) && cfg.maxPayloadLength > 0 ? Math.min(cfg.maxPayloadLength, 65536) : DEFAULTS.maxPayloadLength
  cfg.fingerprintHandler = cfg.fingerprintHandler === true
  return cfg
}

/**
 * The uplink (relay WebSocket) to dial: config.uplink (a ws:// URL; false for none), else the address the
 * relay baked in, else globalThis.__WMCP_UPLINK__. `relay` is webmcp-profiler's option and means the
 * BroadcastChannel only, never the socket.
 * @param {{uplink?: string|false|undefined, relay?: boolean}} config
 * @param {any} [g]  the global object the agent runs in (a test's stand-in, or `{}`: none)
 */
export function resolveUplink(config, g = globalThis) {
  const pick = (u) => {
    const url = typeof u === "string" ? u : u && typeof u === "object" && typeof u.url === "string" ? u.url : null
    return url && /^wss?:\/\//.test(url) ? { url, protocol: PROTOCOL } : null
  }
  if (config && config.uplink === false) return null
  return pick(config && config.uplink) || pick(BAKED_UPLINK) || pick(safely(() => g.__WMCP_UPLINK__, null))
}

/** The hello's `context`: a worker, a frame inside another, or the top window. */
export function contextOf(g) {
  if (typeof g.WorkerGlobalScope === "function" && safely(() => g instanceof g.WorkerGlobalScope, false)) return "worker"
  try {
    return g.top && g.top !== g ? "iframe" : "top"
  } catch {
    return "iframe"
  }
}

/**
 * No window and no document, and not a worker: server-side rendering (Node, an edge runtime). SSR frameworks
 * call attachProfiler() there too and rely on webmcp-profiler's frozen no-op: nothing patched, nothing dialled.
 */
export function serverSide(g) {
  return !safely(() => g.document, null) && !safely(() => g.window, null) && contextOf(g) !== "worker"
}
