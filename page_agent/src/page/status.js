// Status phases: what the agent is doing now, in one sentence, with next steps, and a session's status assembled
// from the collector's state (sessionStatus). Pure.

const PHASES = {
  inactive: {
    message: "The agent is loaded but switched off for this origin.",
    hints: ["open this page with ?perf=1 to switch it on (remembered for the origin)", "?perf=0 switches it off again"],
  },
  "no-host": {
    message: "Attached; no modelContext registry found yet on document, navigator or window.",
    hints: [
      "agent browsers can inject the registry late: keep the tab open and let the agent work",
      "Chromium needs --enable-features=WebMCPTesting (or the origin trial) for document.modelContext",
      "no host at all? load a polyfill such as @mcp-b/webmcp-polyfill for a dry run",
    ],
  },
  "host-found": {
    message: "Registry found; the page has not registered any tools on it yet.",
    hints: [
      "the page may register later: wait a moment",
      "tools registered before the agent loaded? retrofit them: __webmcpPerf.instrument(window.myTools)",
    ],
  },
  "tools-registered": {
    message: "Tools are wrapped; waiting for the first call.",
    hints: ["let the agent call a tool, or call one yourself from the console: tool.execute({...})"],
  },
  measuring: {
    message: "Measuring tool calls.",
    hints: ["__webmcpPerf.summary() prints the split; .report() returns the document; the relay shows it live"],
  },
  detached: {
    message: "Detached: every original is restored and nothing is measured.",
    hints: ["reload the page to attach again"],
  },
}

// Tools registered before the agent loaded are only counted (toolactivated): how to measure them.
export const COUNTED_HINT =
  "tools registered before the agent are only counted: load the agent first (first in <head>), or run `wmcp-top open URL`, or watch with `wmcp-top attach --cdp`"

// Calls arrived, but only counted (no measured call yet): "waiting for the first call" would be untrue.
const COUNTING_MESSAGE = "Calls are arriving and counted, not measured: these tools were registered before the agent loaded."

/** The registry's property, by the location the interceptor found it at. */
const WHERE = { document: "document.modelContext", navigator: "navigator.modelContext", window: "window.modelContext" }

/**
 * The phase's sentence with webmcp-profiler's details: where the registry was found (host-found), and the
 * split (measuring) when the caller has it.
 */
function detailed(phase, message, s) {
  if (phase === "host-found" && s.hostLocation) return message.replace("Registry found", `Registry found on ${WHERE[s.hostLocation] || s.hostLocation}`)
  if (phase === "measuring" && !s.measured) return COUNTING_MESSAGE
  if (phase === "measuring" && s.split) return `${message.slice(0, -1)}: ${s.split}`
  return message
}

/**
 * @param {{active?:boolean, inactive?:boolean, hostFound?:boolean, registered?:boolean, anyCall?:boolean,
 *   countedCalls?:number, reasons:string[], countedOnly?:boolean, hostLocation?:string|null,
 *   split?:string|null, hints?:string[]}} s  `hints`: the caller's own, ahead of the phase's; `countedCalls`:
 *   calls seen through toolactivated only
 * @returns {{phase:string, message:string, hints:string[], coverage:string|null, reasons:string[]}}
 */
export function statusFor(s) {
  let phase
  if (s.inactive) phase = "inactive"
  else if (!s.active) phase = "detached"
  else if (s.anyCall || s.countedCalls) phase = "measuring"
  else if (s.registered) phase = "tools-registered"
  else if (s.hostFound) phase = "host-found"
  else phase = "no-host"
  const p = PHASES[phase]
  let coverage = null
  if (phase !== "inactive" && phase !== "detached") {
    coverage = s.reasons.length ? "incomplete" : s.anyCall ? "running" : "none-observed"
  }
  const hints = p.hints.slice()
  if (s.countedOnly && coverage !== null) hints.unshift(COUNTED_HINT)
  if (s.hints && s.hints.length) hints.unshift(...s.hints)
  return { phase, message: detailed(phase, p.message, { ...s, measured: !!s.anyCall }), hints: hints.slice(0, 8), coverage, reasons: s.reasons.slice(0, 8) }
}

export const PHASE_NAMES = Object.keys(PHASES)

/**
 * A session's status (000's fields beside the phase and coverage), from its collector's state: the registry ledger
 * (ledger.js), the calls seen, the loss the uplink's feed last reported, the agent's own reasons and hints.
 * @param {{active: boolean, registry: any, lost: number, extraReasons: Iterable<string>, notes: string[],
 *   firstCallAt: number|null, unsampled: number, lastSettledAt: number|null, stats: {totals: {calls: number}}}} c
 * @param {string|null} split  the measuring sentence's split (the console's and the report tool's); the status
 *   frame leaves it out, so it changes with the phase only
 */
export function sessionStatus(c, split) {
  const r = c.registry
  const reasons = r.reasons()
  if (c.lost) reasons.push(`${c.lost} span(s) evicted before the relay stored them`)
  for (const reason of c.extraReasons) reasons.push(reason)
  const tools = r.registeredCount()
  const s = statusFor({
    active: c.active,
    hostFound: r.hostFoundAt !== null,
    registered: tools.own,
    anyCall: c.firstCallAt !== null || c.unsampled > 0,
    countedCalls: r.countedCalls(),
    reasons,
    countedOnly: r.unwrapped.size > 0,
    hostLocation: r.hostLocation,
    split,
    hints: c.notes,
  })
  return {
    phase: s.phase,
    message: s.message,
    hostLocation: r.hostLocation,
    hostFoundAt: r.hostFoundAt,
    toolCount: tools.count,
    callCount: c.stats.totals.calls,
    lastCallAt: c.lastSettledAt,
    hints: s.hints,
    coverage: s.coverage,
    reasons: s.reasons,
  }
}
