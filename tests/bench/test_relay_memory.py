"""Benchmark: the relay's memory and a well-behaved agent's ack time under every hostile flood at once
(tests/bench/hostile_load.py), against the same relay idle. Prints the figures; the README quotes them.

  WMCP_BENCH_SECONDS=3 pytest tests/bench/test_relay_memory.py -m bench -s

Targets (issue 11): relay RSS <= 300 MB throughout; the well-behaved agent's ack p95 <= 50 ms; the capture
written at exit stays small.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.bench import judge

ROOT = Path(__file__).resolve().parents[2]
SECONDS = float(os.environ.get("WMCP_BENCH_SECONDS", "5"))
RSS_TARGET_MB = 300
ACK_P95_TARGET_MS = 50


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


@pytest.mark.bench
def test_relay_memory_under_every_flood(tmp_path: Path) -> None:
    env = dict(os.environ, WMCP_TOP_HOME=str(tmp_path), PYTHONUNBUFFERED="1")
    reports = tmp_path / "reports"
    relay = subprocess.Popen(
        [sys.executable, "-m", "tui.cli", "relay", "--port", "0", "--report-on-exit", str(reports)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    peak = 0.0
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, rss_mb(relay.pid))
            done.wait(0.02)

    try:
        assert relay.stdout is not None
        port = int(re.search(r":(\d+)", relay.stdout.readline()).group(1))
        token = (tmp_path / "config" / "token").read_text().strip()
        idle = rss_mb(relay.pid)
        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        url = f"ws://127.0.0.1:{port}/relay?t={token}"
        # Baseline in the same run: the same agent against the idle relay (the machine's own noise).
        alone = subprocess.run(
            [sys.executable, "-m", "tests.bench.hostile_load", "good", url, "--seconds", str(SECONDS / 2), "--session", "ba5e0000"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=SECONDS * 10 + 60,
        )
        assert alone.returncode == 0, alone.stderr[-2000:]
        baseline = json.loads(alone.stdout)
        agent = subprocess.Popen(
            [sys.executable, "-m", "tests.bench.hostile_load", "good", url, "--seconds", str(SECONDS + 0.6)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        time.sleep(0.5)  # the scenario: the agent was connected before the attack began (it earned its reserve)
        floods = subprocess.run(
            [sys.executable, "-m", "tests.bench.hostile_load", "flood", url, "--seconds", str(SECONDS)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=SECONDS * 10 + 60,
        )
        assert floods.returncode == 0, floods.stderr[-2000:]
        out, err = agent.communicate(timeout=SECONDS * 10 + 60)
        assert agent.returncode == 0, err[-2000:]
        result = json.loads(out) | json.loads(floods.stdout)
        after = rss_mb(relay.pid)
        done.set()
        sampler.join()
        relay.send_signal(signal.SIGINT)
        relay.wait(30)
    finally:
        done.set()
        if relay.poll() is None:
            relay.kill()
            relay.wait(10)
    capture = reports / "capture.json"
    capture_mb = capture.stat().st_size / 1e6 if capture.exists() else float("nan")
    print()
    print(
        f"relay RSS: idle {idle:.0f} MB, peak under floods {peak:.0f} MB (+{peak - idle:.0f}), after {after:.0f} MB  (target <= {RSS_TARGET_MB} MB)"
    )
    print(
        f"well-behaved agent: {result['good_batches']} batches, ack p50 {result['ack_p50_ms']:.1f} ms, p95 {result['ack_p95_ms']:.1f} ms, max {result['ack_max_ms']:.1f} ms  (target p95 <= {ACK_P95_TARGET_MS} ms)"
    )
    print(f"same agent, idle relay (baseline): ack p50 {baseline['ack_p50_ms']:.1f} ms, p95 {baseline['ack_p95_ms']:.1f} ms")
    print(f"frames sent by the floods: {result['sent']}; replies: {result['replies']}")
    print(f"capture at exit: {capture_mb:.1f} MB; {SECONDS:g} s of floods")
    assert peak <= RSS_TARGET_MB
    # The floods must add nothing to the agent's ack time beyond the target: on a machine busy with other work the
    # baseline itself is slower, so the bound is the target or 1.5x the same run's baseline, whichever is higher.
    # A run under 30 s (a few dozen acks, its p95 is one or two of them) gets 3x headroom; a full pass none. Memory
    # and loss are held always; the ack time is a time target (tests/bench/judge.py).
    slack = 1.0 if SECONDS >= 30 else 3.0
    allowed = max(ACK_P95_TARGET_MS, 1.5 * baseline["ack_p95_ms"]) * slack
    assert result["good_batches"] > 0 and result["good_spans"] == result["good_batches"] * 20
    judge.time_targets([judge.at_most("ack p95 ms under floods", result["ack_p95_ms"], allowed, ".1f")])
