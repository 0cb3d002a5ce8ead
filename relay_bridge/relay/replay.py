"""Rebuild a store from a session log (JSONL) or a capture, through the same `Store.apply` as a live run.

A log replays every accepted frame in order, so the aggregates equal what the relay had (crash recovery):
each frame's bytes are decoded exactly as they arrived (so every limit measures the same live and in replay),
the relay's refusals are counted again from the log's refusal lines, and the store's clock reads each line's
time (so timeline entries stamped by the relay get the times they had live). A torn last line of a part (a
crash, or a disk that filled) is skipped and said. A capture is turned back into frames: hello, tools, spans
with their facts, ledger totals, status, timeline.

Any file may be crafted: whatever it holds ends in one ReplayError (one line, exit 2), never a traceback, and a
log is read a line at a time, each at most MAX_LINE_BYTES, so memory follows the line cap, not the file.
"""

from __future__ import annotations

import glob
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import msgspec

from relay_bridge.core import protocol as p
from relay_bridge.core.store import Store
from relay_bridge.exports.kinds import CAPTURE, kind_of, wrong_kind


class ReplayError(Exception):
    pass


# A log line is one frame (at most p.MAX_FRAME_BYTES, re-encoded no larger) in a small envelope: a longer line is
# not one the relay wrote, and reading it whole would let a crafted file take any amount of memory.
MAX_LINE_BYTES = p.MAX_FRAME_BYTES + 4096
# A capture (exports) is one JSON document, read whole: at most this, nested at most MAX_CAPTURE_DEPTH deep
# (its own structure is a few levels; a descriptor inside it at most p.MAX_DESCRIPTOR_DEPTH).
MAX_CAPTURE_BYTES = 256 * 1024 * 1024
MAX_CAPTURE_DEPTH = p.MAX_DESCRIPTOR_DEPTH + 32


@dataclass(slots=True)
class Step:
    """One thing to replay: `frame` on connection `conn`, or a connection opening/closing. `t` is epoch ms."""

    t: float
    conn: int
    frame: p.AgentFrame | None = None
    opened: bool | None = None
    origin: str | None = None  # an opened socket's Origin header, as the live relay had it (its shares)
    refusal: tuple[str, str | None, bool, str | None, int] | None = None  # code, session, not owner, cap, count
    squat: str | None = None  # a session whose squatter's copy the live relay dropped for its owner
    note: str | None = None  # something the reader should be told (a torn line skipped)


class _LogLine(msgspec.Struct):
    c: int
    t: float = 0.0
    f: msgspec.Raw = msgspec.Raw()  # empty for lines without a frame (msgspec allows no Raw in a union)
    open: bool | None = None
    close: bool | None = None
    o: str | None = None
    rej: str | None = None
    n: int = 1
    s: str | None = None
    x: int = 0
    lim: str | None = None
    squat: str | None = None


_line_decoder = msgspec.json.Decoder(_LogLine)


def read_steps(path: Path) -> list[Step]:
    """Steps of a capture or a session log, told apart by content, not by file name."""
    return list(iter_steps(path))


def iter_steps(path: Path) -> Iterator[Step]:
    """`read_steps` one step at a time: a log is read a capped line at a time and never held whole, so a reader
    that applies each step as it comes (`diagnose`) holds one line, not the file. Errors found at the end (an
    empty file, nothing but a torn line) are raised after the steps before them."""
    whole = read_document(path)
    if whole is not None:
        if kind_of(whole) is not CAPTURE:
            # another of the project's files (a report, findings, a bench result): name it and its command
            raise ReplayError(wrong_kind(str(path), kind_of(whole), "a wmcp-top capture or session log"))
        yield from capture_steps(path, whole)
        return
    before: int | None = None
    last_t, any_step, any_frame = 0.0, False, False
    for part in log_parts(path):
        number = _part_number(part)
        if before is not None and number is not None and number > before + 1:
            # Parts are numbered without gaps as they are written: a gap is parts deleted (the run's size cap
            # deletes the oldest after the first). Said, so a replay never passes for the whole run.
            gone = f"{before + 1:03d}" if number == before + 2 else f"{before + 1:03d} to {number - 1:03d}"
            any_step = True
            yield Step(
                last_t,
                0,
                note=f"{part.name}: parts {gone} of this run are missing (deleted by the session "
                f"log's size cap, or by hand): what they held is not replayed",
            )
        before = number
        try:
            with part.open("rb") as fh:
                for step in _log_steps(part, _capped_lines(part, fh)):
                    any_step, last_t = True, step.t
                    any_frame = any_frame or step.note is None
                    yield step
        except OSError as exc:
            raise ReplayError(f"cannot read {part}: {exc.strerror}") from None
    if not any_step:
        raise ReplayError(f"{path}: empty file (not a session log or capture)")
    if not any_frame:  # nothing but a torn line: not a log at all
        raise ReplayError(f"{path}: not a wmcp-top session log or capture")


def read_document(path: Path) -> dict[str, Any] | None:
    """The file as one JSON document with a `format` (a capture, a report, any wmcp-top output), read under the
    capture's caps (size, nesting); None when it is a session log or no such document (then read it as a log:
    `read_steps`, a line at a time, each line capped). What `diagnose` reads first, the way replay does. A
    capture's sessions stay JSON text (msgspec.Raw) until `capture_steps` reaches each: a 59 MB capture of 64
    sessions decoded whole took 270 MB."""
    try:
        with path.open("rb") as fh:
            first = fh.readline(MAX_LINE_BYTES + 1)
        size = path.stat().st_size
    except OSError as exc:
        raise ReplayError(f"cannot read {path}: {exc.strerror}") from None
    return None if _is_log_line(first) else _capture_doc(path, size)


def capture_steps(path: Path, doc: dict[str, Any]) -> Iterator[Step]:
    """The steps of a capture document already read (`read_document`), one at a time; each session is decoded
    when its turn comes and let go once its steps are out, so a reader applying them holds the store and the
    file's bytes, not the file decoded."""
    sessions = doc.get("sessions")
    if isinstance(sessions, list):
        sessions.reverse()
        doc = dict(doc, sessions=_drained(sessions))
    try:
        yield from _capture_steps(path, doc)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, RecursionError) as exc:
        raise ReplayError(f"{path}: not a wmcp-top capture ({type(exc).__name__}: {str(exc)[:80]})") from None


def _drained(reversed_items: list[Any]) -> Iterator[Any]:
    while reversed_items:
        item = reversed_items.pop()
        yield msgspec.json.decode(item) if isinstance(item, msgspec.Raw) else item


def _is_log_line(line: bytes) -> bool:
    try:
        _line_decoder.decode(line.strip())
    except (msgspec.DecodeError, RecursionError):
        return False
    return True


def _capture_doc(path: Path, size: int) -> dict[str, Any] | None:
    """The file as a JSON object (a capture, or another kind named by kinds.kind_of), or None when it is not
    one (then it is read as a log)."""
    if size > MAX_CAPTURE_BYTES:
        return None
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ReplayError(f"cannot read {path}: {exc.strerror}") from None
    if data.lstrip()[:1] != b"{":
        return None
    if p.nested_deeper_than(data, MAX_CAPTURE_DEPTH):
        raise ReplayError(f"{path}: nested deeper than {MAX_CAPTURE_DEPTH} levels (not a wmcp-top capture)")
    try:
        top = msgspec.json.decode(data, type=dict[str, msgspec.Raw])  # validated whole, decoded a member at a time
        whole = {key: _sessions(raw) if key == "sessions" else msgspec.json.decode(raw) for key, raw in top.items()}
    except (msgspec.DecodeError, RecursionError):  # not JSON, or not an object
        return None
    return whole if kind_of(whole) is not None or "format" in whole else None


def _sessions(raw: msgspec.Raw) -> Any:
    """A capture's sessions: a list of each session's JSON text (decoded by `capture_steps` in turn), or the value
    decoded when it is no list (then the capture is refused as it would be whole)."""
    try:
        return msgspec.json.decode(raw, type=list[msgspec.Raw])
    except msgspec.ValidationError:
        return msgspec.json.decode(raw)


def _capped_lines(path: Path, fh: BinaryIO) -> Iterator[bytes]:
    """The file's lines, one at a time; a line over MAX_LINE_BYTES ends the replay (never read whole)."""
    n = 0
    while line := fh.readline(MAX_LINE_BYTES + 1):
        n += 1
        if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
            raise ReplayError(f"{path}:{n}: a line over {MAX_LINE_BYTES} bytes (not a wmcp-top session log line)")
        yield line


def log_parts(path: Path) -> list[Path]:
    """A rotated log is one run in several parts (`session-STAMP-001.jsonl`, `-002`, …): read them all, in order,
    from the part named on."""
    match = re.fullmatch(r"(session-.+)-(\d{3,})\.jsonl", path.name)
    if not match:
        return [path]
    prefix, first = match.group(1), int(match.group(2))
    # Numbers grow past 999 (`-1000`) in a long run: matched as numbers, ordered as numbers, not as names.
    parts = [
        (number, p) for p in path.parent.glob(f"{glob.escape(prefix)}-*.jsonl") if (number := _part_number(p, prefix)) is not None and number >= first
    ]
    return [p for _, p in sorted(parts)]


def _part_number(path: Path, prefix: str | None = None) -> int | None:
    match = re.fullmatch(re.escape(prefix) + r"-(\d{3,})\.jsonl" if prefix else r"session-.+-(\d{3,})\.jsonl", path.name)
    return int(match.group(1)) if match else None


def _log_steps(path: Path, lines: Iterable[bytes]) -> Iterator[Step]:
    t = 0.0
    torn: tuple[int, int] | None = None  # a line that did not decode: fine only if it is the last
    for n, line in enumerate(lines, 1):
        line = line.strip()
        if not line:
            continue
        if torn is not None:
            raise ReplayError(f"{path}:{torn[0]}: not a wmcp-top session log line")
        try:
            rec = _line_decoder.decode(line)
        except (msgspec.DecodeError, RecursionError):
            torn = (n, len(line))
            continue
        t = rec.t
        if rec.open or rec.close:
            yield Step(rec.t, rec.c, opened=bool(rec.open), origin=rec.o)
        elif rec.rej is not None:
            yield Step(rec.t, rec.c, refusal=(rec.rej, rec.s, bool(rec.x), rec.lim, rec.n))
        elif rec.squat is not None:
            yield Step(rec.t, rec.c, squat=rec.squat)
        elif len(rec.f):
            frame = p.decode(bytes(rec.f))  # the bytes as they arrived: measured exactly as live
            if isinstance(frame, p.Rejection):
                raise ReplayError(f"{path}:{n}: {frame.message}")
            yield Step(rec.t, rec.c, frame)
        else:
            raise ReplayError(f"{path}:{n}: not a wmcp-top session log line")
    if torn is not None:
        # A torn last line (a crash, or a disk that filled mid-line): everything before it counts.
        yield Step(t, 0, note=f"{path.name}:{torn[0]}: skipped a torn last line ({torn[1]} bytes)")


def _capture_steps(path: Path, doc: dict[str, Any]) -> Iterator[Step]:
    if doc.get("format") != "wmcp-top-capture/1":
        raise ReplayError(f"{path}: not a wmcp-top capture")
    t = float(doc.get("generatedAt", 0))
    for conn, sess in enumerate(doc.get("sessions", []), start=1):
        yield Step(t, conn, opened=True)
        for raw in _capture_frames(sess):
            frame = p.decode(msgspec.json.encode(raw))  # compact UTF-8: never larger than what was accepted live
            if isinstance(frame, p.Rejection):
                raise ReplayError(f"{path}: session {conn}: {frame.message}")
            yield Step(t, conn, frame)
        if sess.get("state") == "ended":
            bye = p.decode(msgspec.json.encode({"type": "bye", "session": sess["info"]["id"], "reason": "captured"}))
            if isinstance(bye, p.Rejection):  # a session id the capture's own frames were accepted with: never
                raise ReplayError(f"{path}: session {conn}: {bye.message}")
            yield Step(t, conn, bye)
        elif sess.get("state") != "live":
            yield Step(t, conn, opened=False)


def _capture_frames(sess: dict[str, Any]) -> Iterator[dict[str, Any]]:
    sid = sess["info"]["id"]
    yield {
        "type": "hello",
        "protocol": p.PROTOCOL,
        "agent": sess.get("agent", ""),
        "session": sess["info"],
        "config": sess.get("config", {}),
        "lost": sess.get("lost", 0),
    }
    for tool in sess.get("tools", []):
        frame = {
            "type": "tool",
            "session": sid,
            "change": "registered",
            "name": tool["name"],
            "at": tool["registeredAt"],
            "schemaBytes": tool["schemaBytes"],
            "internal": tool.get("internal", False),
        }
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
    items = [{"seq": int(seq), "facts": f} for seq, f in sess.get("diagnosisFacts", {}).items()]
    for i in range(0, len(items), p.MAX_FACTS_PER_FRAME):
        yield {"type": "facts", "session": sid, "items": items[i : i + p.MAX_FACTS_PER_FRAME]}
    calls = [{k: c[k] for k in ("seq", "tool", "invokedAt", "depth", "parent")} for c in sess.get("inflight", [])]
    if calls:
        yield {"type": "start", "session": sid, "calls": calls}
    counted = {
        t["name"]: {"measured": t.get("measured", True), "counted": t.get("counted", 0)}
        for t in sess.get("tools", [])
        if not t.get("measured", True) or t.get("counted", 0)
    }
    if sess.get("unsampledCalls") or counted:
        yield {
            "type": "ledger",
            "session": sid,
            "rev": 1,
            "ledger": {"sessionId": sid, "tools": counted, "totals": {"unsampledCalls": sess.get("unsampledCalls", 0)}},
        }
    for tool in sess.get("tools", []):
        if tool.get("unregisteredAt") is not None:
            yield {"type": "tool", "session": sid, "change": "unregistered", "name": tool["name"], "at": tool["unregisteredAt"]}
    if sess.get("status"):
        yield dict(sess["status"], type="status")


class StepClock:
    """The store's clock during a replay: the time of the step being applied, so what the store stamps (a call
    ended by its session's end, relay-side timeline entries) carries the log's time, not the replay's."""

    def __init__(self) -> None:
        self.ms = 0.0

    def time(self) -> float:
        return self.ms / 1000

    def monotonic(self) -> float:
        return self.ms / 1000


def replay_into(store: Store, steps: list[Step]) -> list[str]:
    """Apply every step now (headless replay); return the notes to tell the reader."""
    return [note for step in steps if (note := apply_step(store, step)) is not None]


def apply_step(store: Store, step: Step) -> str | None:
    """Apply one step; return its note, if it has one (the caller says it)."""
    store.check_resume = False  # the log holds accepted frames only, and never a resume secret
    if step.note is not None:
        return step.note
    if isinstance(store.clock, StepClock) and step.t:
        store.clock.ms = step.t
    if step.refusal is not None:
        code, session, not_owner, cap, n = step.refusal
        store.count_refusal(step.conn, code, session, not_owner, cap, n)
    elif step.squat is not None:
        store.drop_squat(step.squat)
    elif step.opened is True:
        store.connect(step.conn, step.origin)
    elif step.opened is False:
        store.disconnect(step.conn)
    elif step.frame is not None:
        if step.conn not in store.connections:
            store.connect(step.conn)
        store.apply(step.conn, step.frame)
    return None


def close_all(store: Store) -> None:
    """After the last step nothing is connected any more (a log cut by a crash has no close lines): calls still
    open end there, at the last step's time."""
    for conn in list(store.connections):
        store.disconnect(conn)


def load_store(path: Path, buffer: int = 500, notes: list[str] | None = None) -> Store:
    store = Store(buffer=buffer, clock=StepClock())
    said = replay_into(store, read_steps(path))
    if notes is not None:
        notes.extend(said)
    close_all(store)
    return store
