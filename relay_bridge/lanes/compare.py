"""`wmcp-top compare base.json head.json`: per-tool diff of two reports, judged against thresholds.

Reads `webmcp-perf-report/1` (webmcp-profiler 0.1) and `/2`, and webmcp-profiler's bench JSON
(`{rows, boot, report}`: its `report` is compared). A tool regresses when any limit is exceeded: the limits of
`--thresholds FILE`, else wmcp-top's defaults (below), so `wmcp-top compare` alone exits 1 on a regression.
`--no-judge` judges nothing and exits 0 (webmcp-profiler's compare without thresholds); so does the library's
`compare(base, head)` without a thresholds document.

Thresholds come in two shapes:

- webmcp-profiler's (a flat object): maximum growth per tool, `p50Ms`, `p95Ms` (ms), `lastResultBytes`,
  `totalBytes`, `estTokens`, `schemaBytes` (units), `errorRate` (fraction), and `relative` (a ratio, 0.25 = +25 %,
  on p50Ms, p95Ms, lastResultBytes, estTokens, schemaBytes). Exactly the keys given are judged, with 000's meaning.
- wmcp-top's (`{"format": "wmcp-top-thresholds/1", "default": {...}, "tools": {name: {...}}}`): the same keys with
  the same meaning, plus extensions: percentage rules with absolute floors (`p50Pct`/`p50FloorMs`,
  `p95Pct`/`p95FloorMs`, `bytesPct`/`bytesAbs` and `tokensPct`/`tokensAbs` per call), `minCalls`,
  `failOnRemoved`. Missing keys take the defaults below, so `{"format": "wmcp-top-thresholds/1"}` is a useful file.
  Rules may also stand at the top level, beside `format` (as in webmcp-profiler's flat file); they count as
  `default`. Any other key is refused. docs/formats-thresholds.md shows the format.

Like is compared with like: a /1 report counted bytes in UTF-16 units and its estTokens left out the input tokens,
so when the two reports differ in format the byte and token verdicts are skipped, the numbers are still shown, and
the result says why (`notes`, and `skipped` on each metric).

Plain function: `compare(base, head, thresholds=None) -> dict` with the parsed documents. CLI:
`python -m relay_bridge.lanes.compare base.json head.json [--thresholds FILE] [--json OUT]`; exit 1 on a regression,
2 on a usage error.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

from relay_bridge.core.inert import inert_str
from relay_bridge.core.units import fmt_bytes, fmt_count, fmt_ms
from relay_bridge.exports.kinds import kind_of, wrong_kind
from relay_bridge.relay.jsonfile import read_json

FORMAT = "wmcp-top-compare/1"
THRESHOLDS_FORMAT = "wmcp-top-thresholds/1"
REPORT_FORMATS = ("webmcp-perf-report/1", "webmcp-perf-report/2")

# webmcp-profiler's keys: the most a row field may grow (head - base), and `relative` growth as a ratio.
PROFILER_KEYS = ("p50Ms", "p95Ms", "lastResultBytes", "totalBytes", "estTokens", "schemaBytes", "errorRate", "relative")
ABSOLUTE_KEYS = ("p50Ms", "p95Ms", "lastResultBytes", "totalBytes", "estTokens", "schemaBytes")
RELATIVE_KEYS = ("p50Ms", "p95Ms", "lastResultBytes", "estTokens", "schemaBytes")
# wmcp-top's extension, the defaults of its own format: a percentage rule regresses when head is worse than base by
# more than `pct` percent AND by more than the floor (so 0.1 ms -> 0.2 ms is not a "100 % regression").
DEFAULT_THRESHOLDS: dict[str, Any] = {
    "p50Pct": 20.0,
    "p50FloorMs": 1.0,
    "p95Pct": 25.0,
    "p95FloorMs": 2.0,
    "bytesPct": 10.0,
    "bytesAbs": 16.0,  # bytes per call: the floor of bytesPct
    "tokensPct": 10.0,
    "tokensAbs": 4.0,  # tokens per call: the floor of tokensPct
    "errorRate": 0.0,  # head error rate may exceed base's by at most this (0.05 = five points)
    "minCalls": 1,  # timing verdicts need at least this many calls on both sides
    "failOnRemoved": False,  # a tool that vanished counts as a regression
}
THRESHOLD_KEYS = frozenset(DEFAULT_THRESHOLDS) | frozenset(PROFILER_KEYS)
DOCUMENT_KEYS = frozenset({"format", "default", "tools"})
BOOL_KEYS = frozenset({"failOnRemoved"})
# (percent key, floor key, metric) of the percentage rules
PCT_RULES = {
    "p50Ms": ("p50Pct", "p50FloorMs"),
    "p95Ms": ("p95Pct", "p95FloorMs"),
    "bytesPerCall": ("bytesPct", "bytesAbs"),
    "tokensPerCall": ("tokensPct", "tokensAbs"),
}
METRICS = ("calls", "errors", "p50Ms", "p95Ms", "bytesPerCall", "tokensPerCall", "lastResultBytes", "totalBytes", "estTokens", "schemaBytes")
SHOWN = ("calls", "errors", "p50Ms", "p95Ms", "bytesPerCall", "tokensPerCall")
SIZE_METRICS = frozenset({"bytesPerCall", "tokensPerCall", "lastResultBytes", "totalBytes", "estTokens", "schemaBytes"})
TIMING_METRICS = frozenset({"p50Ms", "p95Ms"})
CROSS_FORMAT_NOTE = (
    "bytes and tokens not judged: the reports differ in format (webmcp-perf-report/1 counted UTF-16 units and its "
    "estTokens left out input tokens; /2 counts UTF-8 bytes and includes them)"
)


class CompareError(Exception):
    """A report or thresholds file that cannot be used; one line for the user."""


# -- inputs -------------------------------------------------------------------------------------------------


def load_report(path: Path) -> dict[str, Any]:
    doc = unwrap(read_json(path, "report", CompareError))
    check_report(doc, str(path))
    return doc


def unwrap(doc: Any) -> Any:
    """webmcp-profiler's bench JSON `{rows, boot, report}` (and wmcp-top's own bench files) hold the report inside."""
    if isinstance(doc, dict) and "format" not in doc and isinstance(doc.get("report"), dict) and "format" in doc["report"]:
        return doc["report"]
    return doc


def check_report(doc: Any, name: str = "report") -> str:
    if not isinstance(doc, dict):
        raise CompareError(f"{name} is not a report (expected a JSON object)")
    fmt = doc.get("format")
    kind = kind_of(doc)
    if fmt not in REPORT_FORMATS and kind is not None:  # another of the project's files: what it is, who reads it
        raise CompareError(wrong_kind(name, kind, "a report or bench result"))
    if fmt not in REPORT_FORMATS:
        raise CompareError(f"{name}: unknown format {str(fmt)[:60]!r} (expected {' or '.join(REPORT_FORMATS)})")
    if not isinstance(doc.get("tools"), list):
        raise CompareError(f"{name}: no tools[] table")
    return fmt


def load_thresholds(path: Path | None) -> Any:
    """The thresholds document as written (checked), for compare(); None without a file: nothing is judged
    (webmcp-profiler's behaviour)."""
    if path is None:
        return None
    doc = read_json(path, "thresholds file", CompareError)
    normalise_thresholds(doc)
    return doc


def normalise_thresholds(doc: Any) -> dict[str, Any] | None:
    """`{"default": {...}, "tools": {name: {...}}}`. A flat object is webmcp-profiler's file: exactly its keys, no
    defaults. wmcp-top's format (`format`, `default` or `tools` present) fills missing keys with the defaults."""
    if doc is None:
        return None
    if not isinstance(doc, dict):
        raise CompareError("thresholds must be a JSON object")
    if not ({"format", "default", "tools"} & set(doc)):
        return {"default": _check_keys(dict(doc), "(webmcp-profiler thresholds)"), "tools": {}}
    fmt = doc.get("format", THRESHOLDS_FORMAT)
    if fmt != THRESHOLDS_FORMAT:
        raise CompareError(f"thresholds: unknown format {str(fmt)[:60]!r} (expected {THRESHOLDS_FORMAT})")
    # Rules written at the top level mean what they mean under `default` (they were silently ignored); a key that
    # is neither a rule nor format/default/tools is a typo, refused like one.
    top = {key: value for key, value in doc.items() if key not in DOCUMENT_KEYS}
    unknown = sorted(set(top) - THRESHOLD_KEYS)
    if unknown:
        raise CompareError(f"thresholds: unknown key {unknown[0]!r} (known: {', '.join(sorted(DOCUMENT_KEYS | THRESHOLD_KEYS))})")
    _check_keys(top, "(top level)")
    under_default = _check_keys(doc.get("default") or {}, "default")
    twice = sorted(key for key in set(top) & set(under_default) if top[key] != under_default[key])
    if twice:
        raise CompareError(f"thresholds: {twice[0]!r} is given both at the top level and under default, differently")
    default = dict(DEFAULT_THRESHOLDS)
    default.update(top)
    default.update(under_default)
    per_tool = doc.get("tools") or {}
    if not isinstance(per_tool, dict):
        raise CompareError('thresholds tools must be an object: {"NAME": {rules}}')
    tools = {}
    for name, over in per_tool.items():
        merged = dict(default)
        merged.update(_check_keys(over, f"tools.{name}"))
        tools[str(name)] = merged
    return {"default": default, "tools": tools}


def _check_keys(obj: Any, where: str) -> dict[str, Any]:
    if not isinstance(obj, dict):
        raise CompareError(f"thresholds {where} must be an object")
    unknown = sorted(set(obj) - THRESHOLD_KEYS)
    if unknown:
        raise CompareError(f"thresholds {where}: unknown key {unknown[0]!r} (known: {', '.join(sorted(THRESHOLD_KEYS))})")
    for key, value in obj.items():
        if key in BOOL_KEYS and not isinstance(value, bool):
            raise CompareError(f"thresholds {where}.{key} must be true or false")
        if key not in BOOL_KEYS and (isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0):
            raise CompareError(f"thresholds {where}.{key} must be a number >= 0")
    return obj


# -- the comparison -----------------------------------------------------------------------------------------


def _num(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def _row_metrics(row: dict[str, Any]) -> dict[str, float | None]:
    calls = _num(row.get("calls")) or 0.0
    total_bytes = _num(row.get("totalBytes"))
    tokens = _num(row.get("estTokens"))
    return {
        "calls": calls,
        "errors": _num(row.get("errors")) or 0.0,
        "p50Ms": _num(row.get("p50Ms")),
        "p95Ms": _num(row.get("p95Ms")),
        "bytesPerCall": total_bytes / calls if calls and total_bytes is not None else None,
        "tokensPerCall": tokens / calls if calls and tokens is not None else None,
        "lastResultBytes": _num(row.get("lastResultBytes")),
        "totalBytes": total_bytes,
        "estTokens": tokens,
        "schemaBytes": _num(row.get("schemaBytes")),
    }


def _rows(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for row in doc.get("tools", []):
        if isinstance(row, dict) and isinstance(row.get("tool"), str):
            out[row["tool"]] = row
    return out


def _pct_verdict(base: float | None, head: float | None, pct: float | None, floor: float | None) -> str:
    """`regressed`, `improved` or `same` for a percentage rule where lower is better."""
    if base is None or head is None or pct is None:
        return "same"
    floor = floor or 0.0
    delta = head - base
    if delta > floor and delta > base * pct / 100:
        return "regressed"
    if -delta > floor and -delta > base * pct / 100:
        return "improved"
    return "same"


def _judge(metric: str, bv: float | None, hv: float | None, t: dict[str, Any]) -> tuple[str, list[str]]:
    """Every rule that applies to one metric: wmcp-top's percentage rule, webmcp-profiler's absolute and relative
    limits. Returns the verdict and the limits broken (for the reason)."""
    if bv is None or hv is None:
        return "n/a", []
    broken = []
    verdict = "same"
    if metric in PCT_RULES:
        pct_key, floor_key = PCT_RULES[metric]
        verdict = _pct_verdict(bv, hv, t.get(pct_key), t.get(floor_key))
        if verdict == "regressed":
            broken.append(f"{pct_key} {t[pct_key]:g}%")
    if metric in ABSOLUTE_KEYS and t.get(metric) is not None and hv - bv > t[metric]:
        broken.append(f"{metric} limit +{t[metric]:g}")
    if metric in RELATIVE_KEYS and t.get("relative") is not None and bv > 0 and hv / bv - 1 > t["relative"]:
        broken.append(f"relative limit +{t['relative'] * 100:g}%")
    if broken:
        verdict = "regressed"
    return verdict, broken


def compare(base: dict[str, Any], head: dict[str, Any], thresholds: dict[str, Any] | None = None) -> dict[str, Any]:
    """Diff two parsed reports per tool. `thresholds`: a thresholds document (either shape), or None to judge
    nothing (every tool `same`/`changed`/`added`/`removed`, no regressions: exit 0).

    Returns `{format, base, head, crossFormat, judged, notes, tools: [...], regressions, improvements}`; each tool
    has a `status` (`regressed`, `improved`, `same`, `changed`, `added`, `removed`) and per metric `{base, head,
    delta, pct, verdict}` where verdict is `regressed`/`improved`/`same`/`n/a`/`skipped` (with `reason`).
    """
    base, head = unwrap(base), unwrap(head)
    base_fmt = check_report(base, "base")
    head_fmt = check_report(head, "head")
    th = normalise_thresholds(thresholds)
    judged = th is not None
    cross = base_fmt != head_fmt
    notes = [CROSS_FORMAT_NOTE] if cross and judged else []
    base_rows, head_rows = _rows(base), _rows(head)
    tools = []
    regressions = improvements = 0
    for name in sorted(set(base_rows) | set(head_rows)):
        t = th["tools"].get(name, th["default"]) if th else {}
        b = _row_metrics(base_rows[name]) if name in base_rows else None
        h = _row_metrics(head_rows[name]) if name in head_rows else None
        entry: dict[str, Any] = {"tool": name, "metrics": {}, "reasons": []}
        if b is None or h is None:
            entry["status"] = "added" if b is None else "removed"
            for metric in METRICS:
                entry["metrics"][metric] = {
                    "base": b[metric] if b else None,
                    "head": h[metric] if h else None,
                    "delta": None,
                    "pct": None,
                    "verdict": "n/a",
                }
            if entry["status"] == "removed" and t.get("failOnRemoved"):
                entry["status"] = "regressed"
                entry["reasons"].append("tool removed (failOnRemoved)")
            if entry["status"] == "regressed":
                regressions += 1
            tools.append(entry)
            continue
        min_calls: float = t.get("minCalls") or 0
        b_calls, h_calls = b["calls"] or 0, h["calls"] or 0
        enough = b_calls >= min_calls and h_calls >= min_calls
        broken_by: dict[str, list[str]] = {}
        for metric in METRICS:
            bv, hv = b[metric], h[metric]
            delta = hv - bv if bv is not None and hv is not None else None
            pct = (delta / bv * 100) if delta is not None and bv else None
            cell: dict[str, Any] = {"base": bv, "head": hv, "delta": delta, "pct": pct}
            if metric == "calls" or not judged:
                cell["verdict"] = "info" if metric == "calls" else ("same" if not delta else "changed")
            elif metric == "errors":
                b_rate = (b["errors"] or 0) / b_calls if b_calls else 0.0
                h_rate = (h["errors"] or 0) / h_calls if h_calls else 0.0
                cell["baseRate"], cell["headRate"] = b_rate, h_rate
                limit = t.get("errorRate")
                if limit is not None and h_rate - b_rate > limit + 1e-12:
                    cell["verdict"] = "regressed"
                    broken_by[metric] = [f"errorRate limit +{limit:g}"]
                elif limit is not None and b_rate - h_rate > limit + 1e-12:
                    cell["verdict"] = "improved"
                else:
                    cell["verdict"] = "same"
            elif metric in SIZE_METRICS and cross:
                cell["verdict"] = "skipped"
                cell["reason"] = "formats differ (/1 vs /2)"
            elif metric in TIMING_METRICS and not enough:
                cell["verdict"] = "skipped"
                cell["reason"] = f"fewer than {min_calls} calls"
            else:
                cell["verdict"], broken = _judge(metric, bv, hv, t)
                if broken:
                    broken_by[metric] = broken
            entry["metrics"][metric] = cell
        verdicts = {m: c["verdict"] for m, c in entry["metrics"].items()}
        worse = [m for m, v in verdicts.items() if v == "regressed"]
        better = [m for m, v in verdicts.items() if v == "improved"]
        if worse:
            entry["status"] = "regressed"
            entry["reasons"] = [_reason(m, entry["metrics"][m], broken_by.get(m, [])) for m in worse]
            regressions += 1
        elif better:
            entry["status"] = "improved"
            entry["reasons"] = [_reason(m, entry["metrics"][m], []) for m in better]
            improvements += 1
        elif any(v == "changed" for v in verdicts.values()):
            entry["status"] = "changed"
        else:
            entry["status"] = "same"
        tools.append(entry)
    return {
        "format": FORMAT,
        "base": {"format": base_fmt, "session": (base.get("session") or {}).get("id")},
        "head": {"format": head_fmt, "session": (head.get("session") or {}).get("id")},
        "crossFormat": cross,
        "judged": judged,
        "notes": notes,
        "thresholds": th["default"] if th else None,
        "tools": tools,
        "regressions": regressions,
        "improvements": improvements,
    }


def _reason(metric: str, cell: dict[str, Any], broken: list[str]) -> str:
    why = f" [{', '.join(broken)}]" if broken else ""
    if metric == "errors":
        return f"error rate {cell['baseRate'] * 100:.0f}% -> {cell['headRate'] * 100:.0f}%{why}"
    pct = f" ({cell['pct']:+.0f}%)" if cell.get("pct") is not None else ""
    return f"{metric} {_fmt(metric, cell['base'])} -> {_fmt(metric, cell['head'])}{pct}{why}"


# -- output -------------------------------------------------------------------------------------------------


def _fmt(metric: str, value: float | None) -> str:
    """The project's units (README: units), as the dashboard and the summary line print them."""
    if value is None:
        return "–"
    if metric in ("p50Ms", "p95Ms"):
        return fmt_ms(value)
    if metric in ("bytesPerCall", "lastResultBytes", "totalBytes", "schemaBytes"):
        return fmt_bytes(value)
    return fmt_count(value)  # calls, errors, tokens


def render(result: dict[str, Any]) -> str:
    heads = ("tool", "status", "calls", "errors", "p50", "p95", "B/call", "tok/call")
    rows = [heads]
    for t in result["tools"]:
        cells = [inert_str(t["tool"], 128), t["status"]]  # a page's name: never a line of its own
        for metric in SHOWN:
            c = t["metrics"][metric]
            if t["status"] in ("added", "removed") or (c["base"] is None and c["head"] is None):
                text = _fmt(metric, c["head"] if c["head"] is not None else c["base"])
            else:
                text = f"{_fmt(metric, c['base'])}→{_fmt(metric, c['head'])}"
            mark = {"regressed": " ✗", "improved": " ✓", "skipped": " ·"}.get(c["verdict"], "")
            cells.append(text + mark)
        rows.append(tuple(cells))
    widths = [max(len(r[i]) for r in rows) for i in range(len(heads))]
    lines = ["  ".join(cell.ljust(widths[i]) for i, cell in enumerate(r)).rstrip() for r in rows]
    for t in result["tools"]:
        for reason in t["reasons"]:
            lines.append(f"{inert_str(t['tool'], 128)}: {t['status']}: {inert_str(reason)}")
    for note in result["notes"]:
        lines.append(f"note: {note} (· = not judged)")
    if not result["judged"]:
        lines.append("--no-judge: nothing judged")
    elif result.get("defaultThresholds"):
        lines.append("judged by the default thresholds (docs/formats-thresholds.md); --thresholds FILE for your own, --no-judge for none")
    lines.append(
        f"{result['regressions']} regressed, {result['improvements']} improved, "
        f"{sum(t['status'] == 'added' for t in result['tools'])} added, {sum(t['status'] == 'removed' for t in result['tools'])} removed "
        f"({result['base']['format']} → {result['head']['format']})"
    )
    return "\n".join(lines)


# -- command line -------------------------------------------------------------------------------------------


COMMAND = "compare"


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser = subparsers.add_parser("compare", help="diff two reports per tool; exit 1 on a regression")
    _arguments(parser)
    return parser


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("base", help="the baseline report (webmcp-perf-report/1 or /2, or a bench JSON holding one)")
    parser.add_argument("head", help="the report to judge")
    judge = parser.add_mutually_exclusive_group()
    judge.add_argument(
        "--thresholds", metavar="FILE", help="growth limits: webmcp-profiler's flat file, or wmcp-top-thresholds/1 (default: wmcp-top's defaults)"
    )
    judge.add_argument("--no-judge", action="store_true", help="only show the diff and exit 0 (webmcp-profiler's compare without thresholds)")
    parser.add_argument("--json", metavar="OUT", help="also write the comparison as JSON")


def run(args: argparse.Namespace) -> int:
    try:
        base = load_report(Path(args.base))
        head = load_report(Path(args.head))
        if args.thresholds:
            thresholds = load_thresholds(Path(args.thresholds))
        else:
            thresholds = None if args.no_judge else {"format": THRESHOLDS_FORMAT}
        result = compare(base, head, thresholds)
        result["defaultThresholds"] = not args.thresholds and not args.no_judge
    except CompareError as exc:
        print(f"wmcp-top: {exc}", file=sys.stderr)
        return 2
    print(render(result), flush=True)
    if args.json:
        try:
            out = Path(args.json)
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(json.dumps(result, indent=1, ensure_ascii=False), encoding="utf-8")
        except OSError as exc:
            print(f"wmcp-top: cannot write {args.json}: {exc.strerror}", file=sys.stderr)
            return 2
    return 1 if result["regressions"] else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="wmcp-top compare", description=__doc__.splitlines()[0])
    _arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
