"""SIGKILL the relay mid-run: the session log holds every span acked more than 250 ms before the kill, and a
replay of the log rebuilds the same aggregates."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import msgspec
import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect
from websockets.typing import Origin

from relay_bridge.core import synth
from relay_bridge.core.protocol import Span
from relay_bridge.core.stats import SessionStats
from relay_bridge.relay.replay import load_store

SID = "c0ffee00"


def start_relay(home: Path) -> tuple[subprocess.Popen[str], int, str]:
    env = dict(os.environ, WMCP_TOP_HOME=str(home), PYTHONUNBUFFERED="1")
    proc = subprocess.Popen(
        [sys.executable, "-m", "tui.cli", "relay", "--port", "0"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    match = re.search(r"127\.0\.0\.1:(\d+)", line)
    assert match, f"no listening line: {line!r} {proc.stderr.read() if proc.poll() is not None else ''}"
    token = (home / "config" / "token").read_text().strip()
    return proc, int(match.group(1)), token


def logged_seqs(log_dir: Path) -> set[int]:
    seqs: set[int] = set()
    for path in log_dir.glob("session-*.jsonl"):
        for line in path.read_text().splitlines():
            try:
                rec = json.loads(line)
            except ValueError:
                continue  # a torn last line
            frame = rec.get("f") or {}
            if frame.get("type") == "spans" and frame.get("session") == SID:
                seqs.update(s["seq"] for s in frame["spans"])
    return seqs


def flood_log(url: str, stop: threading.Event) -> None:
    """Another origin's page sending tens of MB a second of valid frames: the session log's worst day."""
    sid = "f100d000"
    frame = json.dumps(synth.spans_frame(sid, [synth.span(sid, s, "flood", s * 1.0, 1.0, error="e" * 200, is_error=True) for s in range(500)]))
    with contextlib.suppress(ConnectionClosed, OSError), connect(url, origin=Origin("http://flood.example"), max_size=None) as ws:
        ws.recv()
        ws.send(json.dumps(synth.hello(sid, "http://flood.example")))
        while not stop.is_set():
            ws.send(frame)


@pytest.mark.serial
@pytest.mark.parametrize("flood", [False, True], ids=["alone", "under-a-log-flood-from-another-origin"])
def test_sigkill_loses_at_most_the_last_250ms_and_replay_matches(tmp_path: Path, flood: bool) -> None:
    proc, port, token = start_relay(tmp_path)
    sent: dict[int, dict] = {}
    acked_at: dict[int, float] = {}
    stop = threading.Event()
    flooder = threading.Thread(target=flood_log, args=(f"ws://127.0.0.1:{port}/relay?t={token}", stop), daemon=True)
    if flood:
        flooder.start()
    try:
        with connect(f"ws://127.0.0.1:{port}/relay?t={token}") as ws:
            assert json.loads(ws.recv())["type"] == "welcome"
            ws.send(json.dumps(synth.hello(SID)))
            assert json.loads(ws.recv())["seq"] == -1
            seq = 0
            deadline = time.monotonic() + 1.5
            while time.monotonic() < deadline and seq < 20_000:  # a steady stream, every batch acked
                batch = [
                    synth.span(SID, s, f"tool{s % 5}", s * 3.0, 1.0 + s % 7, gap=None if s == 0 else 1.5, result_bytes=100 + s)
                    for s in range(seq, seq + 50)
                ]
                ws.send(json.dumps(synth.spans_frame(SID, batch)))
                while (ack := json.loads(ws.recv()))["type"] == "error":
                    assert ack["code"] in ("log_full", "rate_limited"), ack  # refused, not acked: sent again
                    ws.send(json.dumps(synth.spans_frame(SID, batch)))
                now = time.monotonic()
                for span in batch:
                    sent[span["seq"]] = span
                    acked_at[span["seq"]] = now
                assert ack["seq"] == seq + 49
                seq += 50
            killed_at = time.monotonic()
            proc.send_signal(signal.SIGKILL)
            proc.wait(5)
    finally:
        stop.set()
        if proc.poll() is None:
            proc.kill()
    if flood:
        flooder.join(10)
    logged = logged_seqs(tmp_path / "state" / "logs")
    must_have = {s for s, t in acked_at.items() if t < killed_at - 0.25}
    assert len(sent) >= 500
    missing = must_have - logged
    assert not missing, f"{len(missing)} spans acked more than 250 ms before the kill are not in the log"
    # Replay the log: the same aggregates as the spans it holds.
    log_file = min((tmp_path / "state" / "logs").glob("session-*.jsonl"))
    store = load_store(log_file)
    expected = SessionStats(500)
    for s in sorted(logged):
        expected.add(msgspec.convert(sent[s], Span))
    replayed = store.sessions[SID].stats
    assert replayed.aggregates() == expected.aggregates()
    assert replayed.totals_dict() == expected.totals_dict()
    assert store.sessions[SID].state == "disconnected"
