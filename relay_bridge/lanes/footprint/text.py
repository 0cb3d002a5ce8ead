"""The terminal summary: seed 003's lines first (header, counts, catalog bytes, rough tokens, repeated
definitions), then what wmcp-top adds (the similarity scan's state, the largest tools with where their bytes
go, lint findings). Plain text: relay_bridge never imports rich. Every input value goes through `safe`, so a
tool name cannot move the cursor, recolour the terminal or reverse the line."""

from __future__ import annotations

import unicodedata
from typing import Any

from relay_bridge.core.breakdown import PARTS
from relay_bridge.core.similarity import EXACT, SAME_NAME, SIMILAR

PART_LABELS = {
    "description": "description",
    "propertyNames": "property names",
    "propertyDescriptions": "property descriptions",
    "types": "types",
    "constraints": "constraints",
    "enums": "enums",
    "definitions": "definitions",
    "structure": "schema structure",
    "other": "other",
}
_SEVERITY_PLURAL = {"high": "high", "error": "errors", "warning": "warnings", "suspicious": "suspicious"}
_PLURAL = {
    EXACT: ("exact match", "exact matches"),
    SAME_NAME: ("same name with a different definition", "same name with different definitions"),
    SIMILAR: ("similar description", "similar descriptions"),
}


LABEL_MAX = 4096  # PATH_MAX


def safe(text: str, limit: int = 60) -> str:
    """Control, format (bidi, zero-width, tags), surrogate and line-separator characters as visible escapes."""
    out = []
    for ch in text:
        if unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"):
            cp = ord(ch)
            out.append(f"\\u{cp:04x}" if cp <= 0xFFFF else f"\\U{cp:08x}")
        else:
            out.append(ch)
    shown = "".join(out)
    return shown if len(shown) <= limit else shown[: limit - 1] + "…"


def plural(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def repeated_line(pairs: dict[str, Any]) -> str:
    parts = [plural(pairs["found"], "pair", "pairs")]
    for label, (one, many) in _PLURAL.items():
        n = pairs["byLabel"][label]
        if n:
            parts.append(plural(n, one, many))
    return "repeated definitions: " + ", ".join(parts)


def where_bytes_go(parts: dict[str, int], total: int, top: int = 3) -> str:
    ranked = sorted((p for p in PARTS if parts[p]), key=lambda p: (-parts[p], PARTS.index(p)))[:top]
    return " · ".join(f"{PART_LABELS[p]} {round(100 * parts[p] / total)}%" for p in ranked) if total else ""


def summary_lines(report: dict[str, Any], top: int = 10, max_findings: int = 20) -> list[str]:
    s = report["summary"]
    sim = report["similarity"]
    pairs = report["pairs"]
    lines = [
        # The source is what the user named (a path, mostly): whole, as long as any path may be.
        f"wmcp-top footprint  {safe(report['source']['label'], LABEL_MAX)}",
        f"{plural(s['servers'], 'server', 'servers')}, {plural(s['tools'], 'tool definition', 'tool definitions')}",
        f"canonical catalog: {s['catalogBytes']} bytes",
        f"rough token estimate: about {s['roughTokens']} ({s['tokenFormula']})",
        repeated_line(pairs),
        f"sum of tool definitions: {s['definitionBytes']} bytes; the catalog envelope adds {s['envelopeBytes']}",
    ]
    if pairs["truncated"]:
        lines.append(f"pairs kept: {pairs['kept']} of {pairs['found']} (truncated; {pairs['notKept']} not kept)")
    if sim["complete"]:
        lines.append(f"similarity scan: complete, {sim['examinedPairs']} eligible pairs, {sim['operations']} word-membership operations")
    else:
        lines.append(
            f"similarity scan: INCOMPLETE: budget of {sim['budget']} word-membership operations reached; "
            f"{sim['notExamined']} of {sim['eligiblePairs']} eligible pairs not examined"
        )
    sev = s["findingsBySeverity"]
    total_findings = sum(sev.values())
    lines.append(
        f"lint: {plural(total_findings, 'finding', 'findings')}"
        + (" (" + ", ".join(plural(n, k, _SEVERITY_PLURAL[k]) for k, n in sev.items() if n) + ")" if total_findings else "")
    )
    tools = report["tools"][:top]
    if tools:
        lines.append("")
        lines.append("largest tool definitions (bytes, rough tokens, where the bytes go):")
        width = max(len(safe(f"{t['server']} / {t['name']}", 48)) for t in tools)
        for t in tools:
            label = safe(f"{t['server']} / {t['name']}", 48)
            lines.append(
                f"{t['rank']:>4}  {label:<{width}}  {t['bytes']:>7} B {'~' + str(t['roughTokens']):>7} tok  "
                f"{where_bytes_go(t['breakdown'], t['bytes'])}"
            )
        if len(report["tools"]) > top:
            lines.append(f"      … {len(report['tools']) - top} more in --json / --html")
    findings = report["lint"]
    if findings:
        lines.append("")
        lines.append("findings:")
        for f in findings[:max_findings]:
            lines.append(
                f"  {f['severity']:<10} {f['code']:<24} {safe(f['server'], 30)} / {safe(f['tool'], 40)}  {safe(f['pointer'], 50)}  "
                f"{safe(f['message'], 160)}"
            )
        if len(findings) > max_findings:
            lines.append(f"  … {len(findings) - max_findings} more in --json / --html")
    for note in report["notes"]:
        lines.append(f"note: {safe(note, 200)}")
    return lines
