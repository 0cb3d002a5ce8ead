"""The exit's files under one site's flood (issue 48): four origins x 16 sessions, the same 1,024 tool names with
slightly different definitions (tests/findings/flood.py). What load cannot flip: `--report-on-exit DIR` writes
every session's report, the capture and the findings of them all, and `diagnose` on one report decodes only its
own session of the capture beside it, in bounded memory. Times are in tests/bench/test_findings_flood.py."""

from __future__ import annotations

import json
from pathlib import Path

from relay_bridge.cli import write_reports
from relay_bridge.core.store import Store
from tests.findings.flood import ORIGINS, SESSIONS_PER_ORIGIN, flood_into
from tests.findings.test_diagnose_files import run


def test_the_exit_writes_every_sessions_report_under_the_flood_and_diagnose_reads_one_beside_it(tmp_path: Path) -> None:
    """A report for each of the 64 sessions, the capture and the findings; `diagnose` on one report takes its
    session of the 59 MB capture beside it (decoded whole, the capture took 271 MB)."""
    store = Store()
    flood_into(store)
    written = write_reports(store, tmp_path / "reports")
    assert {p.name for p in written} == {f"{sid}.json" for sid in store.sessions} | {"capture.json", "findings.json"}
    for sid, session in store.sessions.items():
        report = json.loads((tmp_path / "reports" / f"{sid}.json").read_text(encoding="utf-8"))
        assert report["session"]["id"] == sid and report["ledger"]["registeredTools"] == sorted(session.tools)
    capture = json.loads((tmp_path / "reports" / "capture.json").read_text(encoding="utf-8"))
    assert [s["info"]["id"] for s in capture["sessions"]] == list(store.sessions)
    del capture
    findings = json.loads((tmp_path / "reports" / "findings.json").read_text(encoding="utf-8"))
    assert len(findings["sessions"]) == len(ORIGINS) * SESSIONS_PER_ORIGIN and findings["findings"]
    sid = next(iter(store.sessions))
    out, rss_kib = run(tmp_path, str(tmp_path / "reports" / f"{sid}.json"), "--json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert [s["id"] for s in doc["sessions"]] == [sid] and "notRun" not in doc  # the capture's facts and descriptors
    assert rss_kib <= 160 * 1024, f"diagnose took {rss_kib // 1024} MB on a report beside the flood's capture"
