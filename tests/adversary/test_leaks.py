"""Nothing else leaks or lies (issue 11, items 12-14, the headless half of 13)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from websockets.sync.client import connect

from relay_bridge.core import synth
from relay_bridge.relay.server import Relay
from tests.lines import Lines
from tests.liveness import LIVENESS_S
from tests.relay.conftest import open_session, send_spans

ROOT = Path(__file__).resolve().parents[2]
SID = "1ea4c0de"


async def test_content_type_keys_are_mcp_types_never_page_strings(relay: Relay) -> None:
    ws = await open_session(relay, SID)
    span = synth.span(SID, 0, "t", 1.0, 1.0, content_types={"text": 2, "CANARY-ct-\x1b[2J": 1, "widget": 3})
    await ws.send(json.dumps(synth.spans_frame(SID, [span])))
    await send_spans(ws, SID, [1])
    stored = relay.store.sessions[SID].spans()[0]
    assert stored.contentTypes == {"text": 2, "other": 4}
    await ws.close()


def test_headless_relay_output_shows_page_line_breaks_inert(tmp_path: Path) -> None:
    env = dict(os.environ, WMCP_TOP_HOME=str(tmp_path), PYTHONUNBUFFERED="1")
    proc = subprocess.Popen(
        [sys.executable, "-m", "tui.cli", "relay", "--port", "0", "--summary-every", "0.2"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    out = Lines(proc.stdout)
    try:
        port = int(out.until(lambda line: "listening on" in line).rsplit(":", 1)[1])
        token = (tmp_path / "config" / "token").read_text().strip()
        # CR LF, and U+2028, which str.splitlines() and many log readers take for a line break too.
        fake = "http://a.example\r\nffffffff http://bank.example [top, live] all clear\x1b[2K\u2028eeeeeeee http://x.example"
        with connect(f"ws://127.0.0.1:{port}/relay?t={token}") as ws:
            ws.recv()
            ws.send(json.dumps(synth.hello(SID, origin=fake)))
            ws.recv()
            line = out.until(lambda line: line.startswith(SID))  # the next periodic summary
        assert "␍␊ffffffff http://bank.example" in line and "␛[2K" in line and "\\u2028eeeeeeee" in line
        proc.send_signal(signal.SIGTERM)
        rest = proc.communicate(timeout=LIVENESS_S)[0]
    finally:
        if proc.poll() is None:
            proc.kill()
    printed = line.splitlines() + rest.splitlines()
    assert not any(text.startswith(("ffffffff", "eeeeeeee")) for text in printed), "a page cannot print a line of its own"


def test_an_unusable_state_dir_is_one_line_and_exit_2(tmp_path: Path) -> None:
    (tmp_path / "state").write_text("a file where the state directory should be")
    env = dict(os.environ, WMCP_TOP_HOME=str(tmp_path))
    for argv in (["relay", "--port", "0", "--no-log"], ["relay", "--port", "0"], ["snippet"]):
        run = subprocess.run([sys.executable, "-m", "tui.cli", *argv], cwd=ROOT, env=env, capture_output=True, text=True, timeout=LIVENESS_S)
        assert run.returncode == 2, (argv, run.stderr)
        assert run.stderr.count("\n") == 1 and "state directory" in run.stderr and "Traceback" not in run.stderr, run.stderr


def test_reports_and_captures_are_written_0600(tmp_path: Path) -> None:
    log = tmp_path / "session-20261130-000000-1-001.jsonl"
    log.write_text(json.dumps({"t": 1.0, "c": 1, "f": synth.hello(SID)}) + "\n")
    env = dict(os.environ, WMCP_TOP_HOME=str(tmp_path / "home"))
    run = subprocess.run(
        [sys.executable, "-m", "tui.cli", "replay", str(log), "--report", str(tmp_path / "out")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    written = sorted((tmp_path / "out").iterdir())
    assert {p.name for p in written} == {f"{SID}.json", "capture.json", "findings.json"}
    assert all(p.stat().st_mode & 0o777 == 0o600 for p in written), [oct(p.stat().st_mode) for p in written]
