"""The tools `wmcp-top mcp` offers: names, descriptions, input and output JSON Schemas. Data only, no SDK.

Every tool is read-only. The output schemas of the report and the findings are the project's own shipped schemas
(relay_bridge/schema), so an answer is valid exactly when the file `E` would write is.
"""

from __future__ import annotations

import copy
import json
from functools import cache
from importlib import resources
from typing import Any

# The lint's severities a coding agent is shown beside a tool: what could turn the tool against the model or leak.
SECURITY = ("high", "suspicious")

SESSION = {"type": "string", "pattern": "^[0-9a-f]{8}$", "description": "a session id (8 hex), as list_sessions gives it"}
MARK = {"type": "string", "pattern": "^[A-Za-z0-9._-]{1,64}$", "description": "a mark's name"}
COUNT = {"type": "integer", "minimum": 0}
MS = {"type": ["number", "null"], "minimum": 0}
CURSOR = {"type": "integer", "minimum": 0, "description": "the relay's count of settled calls; wait_for_calls(after=cursor) waits for later ones"}


def _object(properties: dict[str, Any], required: tuple[str, ...] = (), closed: bool = True) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "object", "properties": properties, "required": list(required)}
    if closed:
        out["additionalProperties"] = False
    return out


NO_INPUT = _object({})

SPLIT = {
    "type": "object",
    "additionalProperties": {"type": "number"},
    "description": "report v2's ledger totals: where the time, bytes and tokens went",
}
SESSION_ROW = _object(
    {
        "id": {"type": "string"},
        "origin": {"type": "string", "description": "page text"},
        "path": {"type": "string", "description": "page text"},
        "title": {"type": "string", "description": "page text"},
        "context": {"type": "string"},
        "state": {"type": "string"},
        "phase": {"type": "string"},
        "coverage": {"type": "string"},
        "calls": COUNT,
        "errors": COUNT,
        "inflight": COUNT,
        "split": SPLIT,
        "summary": {"type": "string", "description": "the dashboard's summary line"},
    },
    ("id", "origin", "path", "title", "context", "state", "phase", "coverage", "calls", "errors", "inflight", "split", "summary"),
)
LINT = _object(
    {
        "code": {"type": "string"},
        "severity": {"enum": list(SECURITY)},
        "source": {"type": "string"},
        "pointer": {"type": "string"},
        "message": {"type": "string"},
    },
    ("code", "severity", "source", "pointer", "message"),
)
TOOL_ROW = _object(
    {
        "tool": {"type": "string", "description": "page text"},
        "calls": COUNT,
        "errors": COUNT,
        "refused": COUNT,
        "minMs": MS,
        "p50Ms": MS,
        "p95Ms": MS,
        "maxMs": MS,
        "blockingMs": {"type": "number", "minimum": 0},
        "lastResultBytes": COUNT,
        "totalBytes": COUNT,
        "estTokens": COUNT,
        "estInputTokens": COUNT,
        "schemaBytes": COUNT,
        "registered": {"type": "boolean"},
        "measured": {"type": "boolean", "description": "false: registered before the agent loaded, calls only counted"},
        "counted": COUNT,
        "suspicious": {"type": "array", "items": LINT, "description": "the descriptor lint's security findings (high or suspicious) for this tool"},
    },
    ("tool", "calls", "errors", "p50Ms", "p95Ms", "totalBytes", "estTokens", "schemaBytes", "registered", "suspicious"),
)
INFLIGHT = _object(
    {"seq": COUNT, "tool": {"type": "string"}, "runningMs": {"type": "number", "minimum": 0}, "cancelled": {"type": "boolean"}},
    ("seq", "tool", "runningMs", "cancelled"),
)


@cache
def shipped_schema(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(resources.files("relay_bridge.schema").joinpath(name).read_text(encoding="utf-8"))
    return data


def _report_schema() -> dict[str, Any]:
    return copy.deepcopy(shipped_schema("report.v2.json"))


def _findings_schema() -> dict[str, Any]:
    """The findings document under `findings`, the lint's suspicious findings beside it (each naming its tool)."""
    findings = copy.deepcopy(shipped_schema("findings.v1.json"))
    defs = findings.pop("$defs")
    for key in ("$schema", "$id"):
        findings.pop(key, None)
    suspicious = copy.deepcopy(LINT)
    suspicious["properties"] |= {"session": {"type": "string"}, "tool": {"type": "string", "description": "page text"}}
    suspicious["required"] += ["session", "tool"]
    out = _object(
        {"findings": {"$ref": "#/$defs/findingsDocument"}, "suspicious": {"type": "array", "items": suspicious}}, ("findings", "suspicious")
    )
    out["$defs"] = defs | {"findingsDocument": findings}
    return out


def _calls_schema() -> dict[str, Any]:
    call = _object({"cursor": COUNT, "session": {"type": "string"}, "span": {"$ref": "#/$defs/span"}}, ("cursor", "session", "span"))
    out = _object(
        {"calls": {"type": "array", "items": call}, "count": COUNT, "timedOut": {"type": "boolean"}, "missed": COUNT, "cursor": CURSOR},
        ("calls", "count", "timedOut", "missed", "cursor"),
    )
    out["$defs"] = {"span": copy.deepcopy(shipped_schema("report.v2.json")["$defs"]["span"])}
    return out


METRIC = {
    "type": "object",
    "properties": {"base": MS, "head": MS, "delta": {"type": ["number", "null"]}, "pct": {"type": ["number", "null"]}, "verdict": {"type": "string"}},
    "required": ["base", "head", "delta", "pct", "verdict"],
}
COMPARE = _object(
    {
        "format": {"const": "wmcp-top-compare/1"},
        "mark": {"type": "string"},
        "since": {"enum": ["mark", "reload"], "description": "mark: the session's calls after the mark; reload: a new session of the marked page"},
        "baseSession": {"type": "string"},
        "headSession": {"type": "string"},
        "base": {"type": "object"},
        "head": {"type": "object"},
        "crossFormat": {"type": "boolean"},
        "judged": {"type": "boolean"},
        "notes": {"type": "array", "items": {"type": "string"}},
        "thresholds": {"type": ["object", "null"]},
        "tools": {
            "type": "array",
            "items": _object(
                {
                    "tool": {"type": "string", "description": "page text"},
                    "status": {"enum": ["regressed", "improved", "same", "changed", "added", "removed"]},
                    "metrics": {"type": "object", "additionalProperties": METRIC},
                    "reasons": {"type": "array", "items": {"type": "string"}},
                },
                ("tool", "status", "metrics", "reasons"),
            ),
        },
        "regressions": COUNT,
        "improvements": COUNT,
    },
    ("format", "mark", "since", "baseSession", "headSession", "judged", "tools", "regressions", "improvements"),
)

READ_ONLY = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False}
# mark changes what compare answers, in this server's memory only: it is still read-only towards pages and the relay.
MARK_HINTS = READ_ONLY | {"idempotentHint": False}


def definitions() -> list[dict[str, Any]]:
    """Every tool as MCP's `tools/list` names it: name, title, description, inputSchema, outputSchema, annotations."""
    return [
        {
            "name": "list_sessions",
            "title": "List profiled sessions",
            "description": "Every page session the wmcp-top relay holds: id, origin, title, context, phase, coverage, calls and the "
            "summary split (schema bytes, tool time, payload bytes and tokens, host gaps). Also the call cursor for wait_for_calls.",
            "inputSchema": NO_INPUT,
            "outputSchema": _object({"sessions": {"type": "array", "items": SESSION_ROW}, "cursor": CURSOR}, ("sessions", "cursor")),
            "annotations": READ_ONLY,
        },
        {
            "name": "get_session",
            "title": "One session's cost per tool",
            "description": "One session: the split, a row per tool (calls, errors, p50/p95 ms, bytes, tokens, schema bytes, and the "
            "descriptor lint's suspicious findings), and the calls in flight with their running time.",
            "inputSchema": _object({"session": SESSION}, ("session",)),
            "outputSchema": _object(
                {
                    "session": SESSION_ROW,
                    "coverageReasons": {"type": "array", "items": {"type": "string"}},
                    "tools": {"type": "array", "items": TOOL_ROW},
                    "inflight": {"type": "array", "items": INFLIGHT},
                },
                ("session", "coverageReasons", "tools", "inflight"),
            ),
            "annotations": READ_ONLY,
        },
        {
            "name": "get_findings",
            "title": "What to fix first",
            "description": "The diagnosis' ranked findings (wmcp-top-findings/1) with what each fix saves, of one session or all, "
            "and the descriptor lint's suspicious findings, each naming its tool.",
            "inputSchema": _object({"session": SESSION}),
            "outputSchema": _findings_schema(),
            "annotations": READ_ONLY,
        },
        {
            "name": "get_report",
            "title": "A session's report",
            "description": "The webmcp-perf-report/2 document of one session (what `wmcp-top compare` and webmcp-profiler read), with "
            "its newest `spans` spans.",
            "inputSchema": _object(
                {
                    "session": SESSION,
                    "spans": {"type": "integer", "minimum": 0, "maximum": 100000, "default": 50, "description": "newest spans to include"},
                },
                ("session",),
            ),
            "outputSchema": _report_schema(),
            "annotations": READ_ONLY,
        },
        {
            "name": "wait_for_calls",
            "title": "Wait for calls to settle",
            "description": "Returns once `count` more calls have settled (after `after`, a cursor from an earlier answer, else from "
            "now), in one session or any, or when `timeout_s` passes; with their spans. Call a page's tools (e.g. through "
            "chrome-devtools-mcp), then read what they cost.",
            "inputSchema": _object(
                {
                    "count": {"type": "integer", "minimum": 1, "maximum": 500},
                    "session": SESSION,
                    "timeout_s": {"type": "number", "minimum": 0, "maximum": 600, "default": 30},
                    "after": CURSOR,
                },
                ("count",),
            ),
            "outputSchema": _calls_schema(),
            "annotations": READ_ONLY,
        },
        {
            "name": "mark",
            "title": "Keep the figures under a name",
            "description": "Keeps every session's per-tool figures under `name` (in this server's memory), for compare: the before of an edit.",
            "inputSchema": _object({"name": MARK}, ("name",)),
            "outputSchema": _object(
                {
                    "mark": {"type": "string"},
                    "sessions": {"type": "array", "items": _object({"id": {"type": "string"}, "calls": COUNT}, ("id", "calls"))},
                    "cursor": CURSOR,
                },
                ("mark", "sessions", "cursor"),
            ),
            "annotations": MARK_HINTS,
        },
        {
            "name": "compare",
            "title": "Judge now against a mark",
            "description": "Judges a session now against a mark with the rules and thresholds of `wmcp-top compare` (wmcp-top-"
            "thresholds/1 defaults unless `thresholds` is given): the same session's calls since the mark, or, after a reload, the "
            "new session of the same page against the marked one. Without `session`, the session with the latest call.",
            "inputSchema": _object(
                {
                    "mark": MARK,
                    "session": SESSION,
                    "thresholds": {"type": "object", "description": "a thresholds document, as `compare --thresholds` reads"},
                },
                ("mark",),
            ),
            "outputSchema": COMPARE,
            "annotations": READ_ONLY,
        },
    ]
