"""The diagnosis under a hostile page: its tool names printed by `wmcp-top diagnose` stay inert, its facts cannot
flood the findings or carry text past their caps, and absurd numbers give no negative or broken saving.

The facts frame itself (its decoding and caps) is branch diag's; these attack what the findings engine does with
whatever facts reach the store, through the same accessor (`session.facts`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from relay_bridge.cli import write_json
from relay_bridge.core import synth
from relay_bridge.core.store import Store
from relay_bridge.exports.capture import build_capture
from relay_bridge.findings import diagnose, from_session
from relay_bridge.findings.document import session_findings
from relay_bridge.findings.errors import MAX_AT, MAX_SCHEMA_GROUPS
from tests.findings.builders import Facts, ImageFacts, RepeatFacts, SchemaFacts, attach
from tests.frames import frame

SID = "bad0bad0"
EVIL = "\x1b]52;c;cHduZWQ=\x07\x1b[2Jwipe\u202e"  # an OSC 52 clipboard write, a screen clear, a bidi override


def hostile_store(calls: int = 40) -> Store:
    store = Store()
    store.connect(1)
    store.apply(1, frame(synth.hello(SID, "https://evil.test")))
    store.apply(1, frame(synth.tool(SID, EVIL, 1.0, description="x " * 2000)))  # heavy, never called
    store.apply(1, frame(synth.tool(SID, "add", 1.0)))
    spans = [synth.span(SID, i, "add", 10.0 + i * 2000, 3.0, gap=None if i == 0 else 1997.0) for i in range(calls)]
    store.apply(1, frame(synth.spans_frame(SID, spans)))
    return store


def test_tool_names_printed_by_diagnose_are_inert(tmp_path: Path) -> None:
    store = hostile_store()
    assert store.sessions[SID].tools[EVIL].registered
    write_json(tmp_path / "capture.json", build_capture(store))
    env = dict(os.environ, WMCP_TOP_HOME=str(tmp_path))
    out = subprocess.run(
        [sys.executable, "-m", "tui.cli", "diagnose", str(tmp_path / "capture.json")],
        check=False,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert "schema.unused" in out.stdout and "wipe" in out.stdout  # the finding is there, its name shown...
    assert "\x1b" not in out.stdout and "\x07" not in out.stdout and "\u202e" not in out.stdout  # ...inert


def test_facts_cannot_flood_the_findings_or_carry_long_text() -> None:
    store = hostile_store()
    session = store.sessions[SID]
    # Every call breaks "its own" constraint at its own pointer, a kilobyte long.
    attach(session, {i: Facts(schema=SchemaFacts(1, f"k{i}", "/" + "p" * 1000 + str(i))) for i in range(40)})
    found = [f for f in diagnose([from_session(session)]) if f.rule == "errors.schema"]
    assert len(found) == MAX_SCHEMA_GROUPS
    assert all(len(f.at["path"]) <= MAX_AT and len(f.at["constraint"]) <= MAX_AT for f in found)
    assert sum(f.evidence["calls"] for f in found) + found[-1].evidence["callsBreakingOtherConstraints"] == 40


def test_absurd_numbers_and_stray_seqs_give_sane_savings() -> None:
    store = hostile_store()
    session = store.sessions[SID]
    attach(
        session,
        {
            0: Facts(image=ImageFacts("image/png", 10**9, 10**9, 10, 10**12, 10**12, 0, -5)),  # "fitted" bigger than the original
            1: Facts(repeat=RepeatFacts(10**12)),  # repeats a call that never was
            2: Facts(repeat=RepeatFacts(2)),  # repeats itself
            3: Facts(repeat=RepeatFacts(1)),  # repeats an earlier call: the one real repeat
            10**9: Facts(image=ImageFacts("text/html", 1, 1, 10**12, 1, 1, 1, 1)),  # a seq no span has
        },
    )
    findings = diagnose([from_session(session)])
    assert all(f.saving.tokens >= 0 and (f.saving.bytes or 0) >= 0 and (f.saving.ms or 0) >= 0 for f in findings)
    assert not any(f.rule == "images.reencode" for f in findings)  # nothing to save; the stray seq is never read
    [repeat] = [f for f in findings if f.rule == "repeats"]  # only the earlier call's repeat counts, never followed
    assert repeat.evidence["repeats"] == 1
    json.dumps(session_findings([session]), allow_nan=False)  # the document stays valid JSON


def test_schema_facts_without_a_constraint_or_pointer_are_counted() -> None:
    """The page may send only a count (diag's SchemaFacts makes constraint and path optional)."""
    store = hostile_store()
    session = store.sessions[SID]
    attach(session, {i: Facts(schema=SchemaFacts(2)) for i in range(3)})
    [f] = [f for f in diagnose([from_session(session)]) if f.rule == "errors.schema"]
    assert f.evidence["calls"] == 3 and f.evidence["violations"] == 6 and f.at == {"constraint": "", "path": ""}
