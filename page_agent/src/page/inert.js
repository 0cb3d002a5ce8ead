// The agent when it measures nothing: the frozen no-op of server-side rendering (webmcp-profiler's), and the
// inert object the ?perf= gate leaves when it is closed. Every console member a page may call is there.

import { manifest, helpText, overlayNotice } from "./console.js"
import { statusFor } from "./status.js"
import { VERSION } from "../shared/config.js"
import { safely } from "../shared/util.js"

const NOOP_ID = "00000000"

/** The frozen no-op profiler of server-side rendering: every member of the console API, doing nothing. */
export function noop(cfg) {
  const ledger = () => ({
    sessionId: NOOP_ID, attachedAt: 0, hostFoundAt: null, hostLocation: null, firstRegistrationAt: null, registeredTools: [], tools: {}, firstCallAt: null, lastSettledAt: null,
    totals: { calls: 0, unsampledCalls: 0, overlappingCalls: 0, errors: 0, wallMs: 0, blockingMs: 0, resultBytes: 0, estTokens: 0, estInputTokens: 0, hostGapMs: 0, schemaBytes: 0, estSchemaTokens: 0 },
  })
  const status = () => ({ ...statusFor({ inactive: true, reasons: [] }), message: SSR_MESSAGE, hints: [SSR_HINT], hostLocation: null, hostFoundAt: null, toolCount: 0, callCount: 0, lastCallAt: null, coverage: null })
  const report = () => ({ format: "webmcp-perf-report/2", session: { id: NOOP_ID, origin: null, userAgent: null, generatedAt: new Date().toISOString(), version: VERSION }, ledger: ledger(), tools: [], spans: [] })
  const none = () => undefined
  const off = () => none
  return Object.freeze({
    active: false, sessionId: NOOP_ID,
    spans: () => [], aggregates: () => [], ledger, onSpan: off, onSpanUpdate: off, status,
    help: () => Promise.resolve(undefined), summary: () => SSR_MESSAGE, describe: () => Promise.resolve(manifest(cfg)),
    table: none, report, export: none, exportTrace: none, overlay: none, instrument: () => 0, synthetic: () => false, reset: none,
    detach: () => false, registerReportTool: () => false, relay: () => null, overhead: () => ({ accounted: 0, ms: 0, perSpanMs: 0 }),
    channel: () => null, recordConsent: () => false, prompts: () => [],
  })
}

const SSR_MESSAGE = "Server-side no-op: there is no window here, so nothing is measured."
const SSR_HINT = "attach in the browser (the same call runs there), before the page registers its tools"

/** The inert object left when the gate is closed: status() says why and how to switch on; `note` adds a hint to it. */
export function inert(cfg, decision) {
  const g = cfg.global || globalThis
  const notes = []
  const status = () => ({
    ...statusFor({ inactive: true, reasons: [], hints: notes }),
    hostLocation: null,
    hostFoundAt: null,
    toolCount: 0,
    callCount: 0,
    lastCallAt: null,
    reason: decision.reason,
  })
  const api = {
    active: false,
    sessionId: null,
    status,
    describe: () => Promise.resolve(manifest(cfg)),
    overlay: () => overlayNotice(cfg, g),
    recordConsent: () => false,
    prompts: () => [],
    help() {
      safely(() => g.console.info(`${helpText(status())}\n(inactive: ${decision.reason})`))
      return Promise.resolve(undefined)
    },
  }
  return { api, note: (hint) => notes.push(hint) }
}
