// @ts-check
// The wire protocol `wmcp-relay/1`, the agent's side: every frame it sends is built here, one constructor per
// frame, and every frame the relay sends is named here. It mirrors relay_bridge/core/protocol.py (the fields,
// their order, the optional ones left out rather than sent as null where protocol.py omits them);
// tests/relay/test_frames_mirror.py holds the two lists of frame types together. docs/protocol.md describes
// each field.

export const PROTOCOL = "wmcp-relay/1"

/** What an agent sends (protocol.py's AgentFrame union), in the order protocol.py lists them. */
export const AGENT_FRAMES = ["hello", "start", "spans", "update", "ledger", "tool", "status", "event", "payload", "prompt", "result", "facts", "bye"]
/** What the relay sends (protocol.py's Welcome, Ack, Command, Watch, ErrorFrame). */
export const RELAY_FRAMES = ["welcome", "ack", "command", "watch", "error"]

/** The first frame of a session on a socket, again on every reconnect. */
export function hello({ protocol = PROTOCOL, agent, session, config, lost, cadence = true }) {
  return { type: "hello", protocol, agent, session, config, lost, cadence }
}

/** Calls that began and have not settled (at most 500 a frame). */
export function start(session, calls) {
  return { type: "start", session, calls }
}

/**
 * A batch of spans; `lost` is the exact count the agent could not keep; `facts` ({seq, facts} items ready when it
 * left) ride along, applied after the spans. `rows`: the relay's welcome said it reads spans as rows (spanRow).
 */
export function spans(session, list, lost, facts, rows = false) {
  const f = rows ? { type: "spans", session, rows: list.map(spanRow), lost } : { type: "spans", session, spans: list, lost }
  if (facts && facts.length) f.facts = rows ? facts.map((item) => ({ seq: item.seq, facts: shortFacts(item.facts) })) : facts
  return f
}

/** A span's fields in a row's order: protocol.py's Span without `sessionId` (the frame names the session). */
export const SPAN_ROW = ["seq", "tool", "invokedAt", "settledAt", "wallMs", "blockingMs", "inputBytes", "resultBytes", "contentTypes", "imageBytes", "estInputTokens", "estTextTokens", "estImageTokens", "estTokens", "isError", "error", "gapSincePrevCallMs", "synthetic", "serializable", "resultType", "envelope", "substituted", "depth", "parent", "overlapped", "errorType", "refusal", "consent", "consentMismatch", "waitedMs", "outcome", "invokedBy"]
/** The fields every row carries (Span's required ones); the optional ones after them end at the last one set. */
export const SPAN_ROW_REQUIRED = 19

/**
 * A span as a row: its values in SPAN_ROW's order, trailing optional ones left out when null or absent. About a
 * third of the span's JSON: the page's WebSocket costs its main thread about 10 ns a byte (docs/protocol.md).
 * @param {Record<string, any>} span
 */
export function spanRow(span) {
  const row = []
  let end = SPAN_ROW_REQUIRED
  for (let i = 0; i < SPAN_ROW.length; i++) {
    const v = span[SPAN_ROW[i]]
    if (v === undefined || v === null) row.push(null)
    else {
      row.push(v)
      if (i >= SPAN_ROW_REQUIRED) end = i + 1
    }
  }
  row.length = end
  return row
}

/** Bloat figures that may be left out when zero (protocol.py's BloatFacts: all but textBytes). */
const BLOAT_ZEROS = ["whitespaceBytes", "repeatedKeyBytes", "repeatedKeyRows", "base64Bytes", "base64Runs"]

/** Facts for a relay that reads them short: bloat without its zero figures. @param {Record<string, any>} facts */
export function shortFacts(facts) {
  const bloat = facts && facts.bloat
  if (!bloat || typeof bloat !== "object") return facts
  const short = { ...bloat }
  for (const k of BLOAT_ZEROS) if (short[k] === 0) delete short[k]
  return { ...facts, bloat: short }
}

/** A span's Long-Task blocking time, known after the span left. */
export function update(session, seq, blockingMs) {
  return { type: "update", session, seq, blockingMs }
}

export function ledger(session, rev, body) {
  return { type: "ledger", session, rev, ledger: body }
}

/**
 * A tool registered or unregistered, from the collector's record: its descriptor and facts ride along when
 * known (optional fields are left out, as protocol.py's defaults are).
 */
export function tool(session, rec, change, at) {
  const f = {
    type: "tool",
    session,
    change,
    name: rec.name,
    at,
    schemaBytes: rec.schemaBytes || 0,
    annotationsSent: rec.annotationsSent ?? null,
    annotationsKept: rec.annotationsKept ?? null,
    internal: !!rec.internal,
  }
  if (rec.descriptor) {
    try {
      f.descriptor = JSON.parse(rec.descriptor)
    } catch {
      f.descriptor = null
    }
  }
  if (rec.rejected) f.rejected = rec.rejected
  if (rec.fingerprint) f.fingerprint = rec.fingerprint
  if (rec.kind) f.kind = rec.kind
  if (rec.form) f.form = rec.form
  return f
}

/** The session's phase, its sentence and hints, and coverage (status.js). */
export function status(session, s) {
  return { type: "status", session, phase: s.phase, message: s.message, hints: s.hints, coverage: s.coverage, reasons: s.reasons }
}

export function event(session, at, kind, detail) {
  return { type: "event", session, at, kind, detail }
}

/** Opt-in only (capturePayloads, and a relay that asked for payloads): a call's or a prompt's bodies. */
export function payload(session, p) {
  return { type: "payload", session, ...p }
}

/** One Prompt API step (prompt.js): counts and times, never text. */
export function prompt(session, step) {
  return { type: "prompt", session, ...step }
}

/** The answer to a terminal's `command` (an invoke), with the command's id. */
export function result(session, id, fields) {
  return { type: "result", id, session, ...fields }
}

/** Diagnosis facts: one span's (`{seq, facts}`) or several (`items`) in one frame. */
export function facts(session, seq, body) {
  return { type: "facts", session, seq, facts: body }
}

export function factsItems(session, items) {
  return { type: "facts", session, items }
}

/** The session ends on this socket (tab hidden for good, detach, navigation). */
export function bye(session, reason) {
  return { type: "bye", session, reason }
}

/** A relay-shaped error, for the extension's worker when it refuses on the relay's behalf (pipes.js). */
export function error(code, message, fatal, session) {
  return { type: "error", code, message, fatal, session }
}
