// Accounting: one settled call in, its span out. A pure function of the call and the inputs handed to it (the
// session id, the error policy, the page's hooks, the token counter): no clock, no socket, no state kept. The
// collector decides when it runs (a batch, after the host has its value) and what happens to the span.

import { callTokens, tokensForBytes, imageTokens } from "./stats.js"
import { resultFacts, inputBytesOf, errorText, resultText, inputText, errorResultFacts } from "./measure.js"
import { defaultRefusal, refusalOf, cutPayload } from "./hooks.js"
import { safely } from "../shared/util.js"

const MAX_PAYLOAD = 65536
// What a form's navigated call and a throw without a result of its own are measured as.
const NO_RESULT = { resultBytes: 0, resultType: "null", envelope: false, substituted: false, contentTypes: {}, imageBytes: 0, serializable: true }

/**
 * @typedef {object} Accounting  what spanOf needs besides the call
 * @property {string} sessionId
 * @property {string} errorPolicy  "message" | "name" | "none"
 * @property {Function} [isErrorResult]  the page's hook (001): a value that is a failure in prose
 * @property {Function} [isRefusal]  the page's hook: a value that is the model being refused
 * @property {(inputBytes: number, resultBytes: number, imageBytes: number) => {estInputTokens:number, estTextTokens:number, estImageTokens:number, estTokens:number}} [tokens]
 */

/**
 * The span of a settled call (its outcome on `call.ok`, `call.value`, `call.fnError`, `call.outcome`), and the
 * page hooks that threw while it was measured (`[hook, error]`, in the order they ran). The call is read, not
 * changed: dropping its bodies is the caller's.
 * @param {any} call
 * @param {Accounting} o
 * @returns {{span: any, failed: Array<[string, unknown]>}}
 */
export function spanOf(call, o) {
  const policy = o.errorPolicy
  /** @type {Array<[string, unknown]>} */
  const failed = []
  let facts
  let isError
  let error = null
  let errorType = null
  let refusal = null
  if (call.outcome === "navigated") {
    // The form's submission left the document: the calling document's executeTool gets null, the agent nothing.
    facts = NO_RESULT
    isError = false
  } else if (call.ok) {
    facts = resultFacts(call.value, call.profile)
    isError = facts.isError
    if (!facts.serializable && isError) error = errorText({ name: "TypeError", message: "result could not be serialised to JSON" }, policy)
    else if (facts.validation) error = errorText({ name: "ValidationError", message: `the form answered with ${facts.validation} validation message(s)` }, policy)
    else if (isError) error = errorText({ name: "Error", message: "isError result" }, policy)
    // A failure a tool library returned as prose (001's isErrorResult): the agent still reads the value.
    if (!isError && typeof o.isErrorResult === "function") {
      let flagged = false
      try {
        flagged = !!o.isErrorResult(call.value)
      } catch (e) {
        failed.push(["isErrorResult", e])
      }
      if (flagged) {
        isError = true
        errorType = "tool_error"
        error = errorText({ name: "Error", message: "the tool returned a failure (isErrorResult)" }, policy)
      }
    }
    if (typeof o.isRefusal === "function") {
      try {
        refusal = refusalOf(o.isRefusal(call.value))
      } catch (e) {
        failed.push(["isRefusal", e])
      }
    } else refusal = safely(() => defaultRefusal(call.value), null)
  } else {
    // A throw reaches an MCP client as an isError result with bytes of its own; other callers get no result.
    facts = safely(() => errorResultFacts(call.value, call.profile), null) || { ...NO_RESULT, resultType: "error" }
    isError = true
    error = errorText(call.value, policy)
    if (policy !== "none") errorType = errorText(call.value, "name").slice(0, 64)
  }
  if (call.fnError) {
    isError = true
    error = errorText(call.fnError, policy)
    if (policy !== "none") errorType = errorText(call.fnError, "name").slice(0, 64)
  }
  const inputBytes = inputBytesOf(call.input)
  const est = (o.tokens || callTokens)(inputBytes, facts.resultBytes, facts.imageBytes)
  const span = {
    sessionId: o.sessionId,
    seq: call.seq,
    tool: call.tool,
    invokedAt: call.invokedAt,
    settledAt: call.settledAt,
    wallMs: Math.max(0, call.settledAt - call.invokedAt),
    blockingMs: call.blocking,
    inputBytes,
    resultBytes: facts.resultBytes,
    contentTypes: facts.contentTypes,
    imageBytes: facts.imageBytes,
    estInputTokens: est.estInputTokens,
    estTextTokens: est.estTextTokens,
    estImageTokens: est.estImageTokens,
    estTokens: est.estTokens,
    isError,
    error,
    gapSincePrevCallMs: call.gap,
    synthetic: call.synthetic,
    serializable: facts.serializable,
    resultType: facts.resultType,
    envelope: facts.envelope,
    substituted: facts.substituted,
    depth: call.depth,
    parent: call.parent,
    overlapped: call.overlapped,
    errorType,
    refusal,
    consent: call.consent ? call.consent.consent : null,
    consentMismatch: call.consent ? call.consent.mismatch : null,
  }
  // Declarative (form) calls: how long the filled form waited for the user's submit (not tool time), and
  // "navigated" when the submission left the document.
  if (call.waitedMs !== undefined) span.waitedMs = call.waitedMs
  if (call.outcome) span.outcome = call.outcome
  if (call.terminal) {
    span.invokedBy = "terminal"
    span.synthetic = true // not a live host's call (000's meaning), also for the channel's readers
  }
  return { span, failed }
}

/**
 * Opt-in payload capture (capturePayloads): a call's arguments, result text and thrown message, each cut to
 * `maxLength` characters (default 2048, at most 64 KiB). Goes to the relay's OpenTelemetry lane, never the channel.
 * @param {any} call
 * @param {unknown} maxLength
 */
export function payloadOf(call, maxLength) {
  const max = Number.isInteger(maxLength) && /** @type {number} */ (maxLength) > 0 ? Math.min(/** @type {number} */ (maxLength), MAX_PAYLOAD) : 2048
  const args = inputText(call.input)
  const res = call.ok ? resultText(call.value, call.profile) : null
  // A thrown error's message rides along (001's webmcp.error.message, capture on only).
  const err = call.ok
    ? null
    : safely(() => {
        const v = call.value
        return v && typeof v === "object" && typeof v.message === "string" ? v.message : String(v)
      }, null)
  return { seq: call.seq, arguments: args === null ? null : cutPayload(args, max), result: res === null ? null : cutPayload(res, max), error: err ? cutPayload(err, max) : null }
}

/**
 * (kind, bytes) -> tokens through a page's tokenEstimator, webmcp-profiler's `({kind, bytes}) => number` with
 * kind "input" | "text" | "image" (bytes: base64 length for images). A throw or a value that is not a finite
 * number >= 0 falls back to the built-in estimate; results are whole tokens.
 * @param {unknown} fn
 * @returns {(kind: string, bytes: number) => number}
 */
export function estimatorOf(fn) {
  const builtIn = (kind, bytes) => (kind === "image" ? imageTokens(bytes) : tokensForBytes(bytes))
  if (typeof fn !== "function") return builtIn
  return (kind, bytes) => {
    let v
    try {
      v = fn({ kind, bytes })
    } catch {
      v = undefined
    }
    return typeof v === "number" && Number.isFinite(v) && v >= 0 ? Math.ceil(v) : builtIn(kind, bytes)
  }
}

/**
 * A call's token counts through an estimator (estimatorOf), one ask per kind (000's `({kind, bytes})`).
 * @param {(kind: string, bytes: number) => number} estimate
 */
export function tokensThrough(estimate) {
  return (inputBytes, resultBytes, imageBytes) => {
    const estInputTokens = estimate("input", inputBytes)
    const estTextTokens = estimate("text", Math.max(0, resultBytes - imageBytes))
    const estImageTokens = imageBytes ? estimate("image", imageBytes) : 0
    return { estInputTokens, estTextTokens, estImageTokens, estTokens: estInputTokens + estTextTokens + estImageTokens }
  }
}
