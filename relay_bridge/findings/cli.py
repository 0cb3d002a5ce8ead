"""`wmcp-top diagnose FILE`: the ranked findings of a report, a capture or a session log.

Wiring contract (as the other headless lanes): `add_parser(subparsers)`, `run(args)` returns the exit code:
0, or 1 with `--fail-over TOKENS` when the findings together would save more than that (for CI); input that is
not a report, capture or log is one line on stderr and exit 2 (relay_bridge.errors.UsageError).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from relay_bridge.core.inert import inert_str
from relay_bridge.core.store import Store
from relay_bridge.errors import UsageError
from relay_bridge.exports.report import FORMAT as REPORT_FORMAT
from relay_bridge.findings.document import build_document
from relay_bridge.findings.engine import diagnose, total_tokens
from relay_bridge.findings.inputs import from_session
from relay_bridge.findings.text import evidence_text, saving_text, subject

# A report is replayed as the one-session capture it would be part of (replay's own capture reader).
from relay_bridge.relay.replay import (
    ReplayError,
    StepClock,
    _capture_steps,
    close_all,
    load_store,
    replay_into,
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


def load(path: Path) -> tuple[Store, str]:
    """The store the file rebuilds, and its kind (report, capture, log)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}") from None
    try:
        doc = json.loads(text)
    except ValueError:
        doc = None
    try:
        if isinstance(doc, dict) and doc.get("format") == REPORT_FORMAT:
            store = Store(clock=StepClock())
            replay_into(store, list(_capture_steps(path, _report_capture(doc))))
            close_all(store)
            return store, "report"
        store = load_store(path)
    except ReplayError as exc:
        raise UsageError(str(exc)) from None
    except (KeyError, TypeError, AttributeError) as exc:  # a document of the right format, wrongly shaped
        raise UsageError(f"{path}: not a readable report, capture or session log ({type(exc).__name__})") from None
    return store, "capture" if isinstance(doc, dict) else "log"


def run(args: argparse.Namespace) -> int:
    path = Path(args.file)
    store, kind = load(path)
    sessions = [from_session(s) for s in store.sessions.values()]
    findings = diagnose(sessions)
    total = total_tokens(findings)
    if args.diagnose_json:
        doc = build_document(sessions, findings, source=kind, label=path.name)
        print(json.dumps(doc, indent=1, ensure_ascii=False))
    else:
        print(
            f"{len(findings)} finding{'s' if len(findings) != 1 else ''} in {len(sessions)} session"
            f"{'s' if len(sessions) != 1 else ''} of {inert_str(path.name, 120)} ({kind}); together ~{total} tok"
        )
        for n, f in enumerate(findings, 1):
            print(f"{n:>3}. {saving_text(f.saving)}  {f.rule}  {inert_str(subject(f), 120)} [{f.session}]")
            print(f"     {f.do}")
            where = f"  at {inert_str(f.at['path'], 80)} ({inert_str(f.at['constraint'], 40)})" if "path" in f.at else ""
            if f.severity:  # a security finding: its severity, where, why and the source of the rule
                where = f"  {f.severity} at {inert_str(f.at.get('pointer', ''), 80)}: {inert_str(f.reason, 160)} ({f.source})"
            print(f"     {evidence_text(f)}{where}")
    limit = args.diagnose_fail_over
    if limit is not None and total > limit:
        print(f"wmcp-top diagnose: the findings would save ~{total} tokens, over --fail-over {limit}", file=sys.stderr)
        return 1
    return 0
