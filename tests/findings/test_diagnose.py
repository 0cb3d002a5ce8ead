"""`wmcp-top diagnose FILE` as a user runs it (a subprocess) on a report, a capture and a real relay's session
log; `--json` against the findings schema; `--fail-over` for CI; bad input one line and exit 2. Also the
document's schema itself, and that the dashboard's `e` writes the findings beside the report."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
from websockets.sync.client import connect

from relay_bridge.cli import write_json
from relay_bridge.core import synth
from relay_bridge.core.lint import RULES
from relay_bridge.exports.capture import build_capture
from relay_bridge.exports.report import build_report
from relay_bridge.findings import diagnose, from_session
from relay_bridge.findings.document import build_document
from tests.findings.builders import (
    BloatFacts,
    Facts,
    ImageFacts,
    RefusedFacts,
    RepeatFacts,
    SchemaFacts,
    attach,
)
from tests.relay_thread import RelayThread
from tui.feed import demo_store

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "relay_bridge" / "schema" / "findings.v1.json").read_text())
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA, format_checker=jsonschema.FormatChecker())
SID = "5e55a0d1"


def run(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, WMCP_TOP_HOME=str(home))
    return subprocess.run([sys.executable, "-m", "tui.cli", "diagnose", *args], check=False, env=env, capture_output=True, text=True, timeout=60)


def unused_heavy_session() -> list[dict]:
    """A page with one tool it calls and one 3 KB tool it never calls (what the log and files below hold)."""
    frames = [
        synth.hello(SID, "https://shop.test"),
        synth.tool(SID, "search", 1.0, description="Search orders."),
        synth.tool(SID, "bulk_import", 1.0, description="Import orders from a spreadsheet. " * 90),
    ]
    spans = [synth.span(SID, i, "search", 10.0 + i * 3000, 4.0, gap=None if i == 0 else 2996.0) for i in range(12)]
    return [*frames, synth.spans_frame(SID, spans)]


def test_a_real_relays_session_log_diagnosed_with_exit_codes(tmp_path: Path) -> None:
    relay = RelayThread(tmp_path)
    try:
        with connect(relay.ws_url) as ws:
            ws.recv()  # welcome
            for frame in unused_heavy_session():
                ws.send(json.dumps(frame))
            relay.wait_for(lambda snap: snap["sessions"].get(SID, {}).get("totals", {}).get("calls") == 12)
    finally:
        relay.close()
    [log] = sorted((tmp_path / "logs").glob("session-*.jsonl"))
    out = run(tmp_path, str(log))
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    # the saving rules' two findings, and the security review's on the same definitions (budgets, hints)
    assert lines[0].startswith("4 findings in 1 session") and "schema.unused" in lines[1] and "bulk_import" in lines[1]
    assert "time.host-gaps" in out.stdout
    doc = json.loads(run(tmp_path, str(log), "--json").stdout)
    VALIDATOR.validate(doc)
    unused = doc["findings"][0]
    assert unused["rule"] == "schema.unused" and unused["saving"]["scope"] == "conversation"
    assert doc["total"]["tokens"] == unused["saving"]["tokens"] > 700 and doc["source"]["kind"] == "log"
    # CI: over the limit is exit 1 with one line saying so; at or under it, 0.
    over = run(tmp_path, str(log), "--fail-over", "100")
    assert over.returncode == 1 and over.stderr.strip().endswith("over --fail-over 100")
    assert run(tmp_path, str(log), "--fail-over", str(doc["total"]["tokens"])).returncode == 0


def test_a_report_and_a_capture_are_diagnosed_too(tmp_path: Path) -> None:
    store, _ = demo_store(30.0)
    write_json(tmp_path / "capture.json", build_capture(store))
    write_json(tmp_path / "report.json", build_report(store.sessions["3f2a9c01"]))
    cap = json.loads(run(tmp_path, str(tmp_path / "capture.json"), "--json").stdout)
    rep = json.loads(run(tmp_path, str(tmp_path / "report.json"), "--json").stdout)
    VALIDATOR.validate(cap)
    VALIDATOR.validate(rep)
    assert len(cap["sessions"]) == len(store.sessions) and cap["source"]["kind"] == "capture"
    assert [s["id"] for s in rep["sessions"]] == ["3f2a9c01"] and rep["source"]["kind"] == "report"
    # The report's findings are the capture's for that session, bar what a report cannot hold: descriptors
    # (schema rules) and the page's diagnosis facts (images, bloat, repeats, schema violations, refusals).
    needs_more = ("schema.", "lint.", "images.", "bloat.", "repeats", "errors.")  # errors: a schema violation explains an error rate
    shop = [(f["rule"], f["tools"], f["saving"]) for f in cap["findings"] if f["session"] == "3f2a9c01" and not f["rule"].startswith(needs_more)]
    assert shop and shop == [(f["rule"], f["tools"], f["saving"]) for f in rep["findings"] if not f["rule"].startswith(needs_more)]
    assert any(f["rule"] == "images.reencode" for f in cap["findings"]), "the capture carries the page's facts"


def test_bad_input_is_one_line_and_exit_2(tmp_path: Path) -> None:
    cases = {
        "missing.json": None,
        "empty.jsonl": "",
        "junk.jsonl": "not json\nat all\n",
        "report.json": json.dumps({"format": "webmcp-perf-report/2"}),
        "array.json": "[1, 2]",
    }
    for name, text in cases.items():
        if text is not None:
            (tmp_path / name).write_text(text)
        out = run(tmp_path, str(tmp_path / name))
        assert out.returncode == 2, (name, out)
        assert len(out.stderr.strip().splitlines()) == 1 and out.stderr.startswith("wmcp-top: "), (name, out.stderr)
        assert "Traceback" not in out.stderr
    bad = run(tmp_path, str(tmp_path / "array.json"), "--fail-over", "-3")
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1


def test_the_document_schema_holds_every_rule_and_refuses_extras() -> None:
    """A document with one finding of every rule the vectors produce is valid; a field beyond the schema is not."""
    vectors = sorted((ROOT / "tests" / "vectors" / "findings").glob("*.json"))
    from tests.findings.builders import session_input

    sessions = [session_input(s) for p in vectors for s in json.loads(p.read_text())["sessions"]]
    doc = build_document(sessions, diagnose(sessions), source="capture", label="vectors")
    VALIDATOR.validate(doc)
    # the security review's rules have vectors of their own (tests/vectors/lint, read by tests/test_lint.py)
    review = {f"lint.{code}" for code, rule in RULES.items() if rule.review}
    saving_rules = {f["rule"] for f in doc["findings"] if not f["rule"].startswith("lint.")}
    assert saving_rules | review == set(SCHEMA["$defs"]["finding"]["properties"]["rule"]["enum"])
    doc["findings"][0]["body"] = "x"
    assert not VALIDATOR.is_valid(doc)


def test_the_facts_of_every_kind_leave_no_text_in_the_document() -> None:
    """The facts carry sizes, a JSON Schema keyword and a pointer: the document holds those and numbers only."""
    store, _ = demo_store(10.0)
    session = store.sessions["3f2a9c01"]
    seqs = [s.seq for s in session.spans()]
    attach(
        session,
        {
            seqs[0]: Facts(image=ImageFacts("image/png", 2000, 1000, 900_000, 300_000, 120_000, 1568, 784)),
            seqs[1]: Facts(bloat=BloatFacts(6000, 2000, 1500, 30, 0, 0, False), repeat=RepeatFacts(seqs[0])),
            seqs[2]: Facts(schema=SchemaFacts(1, "minimum", "/properties/qty"), refused=RefusedFacts("browser")),
        },
    )
    doc = build_document([from_session(session)], diagnose([from_session(session)]))
    VALIDATOR.validate(doc)
    for f in doc["findings"]:
        security = {"severity", "source", "reason"} if f["rule"].startswith("lint.") else set()
        assert set(f) <= {"rank", "rule", "session", "tools", "evidence", "do", "saving", "at"} | security
        assert all(isinstance(v, (int, float)) for v in f["evidence"].values())
