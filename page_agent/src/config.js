// Build-time and serve-time constants.

export const VERSION = "0.1.0"
export const AGENT = `wmcp-top-agent/${VERSION}`
/** The agent as the browser extension injects it: the relay and the dashboard mark its sessions by this name. */
export const EXTENSION_AGENT = `wmcp-top-extension/${VERSION}`

/**
 * The relay address. The relay replaces the placeholder below, when it serves /agent.js and /agent.mjs,
 * with {"url":"ws://127.0.0.1:PORT/relay?t=TOKEN","protocol":"wmcp-relay/1"}. Loaded raw, it stays null
 * and the agent reads globalThis.__WMCP_RELAY__ (same shape), or runs without an uplink.
 */
export const BAKED_RELAY = /*@WMCP_RELAY@*/null

export const DEFAULTS = Object.freeze({
  buffer: 500,
  sample: 1,
  errorPolicy: "message",
  globalName: "__webmcpPerf",
  channel: true,
  pollMs: 250,
  param: "perf",
  storageKey: "webmcp-perf:mode",
  announce: true,
  reportTool: false,
  capturePayloads: false,
  maxPayloadLength: 2048,
  fingerprintHandler: false,
  prompts: true,
})
