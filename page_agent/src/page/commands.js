// Commands from the terminal, through the relay's socket only (nothing a page posts reaches them): `invoke` calls
// one of the page's tools and answers with the text the agent would read, in one `result` frame.

import { invoker } from "./listing.js"
import { resultText, errorText } from "./measure.js"
import * as frames from "../transport/frames.js"
import { cap, safely, utf8Length, now } from "../shared/util.js"

const MAX_RESULT_TEXT = 256 * 1024 // characters of an invoked tool's result text (the relay's cap)
const COMMAND_ID = /^[\x21-\x7e]{1,32}$/

/**
 * `invoke` {tool, input}: call the tool through the browser's own executeTool where the host has one, else
 * through the registered tool's (wrapped) execute, and answer with the text the agent would read. The text
 * goes into the one `result` frame and nowhere else: not kept, not logged, not on the channel.
 */
export async function runCommand({ collector: c, uplink, interceptor }, msg) {
  const id = c.sessionId
  if (!uplink || !c.active || !msg || typeof msg.id !== "string" || !COMMAND_ID.test(msg.id) || msg.session !== id) return
  const answer = (f) => uplink.send(id, frames.result(id, msg.id, f))
  if (msg.name !== "invoke") return answer({ ok: false, error: cap(`unknown command: ${String(msg.name)}`, 200) })
  const args = msg.args && typeof msg.args === "object" ? msg.args : {}
  const tool = typeof args.tool === "string" ? args.tool : ""
  let inv = null
  try {
    inv = tool ? await invoker(interceptor, tool) : null
  } catch {
    inv = null
  }
  if (!inv) return answer({ ok: false, error: cap(`unknown tool: ${tool || "(none)"}`, 200) })
  const input = args.input && typeof args.input === "object" ? args.input : {}
  const t0 = now()
  let value
  // The wrapped execute this reaches marks its call as the terminal's, not the agent's (see expectTerminal).
  const unmark = c.expectTerminal(tool)
  try {
    value = await inv.call(input)
  } catch (e) {
    return answer({ ok: false, error: cap(`${errorText(e, "name")}: ${errorText(e, "message")}`, 200), wallMs: Math.max(0, now() - t0) })
  } finally {
    unmark()
  }
  const wallMs = Math.max(0, now() - t0)
  let text = inv.text ? (typeof value === "string" ? value : safely(() => String(value), null)) : resultText(value, inv.profile)
  if (text === null) return answer({ ok: false, error: "UnknownError: the result could not be serialised", wallMs })
  const resultBytes = utf8Length(text)
  answer({ ok: true, text: text.length > MAX_RESULT_TEXT ? cap(text, MAX_RESULT_TEXT) : text, resultBytes, wallMs })
  text = null
  value = null
}
