"""The floor: no agent, only part of what any agent keeping the product's promises must do for every call, written
as plainly as it can be (it sizes nothing and keeps no statistics). What it costs, no agent can undercut.

It wraps each tool's execute() (by hooking `document.modelContext.registerTool`) with two clock reads and keeps a
span (500 at most); `measure` adds webmcp-profiler's `performance.measure` per call (an evicted span clears its
own); `post` adds its BroadcastChannel mirror, one `{kind: "span", span}` message with the 20 fields its overlay
reads per span, sent in the same quarter-second bursts as the agent's. `globalThis.__wmcpFloor` counts what it did
(spans kept, measures made, messages posted). With `measure` and without `post` it is the least any
webmcp-profiler-compatible agent does. Used by test_observer_effect.py (per call) and test_load_cost.py (at load).
"""

from __future__ import annotations

_SOURCE = """(() => {
  const MEASURE = %(measure)s, POST = %(post)s
  const mc = document.modelContext, register = mc.registerTool, now = performance.now.bind(performance)
  const floor = globalThis.__wmcpFloor = { spans: [], posted: 0, measured: 0 }
  const channel = POST ? new BroadcastChannel("webmcp-perf:" + location.origin) : null
  let outbox = [], timer = null, seq = 0
  const flush = () => {
    timer = null
    for (const span of outbox.splice(0)) { channel.postMessage({ kind: "span", span }); floor.posted++ }
  }
  mc.registerTool = function (tool) {
    const execute = tool.execute, name = tool.name
    tool.execute = async function () {
      const invokedAt = now()
      const result = await execute.apply(this, arguments)
      const settledAt = now()
      const span = { sessionId: "f1007000", seq: seq++, tool: name, invokedAt, settledAt, wallMs: settledAt - invokedAt,
        blockingMs: 0, inputBytes: 0, resultBytes: 0, contentTypes: {}, imageBytes: 0, estInputTokens: 0, estTextTokens: 0,
        estImageTokens: 0, estTokens: 0, isError: false, error: null, gapSincePrevCallMs: 0, synthetic: false, serializable: true }
      floor.spans.push(span)
      if (floor.spans.length > 500) {
        const old = floor.spans.shift()
        if (MEASURE) performance.clearMeasures("webmcp:" + old.tool + "#" + old.seq)
      }
      if (MEASURE) { performance.measure("webmcp:" + name + "#" + span.seq, { start: invokedAt, end: settledAt }); floor.measured++ }
      if (POST) { outbox.push(span); if (timer === null) timer = setTimeout(flush, 250) }
      return result
    }
    return register.apply(this, arguments)
  }
})()"""


def floor_js(*, measure: bool, post: bool) -> str:
    """The floor's script text (no `<script>` element around it), with those of its parts."""
    return _SOURCE % {"measure": str(measure).lower(), "post": str(post).lower()}
