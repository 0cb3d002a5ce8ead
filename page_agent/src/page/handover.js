// The hand-over from the eager part (eager.js) to the rest: the hooks ran at load and reported to the early buffer
// (early.js); what the page asked of the console API meanwhile takes effect, the buffer replays into the collector
// (every call then measured as if the collector had been there), and the API's waiting promises resolve.

import { MAX_CALLS } from "./early.js"
import { instrument } from "./listing.js"
import { handOver } from "./replay.js"
import { safely } from "../shared/util.js"

/**
 * @param {any} p  the early agent (eager.js)
 * @param {{collector: any, interceptor: any, report: {register: () => boolean}}} agent  the rest, composed (index.js)
 */
export function takeOver(p, { collector: c, interceptor, report }) {
  for (const fn of p.spanListeners) c.spanListeners.add(fn)
  for (const fn of p.updateListeners) c.updateListeners.add(fn)
  for (const hint of p.notes) c.notes.push(hint)
  if (p.reportName) c.reportToolName = p.reportName
  p.collector = c
  // A form's tool registered before forms.js was here was recorded as any other: now it can say it is a form.
  for (const e of p.log.events) if (e.name === "registered") safely(() => interceptor.asForm(e.args[0], safely(() => JSON.parse(e.args[0].descriptor).inputSchema, undefined)))
  handOver(p.log, c)
  if (p.log.lost) {
    c.extraReasons.add(`${p.log.lost} call(s) or event(s) before the agent finished loading were not measured: its early buffer holds ${MAX_CALLS} calls`)
    c.statusChanged()
  }
  interceptor.askKeptLater()
  for (const target of p.instrumentLater) safely(() => instrument(interceptor, target))
  if (p.reportTool) report.register()
  p.done = true
  for (const f of p.waiting.splice(0)) safely(f)
}
