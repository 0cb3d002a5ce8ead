"""The analysis: validated servers in, the `wmcp-top-footprint/1` report (plain JSON-ready dicts) out. Pure.

Sizes (seed 003): each tool's canonical definition bytes; their sum; the canonical catalog
`{"servers":[{"name","tools"}]}` with servers and tools sorted by name, and its difference from the sum (the
envelope). Tokens are rough: ceil(bytes / 4), a byte-based proxy, never a tokenizer count.
"""

from __future__ import annotations

from typing import Any

from relay_bridge.core.breakdown import PARTS, breakdown
from relay_bridge.core.canonical import canonical_bytes, utf16_key
from relay_bridge.core.limits import LIMITS, Limits
from relay_bridge.core.lint import SEVERITIES
from relay_bridge.core.similarity import LABELS, Entry, find_pairs
from relay_bridge.lanes.footprint.inputs import Server, validate_catalog
from relay_bridge.lanes.footprint.lint import lint_form, lint_tool, rug_pull

FORMAT = "wmcp-top-footprint/1"
TOKEN_FORMULA = "ceil(bytes / 4)"


def rough_tokens(size: int) -> int:
    return -(-size // 4)


def _share(part: int, whole: int) -> float:
    return round(part / whole, 4) if whole else 0.0


def analyze_catalog(
    servers: list[Server], source: dict[str, Any] | None = None, limits: Limits = LIMITS, notes: list[str] | None = None, strict: bool = False
) -> dict[str, Any]:
    """Validate `servers` (raises FootprintError) and measure them. Same input, same report, byte for byte.
    `strict`: refuse a tool without an object inputSchema, as seed 003 does (else it is measured and linted)."""
    validate_catalog(servers, limits, strict)
    ordered = sorted(servers, key=lambda s: utf16_key(s.name))
    rows: list[dict[str, Any]] = []
    entries: list[Entry] = []
    lint: list[dict[str, str]] = []
    catalog_servers = []
    server_rows: list[dict[str, Any]] = []
    for server in ordered:
        tools = sorted(server.tools, key=lambda t: utf16_key(t["name"]))
        catalog_servers.append({"name": server.name, "tools": tools})
        server_bytes = 0
        for tool in tools:
            canon = canonical_bytes(tool)
            size = len(canon)
            server_bytes += size
            findings = lint_tool(tool)
            form = server.meta.get("forms", {}).get(tool["name"])
            if form is not None:  # a declarative tool: its form's controls are linted too
                findings += lint_form(form)
            changed = server.meta.get("drift", {}).get(tool["name"])
            if changed:  # a live store saw the definition change after its first registration
                findings.insert(0, rug_pull(changed))
            for f in findings:
                lint.append({"server": server.name, "tool": tool["name"], **f})
            entries.append(Entry(len(entries), server.name, tool["name"], canon, tool.get("description")))
            schema = tool.get("inputSchema")
            rows.append(
                {
                    "server": server.name,
                    "name": tool["name"],
                    # 003: reports carry the descriptions and schemas from the input (review before sharing).
                    "description": tool["description"] if isinstance(tool.get("description"), str) else None,
                    "inputSchema": schema if isinstance(schema, dict) else None,
                    "bytes": size,
                    "roughTokens": rough_tokens(size),
                    "breakdown": breakdown(tool, size),
                    "findings": len(findings),
                }
            )
        server_rows.append(
            {"name": server.name, "tools": len(tools), "bytes": server_bytes, "roughTokens": rough_tokens(server_bytes), "shape": server.shape}
        )
    definition_bytes = sum(r["bytes"] for r in rows)
    catalog_bytes = len(canonical_bytes({"servers": catalog_servers}))
    for row in rows:
        row["share"] = _share(row["bytes"], definition_bytes)
    for srow in server_rows:
        srow["share"] = _share(srow["bytes"], definition_bytes)
    # Ranked: biggest first; ties in (server, name) order so the ranking is total.
    order = {id(r): n for n, r in enumerate(rows)}
    rows.sort(key=lambda r: (-r["bytes"], order[id(r)]))
    for rank, row in enumerate(rows, 1):
        row["rank"] = rank
    totals = dict.fromkeys(PARTS, 0)
    for row in rows:
        for part in PARTS:
            totals[part] += row["breakdown"][part]
    pair_report = find_pairs(entries, limits)
    by_severity = dict.fromkeys(SEVERITIES, 0)
    for f in lint:
        by_severity[f["severity"]] += 1
    return {
        "format": FORMAT,
        "source": source or {"kind": "library", "label": "catalog", "inputs": []},
        "limits": limits.as_json(),
        "summary": {
            "servers": len(ordered),
            "tools": len(rows),
            "definitionBytes": definition_bytes,
            "catalogBytes": catalog_bytes,
            "envelopeBytes": catalog_bytes - definition_bytes,
            "roughTokens": rough_tokens(catalog_bytes),
            "tokenFormula": TOKEN_FORMULA,
            "tokensAreRough": True,
            "breakdown": totals,
            "pairsByLabel": pair_report["pairs"]["byLabel"],
            "findingsBySeverity": by_severity,
        },
        "servers": server_rows,
        "tools": rows,
        "pairs": pair_report["pairs"],
        "similarity": pair_report["similarity"],
        "lint": lint,
        "notes": list(notes or []),
    }


__all__ = ["FORMAT", "LABELS", "TOKEN_FORMULA", "analyze_catalog", "rough_tokens"]
