"""Benchmark: what connections held in their HTTP handshake (slowloris) cost: the relay's descriptors and RSS, a
well-behaved agent's ack time and new agents' way in, while 2,000 of them are held and every one the relay closes is
opened again (tests/bench/hostile_load.py `--only slowloris`), against the same relay and agents with none, same run.
The relay runs under a usual `ulimit -n` of 1,024, which the flood alone would exhaust if handshakes were not capped.

  WMCP_BENCH_SECONDS=3 pytest tests/bench/test_relay_handshakes.py -m bench -s
"""

from __future__ import annotations

import json
import math
import os
import re
import resource
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from websockets.exceptions import ConnectionClosed, InvalidHandshake
from websockets.sync.client import connect

from relay_bridge.core import synth
from relay_bridge.relay.server import MAX_PENDING_HANDSHAKES
from tests.bench import judge, procs
from tests.bench.hostile_load import SLOWLORIS, SLOWLORIS_RATE
from tests.bench.procs import run_seconds
from tests.bench.test_relay_memory import ACK_P95_TARGET_MS, rss_mb

ROOT = Path(__file__).resolve().parents[2]
SECONDS = float(os.environ.get("WMCP_BENCH_SECONDS", "5"))
NOFILE = 1024
# Beyond its idle set, its agents and the cap, the relay may hold 100 connections made since the last trim, and
# asyncio's accepts in flight, 100 a loop turn for up to 3 turns (relay_bridge/relay/server.py, MAX_PENDING_HANDSHAKES).
BURST = 4 * 100
NEW_AGENTS = 5  # fresh connections timed from connect to their hello's ack
PROMPT_MS = 500  # a new agent's hello acked within this under the flood, as in tests/adversary/test_handshakes.py


def descriptors(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def _ulimit() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (NOFILE, NOFILE))


def hello_ms(url: str, sid: str) -> float:
    """A new agent: connect, welcome, hello, ack. Milliseconds; infinite if it did not get in within 2 s."""
    started = time.perf_counter()
    try:
        with connect(url, open_timeout=2) as ws:
            ws.recv(timeout=2)
            ws.send(json.dumps(synth.hello(sid)))
            assert json.loads(ws.recv(timeout=2))["type"] == "ack"
    except (OSError, TimeoutError, InvalidHandshake, ConnectionClosed):
        return math.inf
    return (time.perf_counter() - started) * 1000


def agent(url: str, seconds: float, sid: str) -> dict[str, float]:
    run = subprocess.run(
        [sys.executable, "-m", "tests.bench.hostile_load", "good", url, "--seconds", str(seconds), "--session", sid],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=seconds * 10 + 60,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    return json.loads(run.stdout)


@pytest.mark.bench
def test_relay_under_held_handshakes(tmp_path: Path) -> None:
    env = dict(os.environ, WMCP_TOP_HOME=str(tmp_path), PYTHONUNBUFFERED="1")
    reports = tmp_path / "reports"
    relay = subprocess.Popen(
        [sys.executable, "-m", "tui.cli", "relay", "--port", "0", "--report-on-exit", str(reports)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        preexec_fn=_ulimit,
    )
    peaks = {"fds": 0, "rss": 0.0}
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            try:
                peaks["fds"] = max(peaks["fds"], descriptors(relay.pid))
                peaks["rss"] = max(peaks["rss"], rss_mb(relay.pid))
            except OSError:
                return  # the relay has exited
            done.wait(0.005)

    sampler = threading.Thread(target=sample, daemon=True)
    try:
        assert relay.stdout is not None
        port = int(re.search(r":(\d+)", relay.stdout.readline()).group(1))
        token = (tmp_path / "config" / "token").read_text().strip()
        url = f"ws://127.0.0.1:{port}/relay?t={token}"
        # Baseline in the same run: the same agent against the relay with no flood.
        cpu, started = run_seconds(relay.pid), time.perf_counter()
        baseline = agent(url, SECONDS / 2, "ba5e0000")
        cpu_alone = (run_seconds(relay.pid) - cpu) / (time.perf_counter() - started)
        new_alone = [hello_ms(url, f"ba5e{i:04x}") for i in range(1, NEW_AGENTS + 1)]
        idle_fds, idle_rss = descriptors(relay.pid), rss_mb(relay.pid)
        sampler.start()
        flood = subprocess.Popen(
            [sys.executable, "-m", "tests.bench.hostile_load", "flood", url, "--only", "slowloris", "--seconds", str(SECONDS + 4)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + procs.LIVENESS_S
        while peaks["fds"] < idle_fds + MAX_PENDING_HANDSHAKES and time.monotonic() < deadline:
            time.sleep(0.01)  # polling a condition under a deadline: the flood is on once the relay holds the cap
        assert peaks["fds"] >= idle_fds + MAX_PENDING_HANDSHAKES, "the flood never reached the relay"
        cpu, started = run_seconds(relay.pid), time.perf_counter()
        attacked = agent(url, SECONDS, "600d0000")  # connects while the flood is on, then a batch every 50 ms
        cpu_attacked = (run_seconds(relay.pid) - cpu) / (time.perf_counter() - started)
        new_attacked = [hello_ms(url, f"600d{i:04x}") for i in range(1, NEW_AGENTS + 1)]
        held_fds = descriptors(relay.pid)
        assert flood.poll() is None, "the flood ended before the new agents were timed"
        out, err = flood.communicate(timeout=SECONDS * 10 + 60)
        assert flood.returncode == 0, err[-2000:]
        floods = json.loads(out)
        done.set()
        sampler.join()
        assert relay.poll() is None, "the relay died"
        relay.send_signal(signal.SIGINT)
        assert relay.wait(30) == 0
    finally:
        done.set()
        if relay.poll() is None:
            relay.kill()
            relay.wait(10)
    refused = json.loads((reports / "capture.json").read_text())["relay"]["counters"].get("refused:handshakes", 0)
    print()
    print(
        f"{SLOWLORIS} connections held in their handshake, each one closed opened again (<= {SLOWLORIS_RATE:g}/s), {SECONDS + 4:g} s: "
        f"{floods['sent'].get('slowloris', 0)} connected, {floods['replies'].get('slowloris_closed', 0)} closed by the relay, "
        f"{floods['replies'].get('slowloris_connect_failed', 0)} connects failed; refused:handshakes {refused}"
    )
    print(
        f"relay descriptors: idle {idle_fds}, peak {peaks['fds']}, after the agents' runs {held_fds}  (ulimit -n {NOFILE}, cap {MAX_PENDING_HANDSHAKES})"
    )
    print(
        f"relay RSS: idle {idle_rss:.0f} MB, peak under the flood {peaks['rss']:.0f} MB (+{peaks['rss'] - idle_rss:.0f}); "
        f"CPU during the agent's run {cpu_attacked:.0%} of a core (no flood: {cpu_alone:.0%})"
    )
    print(
        f"well-behaved agent under the flood: {attacked['good_batches']} batches, ack p50 {attacked['ack_p50_ms']:.1f} ms, "
        f"p95 {attacked['ack_p95_ms']:.1f} ms, max {attacked['ack_max_ms']:.1f} ms  (target p95 <= {ACK_P95_TARGET_MS} ms)"
    )
    print(f"same agent, no flood (baseline): ack p50 {baseline['ack_p50_ms']:.1f} ms, p95 {baseline['ack_p95_ms']:.1f} ms")
    print(
        f"{NEW_AGENTS} new agents, connect to hello acked, under the flood: {', '.join(f'{ms:.0f}' for ms in new_attacked)} ms "
        f"(no flood: {', '.join(f'{ms:.0f}' for ms in new_alone)} ms; target <= {PROMPT_MS} ms)"
    )
    assert peaks["fds"] <= idle_fds + MAX_PENDING_HANDSHAKES + BURST + 4 < NOFILE  # 4: the agents
    assert refused >= floods["replies"].get("slowloris_closed", 0) - MAX_PENDING_HANDSHAKES
    # As in test_relay_memory: the target or 1.5x the same run's baseline, with 3x headroom for a short pass; the
    # times are time targets (tests/bench/judge.py), descriptors and loss are held always.
    slack = 1.0 if SECONDS >= 30 else 3.0
    allowed = max(ACK_P95_TARGET_MS, 1.5 * baseline["ack_p95_ms"]) * slack
    assert attacked["good_batches"] > 0 and attacked["good_spans"] == attacked["good_batches"] * 20
    judge.time_targets(
        [
            judge.at_most("ack p95 ms under the flood", attacked["ack_p95_ms"], allowed, ".1f"),
            judge.at_most("slowest new agent's hello ack ms", max(new_attacked), PROMPT_MS, ".0f"),
        ]
    )
