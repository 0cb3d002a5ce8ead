"""`wmcp-top diagnose FILE`: the ranked findings of a report, a capture or a session log.

Wiring contract (as the other headless lanes): `add_parser(subparsers)`, `run(args)` returns the exit code:
0, or 1 with `--fail-over TOKENS` when the findings together would save more than that, or when rules could not
run on the input (a report without its capture: no facts, no descriptors), so a CI gate never passes on missing
facts; input that is not a report, capture or log (another kind of file named with the command that reads it,
a crafted file) is one line on stderr and exit 2 (relay_bridge.errors.UsageError).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any, NamedTuple

import msgspec

from relay_bridge.core.inert import inert_str
from relay_bridge.core.store import Store
from relay_bridge.errors import UsageError
from relay_bridge.exports.capture import FORMAT as CAPTURE_FORMAT
from relay_bridge.exports.report import FORMAT as REPORT_FORMAT
from relay_bridge.findings.document import FORMAT as FINDINGS_FORMAT
from relay_bridge.findings.document import build_document, diagnosis
from relay_bridge.findings.engine import total_tokens
from relay_bridge.findings.inputs import from_session
from relay_bridge.findings.model import Finding
from relay_bridge.findings.text import evidence_text, saving_text, subject

# Files are read as replay reads them (a document whole under its caps, a log a capped line at a time); a report
# is replayed as the one-session capture it would be part of.
from relay_bridge.relay.replay import (
    ReplayError,
    Step,
    StepClock,
    apply_step,
    capture_steps,
    close_all,
    iter_steps,
    read_document,
)

COMMAND = "diagnose"


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        COMMAND,
        help="what to fix first: ranked findings, with what each fix saves, of a report, capture or session log",
        description="Read a report (webmcp-perf-report/2), a capture (wmcp-top-capture/1) or a session log and list "
        "the findings ranked by what their fixes save (docs/diagnosis.md has every rule's formula). "
        "Exit code 1 with --fail-over when the total saving is over the limit; 2 for input it cannot read.",
    )
    parser.add_argument("file", help="a report, capture or session log (session-*.jsonl)")
    parser.add_argument("--json", dest="diagnose_json", action="store_true", help="print the findings document (wmcp-top-findings/1)")
    parser.add_argument(
        "--fail-over",
        dest="diagnose_fail_over",
        type=tokens_type,
        default=None,
        metavar="TOKENS",
        help="exit 1 when the findings together would save more than TOKENS tokens (CI)",
    )
    return parser


def tokens_type(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number of tokens: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError("must be 0 or more")
    return value


# Other files wmcp-top reads or writes: what each is, and the command that reads it (said instead of "not readable").
OTHER_KINDS = {
    FINDINGS_FORMAT: ("a findings document", "diagnose's own output: diagnose the report, capture or session log it came from"),
    "wmcp-top-footprint/1": ("a footprint report", "wmcp-top footprint writes it; open its HTML, or run footprint on a capture"),
    "wmcp-top-compare/1": ("a comparison", "wmcp-top compare writes it"),
    "wmcp-top-thresholds/1": ("a thresholds file", "wmcp-top compare --thresholds reads it"),
    "wmcp-top-budget/1": ("a bench budget", "wmcp-top bench --budget reads it"),
}
# What a report (closed v2: spans and the ledger's tool sizes) cannot hold, and so which rules cannot run on it.
NO_FACTS = "a report (webmcp-perf-report/2) carries no page facts"
NO_DESCRIPTORS = "a report carries no tool descriptors"
REPORT_BLIND = (
    *(
        (rule, NO_FACTS)
        for rule in ("images.reencode", "bloat.whitespace", "bloat.repeated-keys", "bloat.base64", "repeats", "errors.schema", "errors.refused")
    ),
    *((rule, NO_DESCRIPTORS) for rule in ("schema.description", "schema.enums", "schema.similar", "schema.diverged")),
)
BESIDE = "capture.json"  # what `--report-on-exit DIR` and `replay --report DIR` write beside each report


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _report_capture(doc: dict[str, Any]) -> dict[str, Any]:
    """A v2 report as a one-session capture: its spans, and its ledger's tools (sizes only: a report holds no
    descriptor), so the same replay rebuilds the numbers."""
    session, ledger = _object(doc.get("session")), _object(doc.get("ledger"))
    tools = _object(ledger.get("tools"))
    sid = session.get("id") or ledger.get("sessionId")
    if not isinstance(sid, str) or not isinstance(doc.get("spans"), list):
        raise UsageError("not a webmcp-perf-report/2: no session id or spans")
    return {
        "format": "wmcp-top-capture/1",
        "sessions": [
            {
                "report": {"spans": doc["spans"]},
                "info": {"id": sid, "origin": str(session.get("origin", "")), "userAgent": str(session.get("userAgent", ""))[:512]},
                "tools": [
                    {
                        "name": name,
                        "schemaBytes": t.get("schemaBytes", 0),
                        "registeredAt": t.get("registeredAt", 0),
                        "unregisteredAt": t.get("unregisteredAt"),
                        "internal": bool(t.get("internal", False)),
                    }
                    for name, t in tools.items()
                    if isinstance(t, dict)
                ],
                "state": "ended",
            }
        ],
    }


class Loaded(NamedTuple):
    sessions: list[Any]  # store sessions
    kind: str  # report, capture, log
    note: str = ""  # where the facts came from, when not the file itself
    not_run: tuple[tuple[str, str], ...] = ()  # rules that could not run, and why


def _replayed(path: Path, steps: Iterable[Step]) -> Store:
    """A store rebuilt a step at a time (never a list of the file's frames)."""
    store = Store(clock=StepClock())
    try:
        for step in steps:
            apply_step(store, step)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, RecursionError) as exc:  # the right format, wrongly shaped
        raise UsageError(f"{path}: not a readable report, capture or session log ({type(exc).__name__})") from None
    close_all(store)
    return store


class _Info(msgspec.Struct):
    id: Any = None


class _Session(msgspec.Struct):
    info: _Info = msgspec.field(default_factory=_Info)


def _session_id(session: Any) -> Any:
    """The id of a capture's session, as read_document left it (JSON text) or decoded; the rest is skipped unread."""
    if isinstance(session, dict):
        return _object(session.get("info")).get("id")
    try:
        return msgspec.json.decode(session, type=_Session).info.id
    except msgspec.DecodeError:
        return None


def _beside(path: Path, sid: str) -> Any | None:
    """The report's session from the capture written beside it (`--report-on-exit DIR`), which holds the facts and
    descriptors a report cannot; None when there is none, or it does not hold that session."""
    other = path.parent / BESIDE
    if other.resolve() == path.resolve() or not other.is_file():
        return None
    try:
        doc = read_document(other)
        if doc is None or doc.get("format") != CAPTURE_FORMAT or not isinstance(doc.get("sessions"), list):
            return None
        # only the report's own session is decoded and replayed: a flood's capture holds 64 of 1,024 definitions
        doc["sessions"] = [s for s in doc["sessions"] if _session_id(s) == sid]
        return _replayed(other, capture_steps(other, doc)).sessions.get(sid)
    except (ReplayError, UsageError):
        return None  # an unreadable neighbour: the report alone, saying what it lacks


def load(path: Path) -> Loaded:
    """The sessions the file rebuilds, read through replay's readers: a document whole under the capture's caps
    (size, nesting), a log a capped line at a time; anything else is one line (UsageError)."""
    try:
        doc = read_document(path)
        if doc is None:
            return Loaded(list(_replayed(path, iter_steps(path)).sessions.values()), "log")
        fmt = doc.get("format")
        if fmt == CAPTURE_FORMAT:
            return Loaded(list(_replayed(path, capture_steps(path, doc)).sessions.values()), "capture")
        if fmt == REPORT_FORMAT:
            store = _replayed(path, capture_steps(path, _report_capture(doc)))
            sid = next(iter(store.sessions), "")
            full = _beside(path, sid)
            if full is not None:
                return Loaded([full], "report", note=f"facts and descriptors from {BESIDE} beside it")
            return Loaded(list(store.sessions.values()), "report", not_run=REPORT_BLIND)
    except ReplayError as exc:
        raise UsageError(str(exc)) from None
    if isinstance(fmt, str) and fmt in OTHER_KINDS:
        what, reader = OTHER_KINDS[fmt]
        raise UsageError(f"{path} is {what} ({fmt}), not a report, capture or session log: {reader}")
    shown = inert_str(fmt, 60) if isinstance(fmt, str) else "none"
    raise UsageError(f"{path}: a JSON document of format {shown}, not a report, capture or session log")


def json_text(doc: Any) -> str:
    """The document as JSON any parser reads, whatever page text it holds: every character past ASCII escaped
    (so no C1 control, NEL, bidi or invisible character, and no lone surrogate, reaches the stream raw, and the
    terminal's inert stream has nothing to rewrite), DEL too (JSON leaves it raw; outside strings it cannot occur)."""
    return json.dumps(doc, indent=1, ensure_ascii=True).replace("\x7f", "\\u007f")


def _who(f: Finding) -> str:
    if f.sessions:  # drawn from several sessions: every one, and their origins
        origins = ", ".join(inert_str(o, 60) for o in f.origins)
        return f"[{', '.join(f.sessions)}; {origins}]"
    return f"[{f.session}]"


def run(args: argparse.Namespace) -> int:
    path = Path(args.file)
    loaded = load(path)
    sessions = [from_session(s) for s in loaded.sessions]
    findings, coverage = diagnosis(sessions)
    total = total_tokens(findings)
    if args.diagnose_json:
        doc = build_document(sessions, findings, source=loaded.kind, label=path.name, coverage=coverage, not_run=loaded.not_run)
        print(json_text(doc))
    else:
        via = f", {loaded.note}" if loaded.note else ""
        print(
            f"{len(findings)} finding{'s' if len(findings) != 1 else ''} in {len(sessions)} session"
            f"{'s' if len(sessions) != 1 else ''} of {inert_str(path.name, 120)} ({loaded.kind}{via}); together ~{total} tok"
        )
        for n, f in enumerate(findings, 1):
            print(f"{n:>3}. {saving_text(f.saving)}  {f.rule}  {inert_str(subject(f), 120)} {_who(f)}")
            print(f"     {f.do}")
            where = f"  at {inert_str(f.at['path'], 80)} ({inert_str(f.at['constraint'], 40)})" if "path" in f.at else ""
            if f.severity:  # a security finding: its severity, where, why and the source of the rule
                where = f"  {f.severity} at {inert_str(f.at.get('pointer', ''), 80)}: {inert_str(f.reason, 160)} ({f.source})"
            print(f"     {evidence_text(f)}{where}")
        for why in dict.fromkeys(why for _, why in loaded.not_run):
            rules = ", ".join(rule for rule, reason in loaded.not_run if reason == why)
            print(f"not run: {rules} ({why}: diagnose the capture or session log of this run)")
        if not coverage["complete"]:
            print(
                f"duplicates: compared {coverage['compared']} of {coverage['tools']} tool definitions (at most {coverage['limits']['tools']}, shared between origins)"
            )
    limit = args.diagnose_fail_over
    if limit is not None and total > limit:
        print(f"wmcp-top diagnose: the findings would save ~{total} tokens, over --fail-over {limit}", file=sys.stderr)
        return 1
    if limit is not None and loaded.not_run:
        # Passing would say "under the limit" about rules that never ran: a CI gate must not pass on missing facts.
        print(
            f"wmcp-top diagnose: --fail-over cannot pass: {len(loaded.not_run)} rules could not run ({NO_FACTS}; "
            f"{NO_DESCRIPTORS}): diagnose the capture or session log",
            file=sys.stderr,
        )
        return 1
    return 0
