// The report tool on the page's registry (registerReportTool, `reportTool: true`): get_perf_report registered
// through the host's original, unpatched registerTool, so it is never measured, listed as internal, and withdrawn
// at detach.

import { markInternal } from "./wrap.js"
import { reportToolDescriptor } from "./report_tool.js"
import { safely } from "../shared/util.js"

export class ReportHost {
  /**
   * @param {object} o
   * @param {any} o.g  the global (its AbortController)
   * @param {any} o.interceptor  the hosts found and their originals (interceptor.js)
   * @param {any} o.collector
   * @param {(input: unknown) => unknown} o.view  the report's answer to a call (console.js reportView)
   */
  constructor({ g, interceptor, collector, view }) {
    this.g = g
    this.interceptor = interceptor
    this.collector = collector
    this.view = view
    /** asked for: registered as soon as a host is found (found()) */
    this.wanted = false
    /** @type {{host: any, entry: any, ac: AbortController|null}|null} */
    this.tool = null
  }

  /** Register it on the document's registry (else the first found); false while no host takes it. */
  register() {
    if (!this.collector.active || this.tool) return !!this.tool
    this.wanted = true
    let host = null
    for (const [h, e] of this.interceptor.hosts) if (!host || e.location === "document") host = [h, e]
    if (!host) return false
    const [h, entry] = host
    const register = entry.originals.registerTool
    if (typeof register !== "function") return false
    const ac = typeof this.g.AbortController === "function" ? new this.g.AbortController() : null
    const tool = markInternal(reportToolDescriptor((input) => this.view(input)))
    this.collector.reportToolName = tool.name
    try {
      const r = register.call(h, tool, ac ? { signal: ac.signal } : undefined)
      if (r && typeof r.then === "function") r.then(null, () => {})
    } catch {
      return false
    }
    this.tool = { host: h, entry, ac }
    const rec = this.interceptor.record(tool, true)
    this.collector.registered(rec)
    return true
  }

  /** A host was found: the tool asked for before it goes there now. */
  found() {
    if (this.wanted) this.register()
  }

  unregister() {
    const rt = this.tool
    if (!rt) return
    this.tool = null
    safely(() => {
      if (rt.ac) rt.ac.abort()
      if (typeof rt.entry.originals.unregisterTool === "function") rt.entry.originals.unregisterTool.call(rt.host, this.collector.reportToolName)
    })
  }
}
