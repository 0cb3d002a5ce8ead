"""`wmcp-top diagnose` on every kind of file, as a user runs it (a subprocess): crafted files are one line and
exit 2 with memory bounded by the line cap (the reader is replay's); another wmcp-top file is named with the
command that reads it; a report alone says which rules could not run and `--fail-over` never passes on it; a
report beside its capture finds what the capture finds; `--json` is valid JSON whatever the page named its tools."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from relay_bridge.cli import write_json
from relay_bridge.core import protocol as p
from relay_bridge.core import synth
from relay_bridge.core.store import Store
from relay_bridge.exports.capture import build_capture
from relay_bridge.exports.report import build_report
from relay_bridge.relay.replay import MAX_LINE_BYTES
from tests.findings.test_diagnose import VALIDATOR
from tests.frames import frame
from tui.feed import demo_store

SHOP = "3f2a9c01"  # the demo's session with the image finding
# Runs the command as `wmcp-top` does and writes its peak RSS (KiB) beside, so stderr stays the command's own.
# VmHWM, not getrusage's ru_maxrss: Linux carries that across exec, so it would be the parent's (the test's) peak.
RSS_RUNNER = (
    "import re, sys\n"
    "from tui.cli import main\n"
    "code = main(sys.argv[2:])\n"
    "hwm = re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read()).group(1)\n"
    "open(sys.argv[1], 'w').write(hwm)\n"
    "sys.exit(code)\n"
)


def run(home: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], int]:
    env = dict(os.environ, WMCP_TOP_HOME=str(home))
    rss = home / "rss.txt"
    out = subprocess.run(
        [sys.executable, "-c", RSS_RUNNER, str(rss), "diagnose", *args], check=False, env=env, capture_output=True, text=True, timeout=600
    )
    return out, int(rss.read_text()) if rss.exists() else 0


def one_line_exit_2(out: subprocess.CompletedProcess[str]) -> str:
    assert out.returncode == 2, out
    assert out.stderr.startswith("wmcp-top: ") and len(out.stderr.strip().splitlines()) == 1, out.stderr
    assert "Traceback" not in out.stderr and not out.stdout
    return out.stderr


def test_crafted_files_are_one_line_and_exit_2_in_bounded_memory(tmp_path: Path) -> None:
    deep = 200_000
    crafted = {
        "bomb.json": b"[" * deep + b"]" * deep,
        "capture-bomb.json": b'{"format": "wmcp-top-capture/1", "sessions": ' + b"[" * deep + b"]" * deep + b"}",
        "report-bomb.json": b'{"format": "webmcp-perf-report/2", "session": {"id": "0a1b2c3d"}, "spans": ' + b"[" * deep + b"]" * deep + b"}",
        "log-bomb.jsonl": b'{"t": 1, "c": 1, "f": ' + b'{"a":' * 5000 + b"1" + b"}" * 5000 + b"}\n",
        "report-shape.json": json.dumps({"format": "webmcp-perf-report/2", "session": {"id": "0a1b2c3d"}, "spans": [1, "x", None]}).encode(),
    }
    for name, data in crafted.items():
        (tmp_path / name).write_bytes(data)
        out, _ = run(tmp_path, str(tmp_path / name))
        one_line_exit_2(out)
    # A 1 GB line, made without writing it (a sparse file: what is read of it is all the bytes there are).
    huge = tmp_path / "huge.jsonl"
    with huge.open("wb") as fh:
        fh.write(b'{"t": 1, "c": 1, "f": "')
        fh.seek(1024**3)
        fh.write(b'"}\n')
    out, rss_kib = run(tmp_path, str(huge))
    assert f"over {MAX_LINE_BYTES} bytes" in one_line_exit_2(out)
    assert rss_kib < 150 * 1024, f"{rss_kib} KiB for a 1 GB line: memory must follow the line cap"


def test_other_wmcp_top_files_are_named_with_the_command_that_reads_them(tmp_path: Path) -> None:
    store, _ = demo_store(10.0)
    findings = tmp_path / "findings.json"
    out, _ = run(tmp_path, str(tmp_path / "nothing.json"))
    one_line_exit_2(out)
    from relay_bridge.findings.document import session_findings

    write_json(findings, session_findings(list(store.sessions.values())))
    said = one_line_exit_2(run(tmp_path, str(findings))[0])
    assert "a findings document" in said and "diagnose's own output" in said
    (tmp_path / "footprint.json").write_text(json.dumps({"format": "wmcp-top-footprint/1"}))
    said = one_line_exit_2(run(tmp_path, str(tmp_path / "footprint.json"))[0])
    assert "a footprint report" in said and "wmcp-top footprint" in said
    (tmp_path / "budget.json").write_text(json.dumps({"format": "wmcp-top-budget/1", "tools": {}}))
    assert "wmcp-top bench --budget" in one_line_exit_2(run(tmp_path, str(tmp_path / "budget.json"))[0])
    (tmp_path / "odd.json").write_text(json.dumps({"format": "\x1b[2Jodd\u202e"}))
    said = one_line_exit_2(run(tmp_path, str(tmp_path / "odd.json"))[0])
    assert "\x1b" not in said and "\u202e" not in said and "odd" in said


def _demo_files(directory: Path, with_capture: bool) -> Path:
    store, _ = demo_store(30.0)  # the demo's pages send their facts
    directory.mkdir()
    report = directory / f"{SHOP}.json"
    write_json(report, build_report(store.sessions[SHOP]))
    if with_capture:
        write_json(directory / "capture.json", build_capture(store))
    return report


def test_a_report_alone_says_what_could_not_run_and_never_passes_fail_over(tmp_path: Path) -> None:
    report = _demo_files(tmp_path / "alone", with_capture=False)
    out, _ = run(tmp_path, str(report))
    assert out.returncode == 0, out.stderr
    assert "not run: images.reencode" in out.stdout and "carries no page facts" in out.stdout
    assert "schema.diverged (a report carries no tool descriptors" in out.stdout
    doc = json.loads(run(tmp_path, str(report), "--json")[0].stdout)
    VALIDATOR.validate(doc)
    assert {r["rule"] for r in doc["notRun"]} >= {"images.reencode", "bloat.whitespace", "repeats", "schema.enums"}
    assert not any(f["rule"] == "images.reencode" for f in doc["findings"])
    # Under any limit, a gate on a report that could not run every rule fails, and says why.
    gate, _ = run(tmp_path, str(report), "--fail-over", str(10**9))
    assert gate.returncode == 1 and "could not run" in gate.stderr and "capture or session log" in gate.stderr


def test_a_report_beside_its_capture_finds_what_the_capture_finds(tmp_path: Path) -> None:
    report = _demo_files(tmp_path / "run", with_capture=True)
    rep = json.loads(run(tmp_path, str(report), "--json")[0].stdout)
    cap = json.loads(run(tmp_path, str(report.parent / "capture.json"), "--json")[0].stdout)
    VALIDATOR.validate(rep)
    assert "notRun" not in rep
    mine = [(f["rule"], f["tools"], f["saving"]) for f in cap["findings"] if f["session"] == SHOP]
    assert ("images.reencode" in {r for r, _, _ in mine}) and [(f["rule"], f["tools"], f["saving"]) for f in rep["findings"]] == mine
    text, _ = run(tmp_path, str(report))
    assert "facts and descriptors from capture.json beside it" in text.stdout.splitlines()[0]
    gate, _ = run(tmp_path, str(report), "--fail-over", str(rep["total"]["tokens"]))
    assert gate.returncode == 0, gate.stderr


HOSTILE = {
    "c0": "a\x00b\x07c\x1b[2J",
    "c1": "d\x85e\x9bf\x90g",
    "del": "h\x7fi",
    "bidi": "j\u202ek\u2066l",
    "astral": "m\U000e0001n\U000e007fo\U0001d173p",
    "zero-width": "q\u200br\ufeffs",
    "markup": "[bold red]t[/]",
    "lone": "u\ud800v",
}


def test_json_is_valid_for_every_class_of_hostile_string(tmp_path: Path) -> None:
    sid = "bad0bad0"
    store = Store()
    store.connect(1)
    store.apply(1, frame(synth.hello(sid, "https://evil.test\x85\u202e")))
    for name in HOSTILE.values():
        # JSON text as a page sends it (a lone surrogate only exists there as an escape)
        text = json.dumps(synth.tool(sid, "NAME", 1.0, description="never called " * 40)).replace('"NAME"', json.dumps(name))
        decoded = p.decode(text)
        assert not isinstance(decoded, p.Rejection), decoded
        store.apply(1, decoded)
    names = set(store.sessions[sid].tools)  # as the relay keeps them (a lone surrogate as the decoder makes it)
    store.apply(1, frame(synth.tool(sid, "add", 1.0)))
    store.apply(1, frame(synth.spans_frame(sid, [synth.span(sid, i, "add", 10.0 + i * 100, 3.0) for i in range(12)])))
    assert len(names) == len(HOSTILE), names  # every class reaches the store, so the output is really tested
    write_json(tmp_path / "capture.json", build_capture(store))
    out, _ = run(tmp_path, str(tmp_path / "capture.json"), "--json")
    assert out.returncode == 0, out.stderr
    assert out.stdout.isascii()  # nothing the terminal's inert stream could rewrite
    doc = json.loads(out.stdout)
    VALIDATOR.validate(doc)
    shown = {t for f in doc["findings"] for t in f["tools"]}
    assert names <= shown, names - shown
    assert doc["sessions"][0]["origin"] == "https://evil.test\x85\u202e"
