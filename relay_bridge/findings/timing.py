"""Rules on time: the split's verdict, the slowest tools, and Long Tasks.

- `time.host-gaps`: the host's gaps (the model thinking between calls: `gapSincePrevCallMs`, summed) are at least
  HOST_DOMINATES x the tools' own wall time, and over MIN_HOST_MS. No tool change helps much: the time is in the
  model's round trips. Saving: the mean host gap, for every round trip avoided (`msPer: roundTrip`): return in one
  call what the model asks for next, so it calls less often.
- `time.slow-tool`: the TOP_SLOW tools by p95 x calls whose p95 is at least SLOW_P95_MS and whose calls spend time above their median (p95 over the ring,
  webmcp-profiler's quantile, relay_bridge.core.stats.quantile). Saving: the time its calls spend above its own median,
  sum(max(0, wall - p50)) over the ring, scaled to every call: bringing slow calls down to the median. Assumes
  the median is reachable (a cache, an index, less work per call). A saving under SLOW_SAVING_FLOOR_MS is no
  finding: calls of one duration and their timer's jitter (0.4 ms "saved" on a 100 ms tool) are not slow calls.
- `time.long-tasks`: a tool whose calls block the page's main thread (Long Tasks, `blockingMs`) for at least
  MIN_BLOCKING_MS in all and BLOCKING_SHARE of its wall time. Saving: that blocking time (scaled to every call):
  what moving the work off the main thread (a worker, chunks that yield) gives back to the page.
"""

from __future__ import annotations

from collections.abc import Mapping

from relay_bridge.core.stats import quantile
from relay_bridge.findings.common import tools_by_name
from relay_bridge.findings.inputs import SessionInput, SpanInput
from relay_bridge.findings.model import Finding, Saving

HOST_DOMINATES = 2.0
MIN_HOST_MS = 1000.0
SLOW_P95_MS = 100.0
TOP_SLOW = 3
SLOW_SAVING_FLOOR_MS = 50.0  # half of SLOW_P95_MS: less, in all, is noise beside a tool that slow
MIN_BLOCKING_MS = 200.0
BLOCKING_SHARE = 0.25


def find(s: SessionInput, by_tool: Mapping[str, list[SpanInput]]) -> list[Finding]:
    out = []
    gaps = [span.gapSincePrevCallMs for span in s.spans if span.gapSincePrevCallMs is not None]
    if s.host_gap_ms >= MIN_HOST_MS and s.host_gap_ms >= HOST_DOMINATES * s.wall_ms and gaps:
        mean_gap = sum(gaps) / len(gaps)
        out.append(
            Finding(
                "time.host-gaps",
                s.id,
                (),
                {
                    "hostGapMs": round(s.host_gap_ms, 1),
                    "toolMs": round(s.wall_ms, 1),
                    "blockingMs": round(s.blocking_ms, 1),
                    "ratio": round(s.host_gap_ms / s.wall_ms, 1) if s.wall_ms else 0.0,
                    "gaps": len(gaps),
                    "meanGapMs": round(mean_gap, 1),
                },
                "the time is the model's round trips, not the tools: return what it asks for next in the same call",
                Saving(ms=round(mean_gap, 1), msPer="roundTrip"),
            )
        )
    tools = tools_by_name(s)
    slow: list[tuple[float, str, float, float, int, float, float]] = []
    for name, ring in by_tool.items():
        walls = sorted(span.wallMs for span in ring)
        p50, p95 = quantile(walls, 0.5), quantile(walls, 0.95)
        tool = tools.get(name)
        calls = max(len(ring), tool.calls if tool is not None else 0)
        scale = calls / len(ring)
        over = sum(max(0.0, w - p50) for w in walls) * scale if p50 is not None else 0.0
        if p50 is not None and p95 is not None and p95 >= SLOW_P95_MS and over >= SLOW_SAVING_FLOOR_MS:
            slow.append((p95 * calls, name, p50, p95, calls, sum(walls) * scale, over))
        blocking = sum(span.blockingMs for span in ring)
        wall = sum(walls)
        if blocking >= MIN_BLOCKING_MS and wall > 0 and blocking >= BLOCKING_SHARE * wall:
            out.append(
                Finding(
                    "time.long-tasks",
                    s.id,
                    (name,),
                    {"blockingMs": round(blocking, 1), "wallMs": round(wall, 1), "share": round(blocking / wall, 4), "calls": calls},
                    "move the work off the main thread (a worker, or chunks that yield): Long Tasks block the page",
                    Saving(ms=round(blocking * scale, 1)),
                )
            )
    slow.sort(key=lambda row: (-row[0], row[1]))
    for weight, name, p50, p95, calls, total, over in slow[:TOP_SLOW]:
        out.append(
            Finding(
                "time.slow-tool",
                s.id,
                (name,),
                {
                    "p50Ms": round(p50, 1),
                    "p95Ms": round(p95, 1),
                    "calls": calls,
                    "p95xCallsMs": round(weight, 1),
                    "shareOfToolTime": round(total / s.wall_ms, 4) if s.wall_ms else 0.0,
                },
                "its slow calls are the tool time: bring them to its median (cache, index, do less per call)",
                Saving(ms=round(over, 1)),
            )
        )
    return out
