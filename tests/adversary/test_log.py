"""The session log survives faults and replays what the relay had (issue 11, items 7-10)."""

from __future__ import annotations

import asyncio
import json
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import msgspec
from websockets.sync.client import connect
from websockets.typing import Origin

from relay_bridge.core import synth
from relay_bridge.exports.capture import build_capture
from relay_bridge.relay.replay import load_store
from relay_bridge.relay.server import Relay
from tests.lines import Lines
from tests.liveness import LIVENESS_S
from tests.relay.conftest import TOKEN, open_session, recv_json, send_spans

ROOT = Path(__file__).resolve().parents[2]
SID = "10c0ffee"


def _file_size_limit() -> None:
    # What a full disk does to a writer: a short write, then EFBIG (SIGXFSZ ignored, as a daemon would).
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (60_000, resource.RLIM_INFINITY))


def test_a_full_disk_costs_lines_said_once_never_the_log(tmp_path: Path) -> None:
    env = dict(os.environ, WMCP_TOP_HOME=str(tmp_path), PYTHONUNBUFFERED="1")
    proc = subprocess.Popen(
        [sys.executable, "-m", "tui.cli", "relay", "--port", "0"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_file_size_limit,
    )
    assert proc.stdout is not None
    out = Lines(proc.stdout)
    try:
        port = int(out.until(lambda line: "listening on" in line).rsplit(":", 1)[1])
        token = (tmp_path / "config" / "token").read_text().strip()
        with connect(f"ws://127.0.0.1:{port}/relay?t={token}") as ws:
            ws.recv()
            ws.send(json.dumps(synth.hello(SID)))
            ws.recv()
            for batch in range(10):  # ~30 KB a batch: the log passes the limit mid-run
                ws.send(json.dumps(synth.spans_frame(SID, [synth.span(SID, s, "t", s, 1.0) for s in range(batch * 50, batch * 50 + 50)])))
                assert json.loads(ws.recv())["seq"] == batch * 50 + 49
            said = out.until(lambda line: line.startswith("session log:"))
            assert "cannot write" in said and "File too large" in said
            # The disk has room again: logging resumes by itself, and says so once.
            resource.prlimit(proc.pid, resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
            ws.send(json.dumps(synth.spans_frame(SID, [synth.span(SID, 500, "t", 500.0, 1.0)])))
            assert json.loads(ws.recv())["seq"] == 500
            assert out.until(lambda line: line.startswith("session log:")).startswith("session log: writing again")
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(LIVENESS_S) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    logs = sorted((tmp_path / "state" / "logs").glob("session-*.jsonl"))
    for part in logs:
        assert all(json.loads(line) for line in part.read_bytes().splitlines()), "whole lines only"
    replay = subprocess.run(
        [sys.executable, "-m", "tui.cli", "replay", str(logs[0]), "--report", str(tmp_path / "again")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert replay.returncode == 0, replay.stderr
    report = json.loads((tmp_path / "again" / f"{SID}.json").read_text())
    seqs = {s["seq"] for s in report["spans"]}
    assert 500 in seqs, "what was logged after the fault is there"


async def test_a_descriptor_accepted_live_replays_from_the_log_and_the_capture(relay: Relay, tmp_path: Path) -> None:
    ws = await open_session(relay, SID)
    descriptor = synth.tool(SID, "umlaut", 1.0, description="\u00fc" * 25_000)  # 50 KB of UTF-8, 150 KB escaped
    await ws.send(json.dumps(descriptor, ensure_ascii=False))
    await send_spans(ws, SID, range(3), tool="umlaut")
    await ws.close()
    live = relay.store.sessions[SID].tools["umlaut"].descriptor
    capture = tmp_path / "capture.json"
    capture.write_bytes(msgspec.json.encode(build_capture(relay.store)))
    await relay.stop()
    for source in [*sorted((tmp_path / "logs").glob("session-*.jsonl"))[:1], capture]:
        again = load_store(source)
        assert msgspec.json.decode(again.sessions[SID].tools["umlaut"].descriptor) == msgspec.json.decode(live)


class TickingClock:
    """Each reading 50 ms after the last: what a process preempted between two reads of the clock sees."""

    def __init__(self) -> None:
        self.t = time.time()

    def time(self) -> float:
        self.t += 0.05
        return self.t

    def monotonic(self) -> float:
        return time.monotonic()


async def test_replay_rebuilds_refusals_coverage_and_timeline_times(relay: Relay, tmp_path: Path) -> None:
    relay.store.clock = TickingClock()
    ws = await open_session(relay, SID)
    await send_spans(ws, SID, range(5))
    await ws.send(json.dumps(dict(synth.status(SID, "measuring"), phase="no-such-phase")))  # refused, counted
    assert (await recv_json(ws))["code"] == "invalid"
    stranger = await open_session(relay, "5742a63e")
    await stranger.send(json.dumps({"type": "bye", "session": SID}))  # not its session: counted against it only
    assert (await recv_json(stranger))["code"] == "unknown_session"
    await ws.close()
    await stranger.close()
    live = relay.store
    session = live.sessions[SID]
    assert session.coverage == "incomplete" and session.counters.rejected == 1
    await relay.stop()
    again = load_store(sorted((tmp_path / "logs").glob("session-*.jsonl"))[0])
    replayed = again.sessions[SID]
    assert (replayed.coverage, replayed.counters.rejected) == ("incomplete", 1)
    assert {k: v for k, v in again.counters.items() if k.startswith(("rejected", "refused"))} == {
        k: v for k, v in live.counters.items() if k.startswith(("rejected", "refused"))
    }
    relay_stamped = [e for e in session.timeline if e.kind in ("attach", "disconnected")]
    rebuilt = [e for e in replayed.timeline if e.kind in ("attach", "disconnected")]
    assert [e.kind for e in rebuilt] == [e.kind for e in relay_stamped]
    # The log line carries the time the store stamped the step with (kept to a microsecond), not a second reading.
    assert all(abs(b.at - a.at) <= 0.01 for a, b in zip(relay_stamped, rebuilt)), [(a.at, b.at) for a, b in zip(relay_stamped, rebuilt)]


def test_replay_skips_a_torn_last_line_of_any_part_and_says_so(tmp_path: Path) -> None:
    lines = [
        json.dumps({"t": 1.0, "c": 1, "open": True}),
        json.dumps({"t": 2.0, "c": 1, "f": synth.hello(SID)}),
        json.dumps({"t": 3.0, "c": 1, "f": synth.spans_frame(SID, [synth.span(SID, 0, "t", 0.0, 1.0)])}),
    ]
    part1 = tmp_path / "session-20261130-000000-1-001.jsonl"
    part2 = tmp_path / "session-20261130-000000-1-002.jsonl"
    part1.write_text("\n".join(lines[:2]) + "\n" + lines[2][:40])  # the disk filled mid-line
    part2.write_text(json.dumps({"t": 4.0, "c": 1, "f": synth.spans_frame(SID, [synth.span(SID, 1, "t", 1.0, 1.0)])}) + "\n")
    env = dict(os.environ, WMCP_TOP_HOME=str(tmp_path))
    replay = subprocess.run(
        [sys.executable, "-m", "tui.cli", "replay", str(part1), "--report", str(tmp_path / "out")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert replay.returncode == 0, replay.stderr
    assert "skipped a torn last line" in replay.stderr and part1.name in replay.stderr
    report = json.loads((tmp_path / "out" / f"{SID}.json").read_text())
    assert [s["seq"] for s in report["spans"]] == [1]


async def test_a_log_flood_from_one_origin_loses_no_line_of_another_pages_200_calls(relay: Relay, tmp_path: Path) -> None:
    """Issue 31 item 3: a page outpacing one flush (tens of MB a second) once made the buffer drop its oldest
    lines, another page's hello among them. Now every accepted line is written (or its frame refused, never
    acked), and the replay rebuilds the live store: the other page's 200 calls, and the flood's own sessions."""
    from websockets.asyncio.client import connect as aconnect

    evil, good = "http://flood.example", "https://victim.example"
    floods = []
    for c in range(4):
        ws = await aconnect(f"ws://127.0.0.1:{relay.port}/relay?t={TOKEN}", origin=Origin(evil), max_size=None, max_queue=None)
        await recv_json(ws)
        await ws.send(json.dumps(synth.hello(f"f100d{c:03x}", evil)))
        assert (await recv_json(ws))["type"] == "ack"
        floods.append(ws)
    victim = await aconnect(f"ws://127.0.0.1:{relay.port}/relay?t={TOKEN}", origin=Origin(good), max_size=None)
    await recv_json(victim)
    await victim.send(json.dumps(synth.hello(SID, good)))
    assert (await recv_json(victim))["type"] == "ack"
    await victim.send(json.dumps(synth.tool(SID, "search", 1.0, description="the victim's tool")))
    batch = [
        json.dumps(
            synth.spans_frame(
                f"f100d{c:03x}", [synth.span(f"f100d{c:03x}", s, "flood", s * 1.0, 1.0, error="e" * 200, is_error=True) for s in range(500)]
            )
        )
        for c in range(4)
    ]

    async def flood(ws: Any, frame: str) -> None:
        for _ in range(40):  # ~12 MB a socket, as fast as the relay reads
            await ws.send(frame)

    sent = asyncio.gather(*(flood(ws, frame) for ws, frame in zip(floods, batch)))
    acked = -1
    for base in range(0, 200, 10):
        await victim.send(json.dumps(synth.spans_frame(SID, [synth.span(SID, s, "search", s * 10.0, 1.0) for s in range(base, base + 10)])))
        while (reply := await recv_json(victim))["type"] != "ack":
            assert reply["code"] in ("log_full", "rate_limited"), reply  # refused, never acked: sent again below
            await victim.send(json.dumps(synth.spans_frame(SID, [synth.span(SID, s, "search", s * 10.0, 1.0) for s in range(base, base + 10)])))
        acked = reply["seq"]
    await sent
    assert acked == 199
    log = relay.session_log
    assert log is not None
    live_flood = {sid: s.stats.totals.calls for sid, s in relay.store.sessions.items() if sid.startswith("f100d")}
    for ws in [*floods, victim]:
        await ws.close()
    await relay.stop()
    assert log.dropped == 0, "no accepted line dropped"
    assert log.refused == relay.store.counters["rejected:log_full"], "what the log refused is counted"
    parts = sorted((tmp_path / "logs").glob("session-*.jsonl"))
    assert sum(p.stat().st_size for p in parts) > 8 * 1024 * 1024, "the flood outpaced the old 8 MiB buffer"
    again = load_store(parts[0])
    replayed = again.sessions[SID]
    assert replayed.stats.totals.calls == 200 and replayed.tools["search"].registered
    assert {sid: s.stats.totals.calls for sid, s in again.sessions.items() if sid.startswith("f100d")} == live_flood
