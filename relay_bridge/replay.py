"""Rebuild a store from a session log (JSONL) or a capture, through the same `Store.apply` as a live run.

A log replays every accepted frame in order, so the aggregates equal what the relay had (crash recovery).
A capture is turned back into frames: hello, tools, spans with their facts, ledger totals, status, timeline.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import protocol as p
from .store import Store


class ReplayError(Exception):
    pass


@dataclass(slots=True)
class Step:
    """One thing to replay: `frame` on connection `conn`, or a connection opening/closing. `t` is epoch ms."""

    t: float
    conn: int
    frame: p.AgentFrame | None = None
    opened: bool | None = None


def read_steps(path: Path) -> list[Step]:
    """Steps of a capture or a session log, told apart by content, not by file name."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise ReplayError(f"cannot read {path}: {exc.strerror}") from None
    try:
        whole = json.loads(text)
    except ValueError:
        whole = None
    if isinstance(whole, dict) and "format" in whole:
        return list(_capture_steps(path, whole))
    steps: list[Step] = []
    for part in log_parts(path):
        lines = text if part == path else part.read_text(encoding="utf-8", errors="replace")
        steps.extend(_log_steps(part, lines.splitlines()))
    return steps


def log_parts(path: Path) -> list[Path]:
    """A rotated log is one run in several parts (`session-STAMP-001.jsonl`, `-002`, …): read them all, in order,
    from the part named on."""
    match = re.fullmatch(r"(session-.+)-(\d{3})\.jsonl", path.name)
    if not match:
        return [path]
    prefix, first = match.group(1), int(match.group(2))
    parts = sorted(path.parent.glob(f"{prefix}-[0-9][0-9][0-9].jsonl"))
    return [p for p in parts if int(p.name[-9:-6]) >= first]


def _log_steps(path: Path, lines: list[str]) -> Iterator[Step]:
    last = len(lines)
    for n, line in enumerate(lines, 1):
        line = line.strip()
        if not line:
            continue
        try:
            rec = json.loads(line)
        except ValueError:
            if n == last:
                return  # a torn last line from a crash: everything before it counts
            raise ReplayError(f"{path}:{n}: not a JSON line") from None
        if not isinstance(rec, dict) or "c" not in rec:
            raise ReplayError(f"{path}:{n}: not a wmcp-top session log line")
        t = float(rec.get("t", 0))
        conn = int(rec["c"])
        if "open" in rec or "close" in rec:
            yield Step(t, conn, opened="open" in rec)
            continue
        frame = p.decode(json.dumps(rec.get("f"), separators=(",", ":")))
        if isinstance(frame, p.Rejection):
            raise ReplayError(f"{path}:{n}: {frame.message}")
        yield Step(t, conn, frame)


def _capture_steps(path: Path, doc: dict[str, Any]) -> Iterator[Step]:
    if doc.get("format") != "wmcp-top-capture/1":
        raise ReplayError(f"{path}: not a wmcp-top capture")
    t = float(doc.get("generatedAt", 0))
    for conn, sess in enumerate(doc.get("sessions", []), start=1):
        yield Step(t, conn, opened=True)
        for raw in _capture_frames(sess):
            frame = p.decode(json.dumps(raw, separators=(",", ":")))
            if isinstance(frame, p.Rejection):
                raise ReplayError(f"{path}: session {conn}: {frame.message}")
            yield Step(t, conn, frame)
        if sess.get("state") == "ended":
            frame = p.decode(json.dumps({"type": "bye", "session": sess["info"]["id"], "reason": "captured"}))
            yield Step(t, conn, frame)  # type: ignore[arg-type]
        elif sess.get("state") != "live":
            yield Step(t, conn, opened=False)


def _capture_frames(sess: dict[str, Any]) -> Iterator[dict[str, Any]]:
    sid = sess["info"]["id"]
    yield {"type": "hello", "protocol": p.PROTOCOL, "agent": sess.get("agent", ""), "session": sess["info"], "config": sess.get("config", {}), "lost": sess.get("lost", 0)}
    for tool in sess.get("tools", []):
        frame = {"type": "tool", "session": sid, "change": "registered", "name": tool["name"], "at": tool["registeredAt"], "schemaBytes": tool["schemaBytes"], "internal": tool.get("internal", False)}
        for key in ("descriptor", "annotationsSent", "annotationsKept", "rejected"):
            if tool.get(key) is not None:
                frame[key] = tool[key]
        yield frame
    for entry in sess.get("timeline", []):
        if entry["kind"] not in ("register", "unregister", "rejected", "attach", "reconnect", "disconnected", "phase", "bye", "error"):
            yield {"type": "event", "session": sid, "at": entry["at"], "kind": entry["kind"], "detail": entry.get("detail", {})}
    facts = sess.get("facts", {})
    spans = [dict(s, **facts.get(str(s["seq"]), {})) for s in sess["report"]["spans"]]
    for i in range(0, len(spans), p.MAX_SPANS_PER_FRAME):
        yield {"type": "spans", "session": sid, "spans": spans[i : i + p.MAX_SPANS_PER_FRAME]}
    calls = [{k: c[k] for k in ("seq", "tool", "invokedAt", "depth", "parent")} for c in sess.get("inflight", [])]
    if calls:
        yield {"type": "start", "session": sid, "calls": calls}
    counted = {t["name"]: {"measured": t.get("measured", True), "counted": t.get("counted", 0)} for t in sess.get("tools", [])
               if not t.get("measured", True) or t.get("counted", 0)}
    if sess.get("unsampledCalls") or counted:
        yield {"type": "ledger", "session": sid, "rev": 1,
               "ledger": {"sessionId": sid, "tools": counted, "totals": {"unsampledCalls": sess.get("unsampledCalls", 0)}}}
    for tool in sess.get("tools", []):
        if tool.get("unregisteredAt") is not None:
            yield {"type": "tool", "session": sid, "change": "unregistered", "name": tool["name"], "at": tool["unregisteredAt"]}
    if sess.get("status"):
        yield dict(sess["status"], type="status")


def replay_into(store: Store, steps: list[Step]) -> None:
    """Apply every step now (headless replay)."""
    for step in steps:
        apply_step(store, step)


def apply_step(store: Store, step: Step) -> None:
    store.check_resume = False  # the log holds accepted frames only, and never a resume secret
    if step.opened is True:
        store.connect(step.conn)
    elif step.opened is False:
        store.disconnect(step.conn)
    elif step.frame is not None:
        if step.conn not in store.connections:
            store.connect(step.conn)
        store.apply(step.conn, step.frame)


def close_all(store: Store) -> None:
    """After the last step nothing is connected any more (a log cut by a crash has no close lines)."""
    for conn in list(store.connections):
        store.disconnect(conn)


def load_store(path: Path, buffer: int = 500) -> Store:
    store = Store(buffer=buffer)
    replay_into(store, read_steps(path))
    close_all(store)
    return store
