"""Rule `repeats`: calls that repeat an earlier call's tool and input in the same session.

Input: the page's repeat facts (`repeat.of`, the seq of the earlier identical call), found with a per-session
keyed hash that never leaves the page: only the fact that it repeats does.
Saving: the repeated calls' tokens (input and result, `estTokens` no larger than the span's bytes give): perCall = ceil(mean estTokens of the repeats),
x repeats. Fix: make the answer reusable (say in the description that it does not change within a conversation,
or return it with the call that led to the repeat). Assumes the earlier answer was still valid.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from relay_bridge.findings.common import carried_tokens, mean
from relay_bridge.findings.inputs import SessionInput, SpanInput
from relay_bridge.findings.model import Finding, Saving

RULE = "repeats"


def find(s: SessionInput, by_tool: Mapping[str, list[SpanInput]]) -> list[Finding]:
    if not s.facts:  # the page sent none (yet): nothing to read
        return []
    out = []
    for name, ring in by_tool.items():
        repeats, firsts = [], set()
        for span in ring:
            f = s.facts.get(span.seq)
            # a repeat of an earlier call only (a page's `of` is a claim: one naming a later or the same call is none)
            if f is not None and f.repeat is not None and 0 <= f.repeat.of < span.seq:
                repeats.append(span)
                firsts.add(f.repeat.of)
        if not repeats:
            continue
        per_call = math.ceil(mean([carried_tokens(span) for span in repeats]))
        out.append(
            Finding(
                RULE,
                s.id,
                (name,),
                {"repeats": len(repeats), "distinctInputs": len(firsts), "calls": len(ring)},
                "the model asked again with the same input: say the answer holds, or return it where it is needed",
                Saving(per_call * len(repeats), "calls", per_call, len(repeats)),
            )
        )
    return out
