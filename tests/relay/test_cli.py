"""The headless command line as a user runs it: subprocesses, real sockets, files on disk."""

from __future__ import annotations

import json
import os
import re
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import jsonschema
import pytest
from websockets.sync.client import connect

from relay_bridge.core import synth
from relay_bridge.relay.auth import load_token
from tests.liveness import LIVENESS_S
from tests.wakeups import idle_wakes

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "relay_bridge" / "schema" / "report.v2.json").read_text())


def run(home: Path, *args: str, timeout: float = LIVENESS_S) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, WMCP_TOP_HOME=str(home))
    return subprocess.run([sys.executable, "-m", "tui.cli", *args], env=env, capture_output=True, text=True, timeout=timeout)


def start_relay(home: Path, *args: str) -> tuple[subprocess.Popen[str], int, str]:
    """`wmcp-top relay --port 0 ARGS` under `home`: the process, the port its first line names, and the token."""
    env = dict(os.environ, WMCP_TOP_HOME=str(home), PYTHONUNBUFFERED="1")
    proc = subprocess.Popen(
        [sys.executable, "-m", "tui.cli", "relay", "--port", "0", *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    port = int(re.search(r":(\d+)", proc.stdout.readline()).group(1))
    return proc, port, (home / "config" / "token").read_text().strip()


def test_version_and_snippet(tmp_path: Path) -> None:
    out = run(tmp_path, "--version")
    assert out.returncode == 0 and re.fullmatch(r"wmcp-top \d+\.\d+\.\d+\n", out.stdout)
    out = run(tmp_path, "snippet", "--port", "7777")
    token = (tmp_path / "config" / "token").read_text().strip()
    assert re.fullmatch(r"[0-9a-f]{32}", token)
    # The token is handed over beside each URL, never in one (issue 46, item 4); `?v=` is the script's content hash.
    assert re.search(rf'<script src="http://127.0.0.1:7777/agent.js\?v=[0-9a-f]{{8}}" data-wmcp="{token}"></script>', out.stdout)
    assert re.search(rf'import\("http://127.0.0.1:7777/agent.mjs\?v=[0-9a-f]{{8}}"\).then\(m=>m.start\("{token}"\)\)', out.stdout)
    assert out.stdout.count(token) == 3 and f"t={token}" not in out.stdout  # tag, import(), bookmarklet
    assert stat.S_IMODE((tmp_path / "config" / "token").stat().st_mode) == 0o600
    again = run(tmp_path, "snippet")
    assert token in again.stdout  # kept across runs: a pasted tag keeps working
    rotated = run(tmp_path, "snippet", "--rotate-token")
    assert token not in rotated.stdout


def test_token_file_is_private_and_rotates(tmp_path: Path) -> None:
    path = tmp_path / "cfg" / "token"
    first = load_token(path=path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert load_token(path=path) == first
    assert load_token(rotate=True, path=path) != first
    path.write_text("not a token\n")
    assert re.fullmatch(r"[0-9a-f]{32}", load_token(path=path))


def test_errors_are_one_line_with_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"t":1,"c":1,"f":{"type":"nope"}}\n{"t":2}\n')
    out = run(tmp_path, "replay", str(bad), "--report", str(tmp_path / "out"))
    assert out.returncode == 2 and out.stderr.startswith("wmcp-top: ") and out.stderr.count("\n") == 1
    assert "Traceback" not in out.stderr
    out = run(tmp_path, "replay", str(tmp_path / "missing.jsonl"), "--report", str(tmp_path / "out"))
    assert out.returncode == 2 and "cannot read" in out.stderr
    out = run(tmp_path, "relay", "--port", "99999")
    assert out.returncode == 2 and "port" in out.stderr


def test_port_in_use_is_a_clear_error(tmp_path: Path) -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = str(s.getsockname()[1])
        out = run(tmp_path, "relay", "--port", port)
        assert out.returncode == 2 and "in use" in out.stderr and "Traceback" not in out.stderr
        # The dashboard says so before it takes the terminal: one plain line, no screen switching.
        ui = run(tmp_path, "--port", port)
    assert ui.returncode == 2 and ui.stderr == f"wmcp-top: port {port} is in use (another wmcp-top?); try --port 0\n"


def test_relay_prints_snippet_and_summaries_then_writes_reports_on_sigterm(tmp_path: Path) -> None:
    out_dir = tmp_path / "reports"
    proc, port, token = start_relay(tmp_path, "--report-on-exit", str(out_dir), "--summary-every", "0.2")
    assert proc.stdout is not None
    try:
        lines = [proc.stdout.readline() for _ in range(5)]
        assert any("<script src=" in line and f'data-wmcp="{token}"' in line for line in lines)
        with connect(f"ws://127.0.0.1:{port}/relay?t={token}") as ws:
            ws.recv()
            ws.send(json.dumps(synth.hello("abcd0123")))
            ws.recv()
            ws.send(json.dumps(synth.tool("abcd0123", "search", 1.0, description="find")))
            ws.send(
                json.dumps(
                    synth.spans_frame(
                        "abcd0123", [synth.span("abcd0123", i, "search", i * 50.0, 5.0, gap=None if i == 0 else 45.0) for i in range(10)]
                    )
                )
            )
            assert json.loads(ws.recv())["seq"] == 9
            summary = proc.stdout.readline()  # the next periodic line names the live session
            assert summary.startswith("abcd0123 ") and "payloads 1.0KB" in summary and "[top, live]" in summary
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    report = json.loads((out_dir / "abcd0123.json").read_text())
    jsonschema.validate(report, SCHEMA)
    assert report["tools"][0]["calls"] == 10 and len(report["spans"]) == 10
    capture = json.loads((out_dir / "capture.json").read_text())
    assert capture["format"] == "wmcp-top-capture/1" and capture["sessions"][0]["report"] == {
        **report,
        "session": capture["sessions"][0]["report"]["session"],
    }
    # the same files, headlessly, from the capture and from the session log
    for source in [out_dir / "capture.json", min((tmp_path / "state" / "logs").glob("session-*.jsonl"))]:
        again = run(tmp_path, "replay", str(source), "--report", str(tmp_path / "again"))
        assert again.returncode == 0, again.stderr
        replayed = json.loads((tmp_path / "again" / "abcd0123.json").read_text())
        assert replayed["tools"] == report["tools"] and replayed["spans"] == report["spans"]
        assert replayed["ledger"]["totals"] == report["ledger"]["totals"]
    # nothing from the relay's own logging reached the terminal
    assert "connection open" not in proc.stderr.read()


@pytest.mark.serial
def test_an_idle_headless_relay_sleeps_and_still_serves(tmp_path: Path) -> None:
    """`wmcp-top relay` with its session log on and a page connected but quiet is not woken by timers of its
    own (it polled the log's health four times a second, and the log flushed ten times a second)."""
    proc, port, token = start_relay(tmp_path)
    try:
        with connect(f"ws://127.0.0.1:{port}/relay?t={token}") as ws:
            ws.recv()
            ws.send(json.dumps(synth.hello("abcd0123")))
            ws.recv()
            woke = idle_wakes(proc.pid, 3.0)
            assert woke <= 3, f"an idle relay woke {woke} times in 3 s"
            ws.send(json.dumps(synth.spans_frame("abcd0123", [synth.span("abcd0123", 0, "search", 1.0, 5.0)])))
            assert json.loads(ws.recv())["seq"] == 0
            # the log's flush timer is armed again by the new line: written within the promised 250 ms
            log = min((tmp_path / "state" / "logs").glob("session-*.jsonl"))
            deadline = time.monotonic() + 0.25
            while '"spans"' not in log.read_text():
                assert time.monotonic() < deadline, "the spans frame did not reach the session log in 250 ms"
                time.sleep(0.01)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()


def test_headless_output_never_carries_a_page_escape_sequence(tmp_path: Path) -> None:
    """`wmcp-top relay` prints origins and summaries: a page's control characters show, never act."""
    proc, port, token = start_relay(tmp_path, "--no-log", "--summary-every", "0.2")
    assert proc.stdout is not None
    try:
        with connect(f"ws://127.0.0.1:{port}/relay?t={token}") as ws:
            ws.recv()
            ws.send(json.dumps(synth.hello("e5c0e5c0", origin="https://evil.example\x1b]0;pwned\x07\x1b[2J\u202e")))
            ws.recv()
            lines = [proc.stdout.readline() for _ in range(5)]
            while not lines[-1].startswith("e5c0e5c0"):
                lines.append(proc.stdout.readline())
    finally:
        proc.terminate()
        proc.wait(10)
    line = lines[-1]
    assert "\x1b" not in line and "\x07" not in line and "\u202e" not in line
    assert "https://evil.example␛]0;pwned␇␛[2J\\u202e" in line


def one_line_exit_2(out: subprocess.CompletedProcess[str]) -> str:
    assert out.returncode == 2, (out.returncode, out.stdout, out.stderr)
    assert out.stderr.count("\n") == 1 and out.stderr.startswith("wmcp-top"), out.stderr
    assert "Traceback" not in out.stderr and "usage:" not in out.stderr
    return out.stderr


def test_invalid_option_values_are_one_line_and_exit_2(tmp_path: Path) -> None:
    log = tmp_path / "ok.jsonl"
    log.write_text('{"t":1,"c":1,"open":true}\n')
    for args, word in [
        (("--demo", "--demo-speed", "-1"), "above 0"),
        (("--demo", "--demo-speed", "0"), "above 0"),  # not silently 1x
        (("--demo", "--demo-speed", "nan"), "finite"),
        (("replay", str(log), "--speed", "-1"), "0 (all at once) or above"),
        (("relay", "--allow-origin", "not a url"), "not an origin"),
        (("relay", "--allow-origin", "https://shop.example/path"), "not an origin"),
        (("relay", "--port", "99999"), "port"),
        (("--theme", "nosuch", "--port", "0"), "unknown theme 'nosuch'"),
        (("relay", "--nosuch"), "unknown option --nosuch"),
        (("relay", "--summary-every", "0"), "above 0"),
        (("relay", "--summary-every", "nan"), "not a finite number"),
    ]:
        assert word in one_line_exit_2(run(tmp_path, *args, timeout=LIVENESS_S)), args


def test_allowed_origin_is_kept_in_the_form_browsers_send(tmp_path: Path) -> None:
    from relay_bridge.cli import origin_type

    assert origin_type("https://Shop.example:8443") == "https://shop.example:8443"
    assert origin_type("chrome-extension://abcdef") == "chrome-extension://abcdef"


def test_output_dirs_are_checked_at_start(tmp_path: Path) -> None:
    log = tmp_path / "ok.jsonl"
    log.write_text('{"t":1,"c":1,"open":true}\n')
    a_file = tmp_path / "file"
    a_file.write_text("x")
    for bad in ("/proc/nope", str(a_file)):
        err = one_line_exit_2(run(tmp_path, "replay", str(log), "--report", bad))
        assert "--report" in err
        # the relay would start fine and lose its reports only at Ctrl-C: it refuses at once instead
        err = one_line_exit_2(run(tmp_path, "relay", "--port", "0", "--report-on-exit", bad, timeout=LIVENESS_S))
        assert "--report-on-exit" in err
        err = one_line_exit_2(run(tmp_path, "--port", "0", "--export-dir", bad, timeout=LIVENESS_S))
        assert "--export-dir" in err
    out = run(tmp_path, "replay", str(log), "--report", str(tmp_path / "new" / "dir"))
    assert out.returncode == 0 and (tmp_path / "new" / "dir" / "capture.json").is_file()


def test_replay_rejects_files_that_are_not_logs(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    blank = tmp_path / "blank.jsonl"
    blank.write_text("\n  \n")
    prose = tmp_path / "notes.txt"
    prose.write_text("hello, this is not json\n")
    for path, word in ((empty, "empty"), (blank, "empty"), (prose, "not a wmcp-top session log")):
        err = one_line_exit_2(run(tmp_path, "replay", str(path), "--report", str(tmp_path / "out")))
        assert word in err
        assert not (tmp_path / "out" / "capture.json").exists()


def test_a_reader_that_went_away_is_no_error(tmp_path: Path) -> None:
    """`wmcp-top snippet | head -1`: the pipe closes under the command. No 'file: Broken pipe' line, no traceback
    from the final flush; the exit status is a SIGPIPE death's, as for other tools in a pipeline."""
    read_end, write_end = os.pipe()
    os.close(read_end)  # closed before the first write: every write fails, deterministically
    env = dict(os.environ, WMCP_TOP_HOME=str(tmp_path))
    try:
        out = subprocess.run(
            [sys.executable, "-m", "tui.cli", "snippet"], env=env, stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=LIVENESS_S
        )
    finally:
        os.close(write_end)
    assert out.stderr == ""
    assert out.returncode == 141


def test_attach_into_a_pipe_prints_lines_not_a_dashboard(tmp_path: Path) -> None:
    """As `open` does: with stdout not a terminal, `attach` runs its line form, so `attach --cdp URL > calls.log`
    holds no screen-drawing escapes. An unreachable endpoint is then one line on stderr and exit 2."""
    out = run(tmp_path, "attach", "--cdp", "http://127.0.0.1:1", "--port", "0", "--no-log")
    assert out.returncode == 2
    assert "\x1b" not in out.stdout, "the dashboard was drawn into the pipe"
    assert out.stderr.startswith("wmcp-top: cannot reach a DevTools endpoint at http://127.0.0.1:1")
    assert out.stderr.count("\n") == 1


def test_every_option_of_every_subcommand_has_help() -> None:
    import argparse

    from tui.cli import build_parser

    missing = []

    def walk(parser: argparse.ArgumentParser, name: str) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub, subparser in action.choices.items():
                    walk(subparser, f"{name} {sub}")
            elif not action.help:
                missing.append(f"{name} {'/'.join(action.option_strings) or action.dest}")

    walk(build_parser(), "wmcp-top")
    assert missing == []


def test_options_before_the_subcommand_are_honoured_or_refused(tmp_path: Path) -> None:
    """Issue 34: `wmcp-top --port P relay` listened on 7420 and `--demo relay` ran a plain relay."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = dict(os.environ, WMCP_TOP_HOME=str(tmp_path), PYTHONUNBUFFERED="1")
    proc = subprocess.Popen(
        [sys.executable, "-m", "tui.cli", "--port", str(port), "--no-log", "relay"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().rstrip().endswith(f"listening on http://127.0.0.1:{port}")
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=LIVENESS_S)
    out = run(tmp_path, "--port", "7431", "snippet")
    assert out.returncode == 0 and "http://127.0.0.1:7431/agent.js" in out.stdout
    assert "not an option of `wmcp-top relay`" in one_line_exit_2(run(tmp_path, "--demo", "relay"))
    assert "not an option of `wmcp-top compare`" in one_line_exit_2(run(tmp_path, "--port", "1", "compare", "a", "b"))
    assert "given both before and after" in one_line_exit_2(run(tmp_path, "--port", "1", "snippet", "--port", "2"))
