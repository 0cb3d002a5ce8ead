"""Rules on calls that went wrong: errors, inputs outside the tool's own schema, inputs the browser refused.

- `errors.rate`: a tool with at least MIN_ERRORS errors and an error rate (errors / calls, since attach) of at
  least MIN_RATE. Saving: the tokens its failed calls spent (input and result, `estTokens`): perCall = ceil(mean
  estTokens of the failed calls in the ring), x errors. Assumes a fixed cause removes the failures (a retry the
  model makes after one is a further saving, not counted). Failed calls whose input broke the schema are left to
  `errors.schema` (counted once): perCall is over the other failed calls, x (errors - those).
- `errors.schema`: calls whose input broke the tool's own inputSchema (the page checks each input off the call
  path and sends only the count and the constraint: Chromium validates form tools only, so a bad input to an
  imperative tool runs unnoticed). One finding per tool and (constraint, pointer), the MAX_SCHEMA_GROUPS most
  broken of a tool (the other calls counted in the last one's evidence). Saving: those calls' tokens
  (perCall = ceil(mean estTokens), x calls). Fix: say the constraint in the property's description.
- `errors.refused`: calls whose input the browser refused (form validation) before any page code ran. Saving: the
  input tokens the model wrote for nothing (perCall = ceil(mean estInputTokens), x calls). The description or
  schema is unclear to the model.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from relay_bridge.findings.common import carried_input_tokens, carried_tokens, mean, tools_by_name
from relay_bridge.findings.inputs import SessionInput, SpanInput
from relay_bridge.findings.model import Finding, Saving

MIN_ERRORS = 2
MIN_RATE = 0.10
MAX_SCHEMA_GROUPS = 5  # errors.schema findings a tool
MAX_AT = 128  # characters kept of a constraint keyword or pointer


def _calls_saving(spans: list[SpanInput], calls: int, input_only: bool = False) -> Saving:
    per_call = math.ceil(mean([carried_input_tokens(s) if input_only else carried_tokens(s) for s in spans]))
    return Saving(per_call * calls, "calls", per_call, calls)


def _violates(s: SessionInput, span: SpanInput) -> bool:
    f = s.facts.get(span.seq)
    return f is not None and f.schema is not None and f.schema.violations > 0


def find(s: SessionInput, by_tool: Mapping[str, list[SpanInput]]) -> list[Finding]:
    out = []
    tools = tools_by_name(s)
    for name, ring in by_tool.items():
        tool = tools.get(name)
        if tool is not None and tool.calls and tool.errors >= MIN_ERRORS and tool.errors / tool.calls >= MIN_RATE:
            # Failures a schema violation explains are errors.schema's (counted once, there).
            explained = [span for span in ring if span.isError and _violates(s, span)] if s.facts else []
            failed = [span for span in ring if span.isError and not (s.facts and _violates(s, span))]
            unexplained = tool.errors - len(explained)
            if unexplained > 0:
                out.append(
                    Finding(
                        "errors.rate",
                        s.id,
                        (name,),
                        {"calls": tool.calls, "errors": tool.errors, "rate": round(tool.errors / tool.calls, 4), "explainedBySchema": len(explained)},
                        "fix what makes it fail, or say in its description when it cannot succeed",
                        _calls_saving(failed or ring, unexplained),
                    )
                )
        if not s.facts:
            continue
        broken: dict[tuple[str, str], list[tuple[SpanInput, int]]] = {}
        refused: list[SpanInput] = []
        for span in ring:
            f = s.facts.get(span.seq)
            if f is None:
                continue
            if f.schema is not None and f.schema.violations > 0:
                # the page may name no constraint or pointer (only a count): grouped under ""
                broken.setdefault((f.schema.constraint or "", f.schema.path or ""), []).append((span, f.schema.violations))
            if f.refused is not None and f.refused.by == "browser":
                refused.append(span)
        # The most-broken (constraint, pointer) pairs first, at most MAX_SCHEMA_GROUPS a tool: a page cannot flood the
        # list; the calls of the rest are said in the last one's evidence.
        groups = sorted(broken.items(), key=lambda kv: (-len(kv[1]), kv[0]))
        rest = sum(len(hits) for _, hits in groups[MAX_SCHEMA_GROUPS:])
        for (constraint, path), hits in groups[:MAX_SCHEMA_GROUPS]:
            spans = [h[0] for h in hits]
            evidence: dict[str, int | float] = {
                "calls": len(spans),
                "violations": sum(h[1] for h in hits),
                "toolCalls": tool.calls if tool else len(ring),
            }
            if rest and (constraint, path) == groups[min(len(groups), MAX_SCHEMA_GROUPS) - 1][0]:
                evidence["callsBreakingOtherConstraints"] = rest
            out.append(
                Finding(
                    "errors.schema",
                    s.id,
                    (name,),
                    evidence,
                    "the model's inputs break the schema: say the constraint in the property's description",
                    _calls_saving(spans, len(spans)),
                    at={"constraint": constraint[:MAX_AT], "path": path[:MAX_AT]},
                )
            )
        if refused:
            out.append(
                Finding(
                    "errors.refused",
                    s.id,
                    (name,),
                    {"calls": len(refused), "toolCalls": tool.calls if tool else len(ring)},
                    "the browser refused the model's input: the description or schema is unclear to the model",
                    _calls_saving(refused, len(refused), input_only=True),
                )
            )
    return out
