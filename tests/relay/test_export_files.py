"""Export files as bytes (relay_bridge.exports.jsonfile): msgspec's encoder writes what Python's indented writer
wrote before it, the same JSON value and, but for a number's exponent, the same bytes, for the demo's reports,
capture and findings and for every class of hostile string; a capture built lazily (a session at a time, as the
exit writes it) is the same file as one built whole."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from relay_bridge.cli import write_json, write_reports
from relay_bridge.core import protocol as p
from relay_bridge.core import synth
from relay_bridge.core.store import Store
from relay_bridge.exports.capture import build_capture
from relay_bridge.exports.jsonfile import indented
from relay_bridge.exports.report import build_report
from relay_bridge.findings.document import session_findings
from tests.findings.test_diagnose_files import HOSTILE
from tests.frames import frame
from tui.feed import demo_store

SID = "bad0bad0"


def before(doc: Any) -> bytes:
    """What write_json wrote until it used msgspec: Python's indented writer."""
    return json.dumps(doc, indent=1, ensure_ascii=False).encode()


def hostile_store() -> Store:
    store, _ = demo_store(30.0)  # images, bloat, repeats, refusals: every kind of fact and finding
    store.connect(99, "https://evil.test\x85\u202e")
    store.apply(99, frame(synth.hello(SID, "https://evil.test\x85\u202e")))
    for name in HOSTILE.values():
        text = json.dumps(synth.tool(SID, "NAME", 1.0, description='a "quoted" \\ path\n\ttab')).replace('"NAME"', json.dumps(name))
        decoded = p.decode(text)
        assert not isinstance(decoded, p.Rejection), decoded
        store.apply(99, decoded)
    return store


def test_every_export_is_the_bytes_pythons_writer_wrote() -> None:
    store = hostile_store()
    sessions = list(store.sessions.values())
    assert len(store.sessions[SID].tools) == len(HOSTILE)  # every class of string is in the documents
    docs = [
        *(build_report(s, generated_at=1.0) for s in sessions),
        build_capture(store, 1.0),
        session_findings(sessions, generated_at=1.0),
    ]
    for doc in docs:
        assert b"".join(indented(doc)) == before(doc)


def test_numbers_keep_their_value_where_their_spelling_changes() -> None:
    doc = {"a": [1e16, 1e-7, 2**70, -(2**64), -0.0, 0.1, 5e-324, 1.5e300], "b": {"c": [{"d": 1e22}], "e": [], "f": {}}}
    written = b"".join(indented(doc))
    assert json.loads(written) == doc
    assert written.splitlines()[:2] == before(doc).splitlines()[:2] and written.count(b"\n") == before(doc).count(b"\n")


def test_a_lazy_capture_is_the_file_a_whole_one_is(tmp_path: Path) -> None:
    store = hostile_store()
    lazy = build_capture(store, 1.0, lazy=True)
    assert not isinstance(lazy["sessions"], list)  # built as it is written
    write_json(tmp_path / "capture.json", lazy)
    assert (tmp_path / "capture.json").read_bytes() == before(build_capture(store, 1.0))
    write_json(tmp_path / "empty.json", build_capture(Store(), 1.0, lazy=True))
    assert (tmp_path / "empty.json").read_bytes() == before(build_capture(Store(), 1.0))


def test_the_exit_writes_every_document_as_its_json_value(tmp_path: Path) -> None:
    store = hostile_store()
    written = write_reports(store, tmp_path)
    assert {p.name for p in written} == {f"{sid}.json" for sid in store.sessions} | {"capture.json", "findings.json"}
    for sid, session in store.sessions.items():
        report = json.loads((tmp_path / f"{sid}.json").read_text(encoding="utf-8"))
        expected = build_report(session, generated_at=1.0)
        report["session"]["generatedAt"] = expected["session"]["generatedAt"]
        assert report == json.loads(before(expected))
    capture = json.loads((tmp_path / "capture.json").read_text(encoding="utf-8"))
    assert [s["info"]["id"] for s in capture["sessions"]] == list(store.sessions)
