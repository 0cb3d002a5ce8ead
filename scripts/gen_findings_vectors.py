#!/usr/bin/env python3
"""Write tests/vectors/findings/*.json: sessions in (numbers and the page's facts) -> ranked findings out.

Inputs are written here by hand, with the arithmetic each expected saving must come to in the description;
the expected findings are computed once by relay_bridge.findings and frozen (tests/findings/test_vectors.py
reads them back). Change them only when a rule changes on purpose: `python scripts/gen_findings_vectors.py`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from relay_bridge.findings import diagnose
from relay_bridge.findings.document import finding_record
from tests.findings.builders import session_input

OUT = ROOT / "tests" / "vectors" / "findings"
SID = "0a1b2c3d"


def tool(name: str, calls: int = 0, **kw: Any) -> dict[str, Any]:
    return {"name": name, "calls": calls, "errors": kw.pop("errors", 0), "schemaBytes": kw.pop("schemaBytes", 200), **kw}


def img(b: int, fit: int, jpeg: int, w: int = 2400, h: int = 1600, fw: int = 1568, fh: int = 1045, mime: str = "image/png") -> dict[str, Any]:
    return {"image": {"mime": mime, "width": w, "height": h, "bytes": b, "jpeg_bytes": jpeg, "fit_bytes": fit, "fit_width": fw, "fit_height": fh}}


def desc(n: int) -> str:
    words = [
        "the",
        "tool",
        "returns",
        "one",
        "record",
        "for",
        "each",
        "order",
        "with",
        "its",
        "lines",
        "totals",
        "status",
        "and",
        "the",
        "customer",
        "that",
        "placed",
        "it",
    ]
    out: list[str] = []
    while len(" ".join(out)) < n:
        out.append(words[len(out) % len(words)])
    return " ".join(out)[:n]


CASES: dict[str, dict[str, Any]] = {
    "images": {
        "description": "render: 4 image calls, 2 sampled: saved (200000-20000 + 160000-16000)/2 = 162000 B a call, "
        "ceil(162000/4) = 40500 tok a call x 4 = 162000 tok, 648000 B; pixels 2400x1600/750 = 5120 tok, "
        "1568x1045/750 = 2184.7 -> 2185. thumb: saved 200 B < max(1024, 10% of 5000): no finding.",
        "sessions": [
            {
                "id": SID,
                "calls": 6,
                "tools": [tool("render", 4), tool("thumb", 2)],
                "spans": [{"seq": i, "tool": "render", "imageBytes": 250000, "estTokens": 50000} for i in range(4)]
                + [{"seq": 4 + i, "tool": "thumb", "imageBytes": 6000} for i in range(2)],
                "facts": {"0": img(200000, 20000, 90000), "2": img(160000, 16000, 70000), "4": img(5000, 4800, 4900, 200, 200, 200, 200)},
            }
        ],
    },
    "bloat": {
        "description": "list_orders, 10 calls, 2 with facts: whitespace mean (3000+2000)/2 = 2500 B -> 625 tok x 10 = 6250; "
        "repeated keys (2500+3500)/2 = 3000 B -> 750 x 10 = 7500, rows 50; base64 0: none. get_doc, 3 calls, 1 "
        "fact: base64 6000 B of 8000 -> 1500 x 3 = 4500, runs 2; whitespace 100 B < 256: none.",
        "sessions": [
            {
                "id": SID,
                "calls": 13,
                "tools": [tool("list_orders", 10), tool("get_doc", 3)],
                "spans": [{"seq": i, "tool": "list_orders"} for i in range(10)] + [{"seq": 10 + i, "tool": "get_doc"} for i in range(3)],
                "facts": {
                    "0": {
                        "bloat": {
                            "text_bytes": 10000,
                            "whitespace_bytes": 3000,
                            "repeated_key_bytes": 2500,
                            "repeated_key_rows": 50,
                            "base64_bytes": 0,
                            "base64_runs": 0,
                            "truncated": False,
                        }
                    },
                    "5": {
                        "bloat": {
                            "text_bytes": 10000,
                            "whitespace_bytes": 2000,
                            "repeated_key_bytes": 3500,
                            "repeated_key_rows": 50,
                            "base64_bytes": 0,
                            "base64_runs": 0,
                            "truncated": True,
                        }
                    },
                    "11": {
                        "bloat": {
                            "text_bytes": 8000,
                            "whitespace_bytes": 100,
                            "repeated_key_bytes": 0,
                            "repeated_key_rows": 0,
                            "base64_bytes": 6000,
                            "base64_runs": 2,
                            "truncated": False,
                        }
                    },
                },
            }
        ],
    },
    "schema": {
        "description": "12 calls (>= 10): bulk_import never called, 3100 B -> ceil(3100/4) = 775 tok a conversation; legacy "
        "never measured but counted 2 calls: used; search has a 1500-byte description: ceil((1500-1024)/4) = "
        '119 tok; pick\'s enum `"enum":[...]` is 7 + 1 + 120 x 6 + 119 + 1 = 848 B: ceil((848-512)/4) = 84 tok.',
        "sessions": [
            {
                "id": SID,
                "calls": 12,
                "tools": [
                    tool("search", 10, descriptor={"name": "search", "description": desc(1500), "inputSchema": {"type": "object"}}),
                    tool(
                        "pick",
                        2,
                        descriptor={
                            "name": "pick",
                            "description": "Pick one.",
                            "inputSchema": {"type": "object", "properties": {"code": {"enum": [f"c{i:03d}" for i in range(120)]}}},
                        },
                    ),
                    tool("bulk_import", 0, schemaBytes=3100),
                    tool("legacy", 0, counted=2),
                ],
                "spans": [{"seq": i, "tool": "search" if i < 10 else "pick"} for i in range(12)],
            }
        ],
    },
    "similar": {
        "description": "two tools of one session with the same description words (Jaccard 1 >= 0.8): the smaller "
        "canonical definition, ceil(bytes/4) tok a conversation; the other session registers `a` with another "
        "description: same name, different definition (no token saving).",
        "sessions": [
            {
                "id": SID,
                "calls": 2,
                "origin": "https://one.test",
                "tools": [
                    tool(
                        "a",
                        1,
                        descriptor={
                            "name": "a",
                            "description": "Find orders by customer name and date range, newest first.",
                            "inputSchema": {"type": "object"},
                        },
                    ),
                    tool(
                        "find_orders_v2",
                        1,
                        descriptor={
                            "name": "find_orders_v2",
                            "description": "Find orders by customer name and date range, newest first.",
                            "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}},
                        },
                    ),
                ],
                "spans": [{"seq": 0, "tool": "a"}, {"seq": 1, "tool": "find_orders_v2"}],
            },
            {
                "id": "1b2c3d4e",
                "calls": 1,
                "origin": "https://two.test",
                "tools": [tool("a", 1, descriptor={"name": "a", "description": "Something else entirely.", "inputSchema": {"type": "object"}})],
                "spans": [{"seq": 0, "tool": "a"}],
            },
        ],
    },
    "timing": {
        "description": "host gaps 3 x 4000 = 12000 ms >= 2 x tools 3720 ms (slow 1700 x 2 + busy 300 + quick 20): mean gap 4000 ms a round trip. slow: walls "
        "100,100,100,500,900: p50 = sorted[2] = 100, p95 = sorted[min(4, 4)] = 900, above median 400 + 800 = "
        "1200 ms, 10 calls over 5 spans: x2 = 2400 ms, 3400 of 3720 ms of tool time. busy: blocking 300 of 300 ms >= 200 and 25%: 300 ms.",
        "sessions": [
            {
                "id": SID,
                "calls": 15,
                "wallMs": 3720,
                "hostGapMs": 12000,
                "tools": [tool("slow", 10), tool("busy", 1), tool("quick", 4)],
                "spans": [{"seq": i, "tool": "slow", "wallMs": w} for i, w in enumerate([100, 900, 100, 500, 100])]
                + [{"seq": 5, "tool": "busy", "wallMs": 300, "blockingMs": 300}]
                + [{"seq": 6 + i, "tool": "quick", "wallMs": 5, "gapMs": 4000 if i < 3 else None} for i in range(4)],
            }
        ],
    },
    "errors": {
        "description": "pay: 3 errors in 10 calls (30% >= 10%), failed calls 120 and 80 tok: ceil(100) x 3 = 300 tok. "
        "add: 2 calls broke minimum at /properties/qty (1 and 2 violations), 40 and 50 tok: 45 x 2 = 90; 1 "
        "call broke required: 30. fill: 2 inputs refused by the browser, input tokens 12 and 13: 13 x 2 = 26. cart: 2 "
        "errors in 4 calls, both with a broken maxLength: errors.schema's (70 x 2 = 140), no errors.rate.",
        "sessions": [
            {
                "id": SID,
                "calls": 20,
                "tools": [tool("pay", 10, errors=3), tool("add", 3), tool("fill", 3), tool("cart", 4, errors=2)],
                "spans": [{"seq": 0, "tool": "pay", "isError": True, "estTokens": 120}, {"seq": 1, "tool": "pay", "isError": True, "estTokens": 80}]
                + [{"seq": 2 + i, "tool": "pay", "estTokens": 999} for i in range(8)]
                + [
                    {"seq": 10, "tool": "add", "estTokens": 40},
                    {"seq": 11, "tool": "add", "estTokens": 50},
                    {"seq": 12, "tool": "add", "estTokens": 30},
                ]
                + [{"seq": 13, "tool": "fill", "estInputTokens": 12}, {"seq": 14, "tool": "fill", "estInputTokens": 13}, {"seq": 15, "tool": "fill"}]
                + [{"seq": 16 + i, "tool": "cart", "isError": i < 2, "estTokens": 70} for i in range(4)],
                "facts": {
                    "10": {"schema": {"violations": 1, "constraint": "minimum", "path": "/properties/qty"}},
                    "11": {"schema": {"violations": 2, "constraint": "minimum", "path": "/properties/qty"}},
                    "12": {"schema": {"violations": 1, "constraint": "required", "path": ""}},
                    "13": {"refused": {"by": "browser"}},
                    "14": {"refused": {"by": "browser"}},
                    "16": {"schema": {"violations": 1, "constraint": "maxLength", "path": "/properties/note"}},
                    "17": {"schema": {"violations": 1, "constraint": "maxLength", "path": "/properties/note"}},
                },
            }
        ],
    },
    "repeats": {
        "description": "get: seqs 2 and 3 repeat seq 0 and seq 4 repeats seq 1: 3 repeats of 2 inputs, 300, 300 and 301 "
        "tok: ceil(300.33) = 301 x 3 = 903 tok.",
        "sessions": [
            {
                "id": SID,
                "calls": 5,
                "tools": [tool("get", 5)],
                "spans": [{"seq": i, "tool": "get", "estTokens": t} for i, t in enumerate([300, 301, 300, 300, 301])],
                "facts": {"2": {"repeat": {"of": 0}}, "3": {"repeat": {"of": 0}}, "4": {"repeat": {"of": 1}}},
            }
        ],
    },
    "ranking": {
        "description": "the order: savings in tokens first (an unused 40-byte tool: 10 tok a conversation), then in ms "
        "(host gaps 2 x 30000 ms, a 30000 ms round trip), whatever their size.",
        "sessions": [
            {
                "id": SID,
                "calls": 10,
                "tools": [tool("used", 10), tool("tiny", 0, schemaBytes=40)],
                "spans": [{"seq": i, "tool": "used", "wallMs": 1, "gapMs": 30000 if i in (1, 2) else None} for i in range(10)],
            }
        ],
    },
}


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    for name, case in CASES.items():
        found = diagnose([session_input(s) for s in case["sessions"]])
        doc = {"name": name, **case, "expect": [finding_record(f, n) for n, f in enumerate(found, 1)]}
        (OUT / f"{name}.json").write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {OUT / name}.json: {len(found)} findings")
    return 0


if __name__ == "__main__":
    sys.exit(main())
