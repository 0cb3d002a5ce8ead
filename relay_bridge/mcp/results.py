"""What each tool of `wmcp-top mcp` answers, from a capture of the store (`wmcp-top-capture/1`): pure, no I/O.

The capture is what the relay's read-only view serves and what `E` exports, so an answer holds nothing the exports
do not. Each function returns `(structured, text)`: `structured` is the tool's structuredContent, where page text
(tool names, titles, origins, error messages) may stand as data; `text` is the server's own short sentence, made of
numbers, session ids and mark names only, never a page's words.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import msgspec

from relay_bridge.core import protocol as p
from relay_bridge.core.stats import SessionStats
from relay_bridge.core.store import Store
from relay_bridge.core.units import fmt_count, summary_line
from relay_bridge.exports.report import FORMAT as REPORT_FORMAT
from relay_bridge.findings.document import session_findings
from relay_bridge.lanes.compare import THRESHOLDS_FORMAT, CompareError, compare
from relay_bridge.lanes.footprint.lint import lint_tool
from relay_bridge.mcp.tools import SECURITY
from relay_bridge.relay.replay import ReplayError, StepClock, _capture_steps, close_all, replay_into

Answer = tuple[dict[str, Any], str]

SESSION_RE = re.compile(r"[0-9a-f]{8}")
MARK_RE = re.compile(r"[A-Za-z0-9._-]{1,64}")
MAX_MARKS = 32
# wmcp-top's own thresholds with every default (docs/formats-thresholds.md): `compare` judges, as the CLI does
# with `--thresholds` naming that format.
DEFAULT_THRESHOLDS = {"format": THRESHOLDS_FORMAT}


class ToolFailure(Exception):
    """One line for the agent, as the CLI would say it; the MCP answer is a tool error, never a traceback."""


# -- sessions -----------------------------------------------------------------------------------------------


def session_of(capture: dict[str, Any], sid: str) -> dict[str, Any]:
    for sess in capture["sessions"]:
        if sess["info"]["id"] == sid:
            return sess
    shown = sid if SESSION_RE.fullmatch(sid) else "(not a session id)"
    raise ToolFailure(f"unknown session {shown}: list_sessions names the sessions the relay holds")


def _split(sess: dict[str, Any]) -> dict[str, Any]:
    return dict(sess["report"]["ledger"]["totals"])


def _summary(split: dict[str, Any]) -> str:
    return summary_line(split["schemaBytes"], split["wallMs"], split["resultBytes"], split["estTokens"], split["hostGapMs"])


def session_row(sess: dict[str, Any]) -> dict[str, Any]:
    info = sess["info"]
    split = _split(sess)
    return {
        "id": info["id"],
        "origin": info["origin"],
        "path": info.get("path", ""),
        "title": info.get("title", ""),
        "context": info.get("context", "top"),
        "state": sess["state"],
        "phase": sess["phase"],
        "coverage": sess["coverage"],
        "calls": split["calls"],
        "errors": split["errors"],
        "inflight": len(sess.get("inflight", [])),
        "split": split,
        "summary": _summary(split),
    }


def list_sessions(capture: dict[str, Any], cursor: int) -> Answer:
    rows = [session_row(s) for s in capture["sessions"]]
    live = sum(r["state"] == "live" for r in rows)
    calls = sum(r["calls"] for r in rows)
    text = f"{len(rows)} sessions ({live} live), {calls} calls in all; call cursor {cursor}"
    return {"sessions": rows, "cursor": cursor}, text


def _suspicious(descriptor: Any) -> list[dict[str, str]]:
    """The lint's security findings of one descriptor (hidden characters, text aimed at the model, secrets, data drops)."""
    if not isinstance(descriptor, dict) or not isinstance(descriptor.get("name"), str):
        return []
    if "description" in descriptor and not isinstance(descriptor["description"], str):
        return []
    return [f for f in lint_tool(descriptor) if f["severity"] in SECURITY]


# report v2's row of a tool registered and never called (report v2 itself lists only tools with spans).
EMPTY_ROW = {
    "calls": 0,
    "errors": 0,
    "minMs": None,
    "p50Ms": None,
    "p95Ms": None,
    "maxMs": None,
    "blockingMs": 0.0,
    "lastResultBytes": 0,
    "totalBytes": 0,
    "estTokens": 0,
    "estInputTokens": 0,
}


def tool_rows(sess: dict[str, Any]) -> list[dict[str, Any]]:
    """Every tool the session registered or called: report v2's row (or no calls), registration, lint."""
    measured = {row["tool"]: row for row in sess["report"]["tools"]}
    records = {t["name"]: t for t in sess.get("tools", []) if not t.get("internal")}
    rows = []
    for name in sorted(set(measured) | set(records)):
        record = records.get(name)
        row = dict(measured.get(name) or {"tool": name, **EMPTY_ROW, "schemaBytes": record["schemaBytes"] if record else 0})
        row["registered"] = record is not None and record.get("unregisteredAt") is None and record.get("rejected") is None
        row["measured"] = record.get("measured", True) if record else True
        row["counted"] = record.get("counted", 0) if record else 0
        row["suspicious"] = _suspicious(record.get("descriptor")) if record else []
        rows.append(row)
    return rows


def get_session(capture: dict[str, Any], sid: str) -> Answer:
    sess = session_of(capture, sid)
    now = capture["generatedAt"]
    origin = sess["info"].get("timeOrigin", 0.0)
    inflight = [
        {
            "seq": c["seq"],
            "tool": c["tool"],
            "runningMs": max(0.0, now - origin - c["invokedAt"]),
            "cancelled": c.get("cancelled", False),
        }
        for c in sess.get("inflight", [])
    ]
    rows = tool_rows(sess)
    flagged = sum(bool(r["suspicious"]) for r in rows)
    row = session_row(sess)
    text = (
        f"session {sid}: {len(rows)} tools, {row['calls']} calls, {row['errors']} errors, {len(inflight)} in flight, "
        f"coverage {row['coverage']}; {flagged} tools with suspicious lint findings"
    )
    return {"session": row, "coverageReasons": _reasons(sess), "tools": rows, "inflight": inflight}, text


def _reasons(sess: dict[str, Any]) -> list[str]:
    status = sess.get("status") or {}
    reasons = [f"{sess['lost']} spans were evicted in the page before they could be sent"] if sess.get("lost") else []
    return reasons + list(status.get("reasons") or [])


# -- findings and report ------------------------------------------------------------------------------------


def _replayed(capture: dict[str, Any]) -> Store:
    """The store the capture rebuilds, as `wmcp-top diagnose capture.json` rebuilds it."""
    store = Store(clock=StepClock())
    try:
        replay_into(store, list(_capture_steps(Path("view"), capture)))
    except ReplayError as exc:
        raise ToolFailure(f"the relay's capture could not be read back: {exc}") from None
    close_all(store)
    return store


def get_findings(capture: dict[str, Any], sid: str | None) -> Answer:
    if sid is not None:
        session_of(capture, sid)
    store = _replayed(capture)
    sessions = [s for s in store.sessions.values() if sid is None or s.id == sid]
    doc = session_findings(sessions)
    suspicious = [
        {"session": sess["info"]["id"], "tool": row["tool"], **finding}
        for sess in capture["sessions"]
        if sid is None or sess["info"]["id"] == sid
        for row in tool_rows(sess)
        for finding in row["suspicious"]
    ]
    total = doc["total"]
    text = (
        f"{total['findings']} findings over {len(sessions)} sessions, together ~{fmt_count(total['tokens'])} tokens"
        f" and {total['ms']:g} ms to save; {len(suspicious)} suspicious lint findings"
    )
    return {"findings": doc, "suspicious": suspicious}, text


def get_report(capture: dict[str, Any], sid: str, spans: int) -> Answer:
    report = dict(session_of(capture, sid)["report"])
    report["spans"] = report["spans"][-spans:] if spans > 0 else []
    return report, f"{REPORT_FORMAT} of session {sid}: {len(report['tools'])} tool rows, the newest {len(report['spans'])} spans"


# -- calls --------------------------------------------------------------------------------------------------


def calls_answer(calls: list[dict[str, Any]], count: int, cursor: int, missed: int, timed_out: bool, sid: str | None) -> Answer:
    where = f" in session {sid}" if sid is not None else ""
    if timed_out:
        text = f"timed out: {len(calls)} of {count} calls settled{where}; cursor {cursor}"
    else:
        text = f"{len(calls)} calls settled{where}; cursor {cursor}"
    if missed:
        text += f"; {missed} calls settled too far back to list"
    return {"calls": calls, "count": len(calls), "timedOut": timed_out, "missed": missed, "cursor": cursor}, text


# -- marks --------------------------------------------------------------------------------------------------


def _activity(sess: dict[str, Any]) -> float:
    """Epoch ms of the session's latest settled call, else of its attach (`attachedAt` is epoch ms already)."""
    info = sess["info"]
    settled = max((s["settledAt"] for s in sess["report"]["spans"]), default=None)
    return float(info.get("attachedAt", 0.0)) if settled is None else float(info.get("timeOrigin", 0.0)) + settled


def _report_of(sid: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
    return {"format": REPORT_FORMAT, "session": {"id": sid}, "tools": rows}


def _rows_after(sess: dict[str, Any], before: set[int]) -> list[dict[str, Any]]:
    """report v2's rows of the spans stored after the mark, by the same definitions (relay_bridge.core.stats)."""
    stats = SessionStats(max(1, len(sess["report"]["spans"])))
    for tool in sess.get("tools", []):
        stats.register(tool["name"], tool["schemaBytes"], tool.get("internal", False))
    facts = sess.get("facts", {})
    for record in sess["report"]["spans"]:
        if record["seq"] not in before:
            stats.add(msgspec.convert(dict(record, **facts.get(str(record["seq"]), {})), p.Span))
    return stats.report_rows()


class Marks:
    """Per-tool figures kept under a name (`mark`), judged against now (`compare`)."""

    def __init__(self) -> None:
        self._marks: dict[str, dict[str, dict[str, Any]]] = {}

    def mark(self, name: str, capture: dict[str, Any], cursor: int) -> Answer:
        if not MARK_RE.fullmatch(name):
            raise ToolFailure("a mark's name is 1 to 64 characters of A-Z a-z 0-9 . _ -")
        if name not in self._marks and len(self._marks) >= MAX_MARKS:
            raise ToolFailure(f"{MAX_MARKS} marks are kept already: reuse a name")
        self._marks[name] = {
            s["info"]["id"]: {
                "origin": s["info"]["origin"],
                "path": s["info"].get("path", ""),
                "activity": _activity(s),
                "rows": s["report"]["tools"],
                "seqs": {span["seq"] for span in s["report"]["spans"]},
            }
            for s in capture["sessions"]
        }
        sessions = [{"id": sid, "calls": sum(r["calls"] for r in kept["rows"])} for sid, kept in self._marks[name].items()]
        return {"mark": name, "sessions": sessions, "cursor": cursor}, f"mark {name} keeps the figures of {len(sessions)} sessions; cursor {cursor}"

    def compare(self, name: str, capture: dict[str, Any], sid: str | None, thresholds: dict[str, Any] | None) -> Answer:
        kept = self._marks.get(name)
        if kept is None:
            shown = name if MARK_RE.fullmatch(name) else "(not a mark name)"
            raise ToolFailure(f"unknown mark {shown}: mark(name) keeps one")
        if sid is not None:
            head = session_of(capture, sid)
        elif capture["sessions"]:
            head = max(capture["sessions"], key=_activity)
        else:
            raise ToolFailure("no session yet: nothing to compare")
        head_id = head["info"]["id"]
        if head_id in kept:
            base_id, since = head_id, "mark"
            head_rows = _rows_after(head, kept[head_id]["seqs"])
        else:
            base_id = _same_page(kept, head["info"])
            since = "reload"
            head_rows = head["report"]["tools"]
        try:
            result = compare(_report_of(base_id, kept[base_id]["rows"]), _report_of(head_id, head_rows), thresholds or DEFAULT_THRESHOLDS)
        except CompareError as exc:
            raise ToolFailure(str(exc)) from None
        result |= {"mark": name, "since": since, "baseSession": base_id, "headSession": head_id}
        added = sum(t["status"] == "added" for t in result["tools"])
        removed = sum(t["status"] == "removed" for t in result["tools"])
        text = (
            f"session {head_id} against mark {name} (session {base_id}, {'calls since the mark' if since == 'mark' else 'a reload'}): "
            f"{result['regressions']} regressed, {result['improvements']} improved, {added} added, {removed} removed"
        )
        return result, text


def _same_page(kept: dict[str, dict[str, Any]], info: dict[str, Any]) -> str:
    """The marked session a reload replaced: the newest with the same origin and path, else the same origin."""
    for same in (
        lambda k: k["origin"] == info["origin"] and k["path"] == info.get("path", ""),
        lambda k: k["origin"] == info["origin"],
    ):
        found = [(k["activity"], sid) for sid, k in kept.items() if same(k)]
        if found:
            return max(found)[1]
    raise ToolFailure(f"the mark holds no session of session {info['id']}'s origin: pass the session to compare")
