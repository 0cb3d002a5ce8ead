// page/report_host.js alone: get_perf_report through the host's original registerTool, asked before a host is
// found, never twice, withdrawn with its signal; with a stand-in interceptor and collector.
import { test } from "node:test"
import assert from "node:assert/strict"
import { ReportHost } from "../src/page/report_host.js"

function rig() {
  const calls = []
  const host = {}
  const originals = {
    registerTool(tool, opts) {
      calls.push(["register", this === host, tool.name, !!(opts && opts.signal)])
      return Promise.reject(new Error("a host that refuses later is ignored"))
    },
    unregisterTool(name) {
      calls.push(["unregister", name])
    },
  }
  const interceptor = { hosts: new Map(), record: (tool, internal) => ({ name: tool.name, internal }) }
  const collector = { active: true, reportToolName: null, recs: [], registered(rec) { this.recs.push(rec) } }
  const r = new ReportHost({ g: { AbortController }, interceptor, collector, view: (input) => ({ view: input }) })
  return { r, calls, host, originals, interceptor, collector }
}

test("asked before any host: registered when one is found, once, listed as internal", () => {
  const x = rig()
  assert.equal(x.r.register(), false, "no host yet")
  x.r.found()
  assert.deepEqual(x.calls, [])
  x.interceptor.hosts.set(x.host, { location: "document", originals: x.originals })
  x.r.found()
  assert.deepEqual(x.calls, [["register", true, "get_perf_report", true]])
  assert.equal(x.r.register(), true, "registered already: not again")
  assert.equal(x.calls.length, 1)
  assert.equal(x.collector.reportToolName, "get_perf_report")
  assert.deepEqual(x.collector.recs, [{ name: "get_perf_report", internal: true }])
})

test("unregister aborts its signal and calls the original unregisterTool; a detached collector registers nothing", () => {
  const x = rig()
  x.interceptor.hosts.set(x.host, { location: "document", originals: x.originals })
  x.r.register()
  const { ac } = x.r.tool
  x.r.unregister()
  assert.equal(ac.signal.aborted, true)
  assert.deepEqual(x.calls.at(-1), ["unregister", "get_perf_report"])
  x.r.unregister()
  assert.equal(x.calls.length, 2, "once")
  x.collector.active = false
  assert.equal(x.r.register(), false)
})

test("a host whose registerTool throws: not registered", () => {
  const x = rig()
  x.interceptor.hosts.set(x.host, { location: "document", originals: { registerTool() { throw new Error("no") } } })
  assert.equal(x.r.register(), false)
  assert.equal(x.r.tool, null)
  assert.deepEqual(x.collector.recs, [])
})
