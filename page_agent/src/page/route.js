// The channel settings of a terminal route (the relay's script tag, the extension, `wmcp-top open`): small, so
// the eager part of the agent (eager.js) decides them before the channel's own module has loaded.

/** `relay` as the terminal's routes set it: read the channel, post no span of our own. */
export const READ_ONLY = "read"

/**
 * The config a terminal route attaches with: the page's own, its channel read only unless it says `relay: true`
 * (or `false`: no channel at all).
 * @param {object} config
 */
export function terminalRoute(config) {
  return { ...config, relay: config.relay === true || config.relay === false ? config.relay : READ_ONLY }
}

/**
 * Does this config ask for our spans on the channel? webmcp-profiler's default does; a terminal route only
 * with `relay: true` or the overlay (`?perf=overlay`, `overlay: true`), whose reader is the channel. An agent
 * with no uplink posts always: the channel is its only way to the terminal (another tab forwards it).
 * @param {{relay?: unknown, overlay?: unknown}} config
 * @param {boolean} uplinked  the agent has its own uplink
 */
export function postsSpans(config, uplinked) {
  return config.relay !== READ_ONLY || config.overlay === true || !uplinked
}
