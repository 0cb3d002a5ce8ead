// Build-time and serve-time constants.

export const VERSION = "0.1.0"
export const AGENT = `wmcp-top-agent/${VERSION}`
/** The agent as the browser extension injects it: the relay and the dashboard mark its sessions by this name. */
export const EXTENSION_AGENT = `wmcp-top-extension/${VERSION}`

/**
 * The uplink address (the relay's WebSocket). The relay replaces the placeholder below, when it serves
 * /agent.js and /agent.mjs, with "ws://127.0.0.1:PORT/relay?t=TOKEN". Loaded raw, it stays null and the
 * agent reads globalThis.__WMCP_UPLINK__ (same shape), or runs without an uplink.
 */
export const BAKED_UPLINK = /*@WMCP_UPLINK@*/null

export const DEFAULTS = Object.freeze({
  buffer: 500,
  sample: 1,
  errorPolicy: "message",
  globalName: "__webmcpPerf",
  relay: true, // webmcp-profiler's meaning: mirror spans onto the BroadcastChannel (false: no channel)
  uplink: null, // the relay's WebSocket URL; null: the baked one or __WMCP_UPLINK__; false: none
  pollMs: 250,
  param: "perf",
  storageKey: "webmcp-perf:mode",
  announce: true,
  reportTool: false,
  overlay: false, // webmcp-profiler's panel; here true prints one line pointing to the terminal
  capturePayloads: false,
  maxPayloadLength: 2048,
  fingerprintHandler: false,
  prompts: true,
})
