"""Rules `bloat.whitespace`, `bloat.repeated-keys`, `bloat.base64`: text/JSON results carrying bytes the model
reads for nothing.

Input: the page's bloat facts per call (counts and byte totals computed in the page, never the text):
`whitespace_bytes` (insignificant whitespace outside strings), `repeated_key_bytes` (the `"key":` text of keys
repeated across the rows of an array of objects, every row after the first), `base64_bytes` (base64 runs inside
strings), `text_bytes`, `truncated` (the page stopped scanning at its cap: the counts are lower bounds).

Formula, per tool and kind, over its n calls with facts:
- bytes a call     b = mean(kind bytes);
- tokens a call    t = ceil(b / 4) (design section 3);
- calls            c = the tool's calls since attach that did not fail (each result assumed like the measured ones);
- saving           t x c tokens, b x c bytes.
The fixes and what they really save: compact JSON (`JSON.stringify(value)`, no indent) removes the whitespace;
a columnar shape (`{"columns": [...], "rows": [[...], ...]}`) removes the repeated keys, less the one list of
column names; returning a link (or an image content item) instead of base64 text removes the run.

Reported when b >= MIN_BYTES and b >= MIN_SHARE x mean(text_bytes). Every count is the page's claim, held to the
span's measured `resultBytes`: no saving exceeds the bytes the calls carried.
"""

from __future__ import annotations

from collections.abc import Mapping

from relay_bridge.findings.common import mean, seen_calls, tools_by_name
from relay_bridge.findings.inputs import BloatFacts, SessionInput, SpanInput
from relay_bridge.findings.model import Finding, Saving, tokens

MIN_BYTES = 256
MIN_SHARE = 0.10
KINDS: dict[str, tuple[str, str, str]] = {
    # rule: (facts attribute, count attribute or "", what to do)
    "bloat.whitespace": ("whitespace_bytes", "", "return compact JSON (JSON.stringify without indent)"),
    "bloat.repeated-keys": (
        "repeated_key_bytes",
        "repeated_key_rows",
        "return rows as arrays under one list of column names, not objects repeating every key",
    ),
    "bloat.base64": ("base64_bytes", "base64_runs", "return a link or an image content item, not base64 inside the text"),
}


def find(s: SessionInput, by_tool: Mapping[str, list[SpanInput]]) -> list[Finding]:
    if not s.facts:  # the page sent none (yet): nothing to read
        return []
    out = []
    tools = tools_by_name(s)
    for name, ring in by_tool.items():
        pairs = [(span.resultBytes, b) for span in ring if (f := s.facts.get(span.seq)) is not None and (b := f.bloat) is not None]
        if not pairs:
            continue
        samples: list[BloatFacts] = [b for _, b in pairs]
        # The page's counts, held to the result bytes the span carried: a claim cannot outgrow the call.
        text = mean([min(b.text_bytes, carried) for carried, b in pairs])
        calls = max(len(samples), seen_calls(tools.get(name), ring, lambda sp: not sp.isError))
        for rule, (attr, count, do) in KINDS.items():
            per = mean([min(getattr(b, attr), carried) for carried, b in pairs])
            if per < MIN_BYTES or per < MIN_SHARE * text:
                continue
            evidence: dict[str, int | float] = {
                "samples": len(samples),
                "calls": calls,
                "textBytes": round(text),
                "bytes": round(per),
                "share": round(per / text, 4) if text else 0.0,
                "truncated": sum(1 for b in samples if b.truncated),
            }
            if count:  # rows with repeated keys, or base64 runs, a call
                evidence["rows" if count == "repeated_key_rows" else "runs"] = round(mean([getattr(b, count) for b in samples]), 1)
            per_call = tokens(per)
            out.append(Finding(rule, s.id, (name,), evidence, do, Saving(per_call * calls, "calls", per_call, calls, bytes=round(per * calls))))
    return out
