"""Benchmark: a legitimate agent's ack p95, and the dashboard's key -> repaint, under each flood one web origin
can send (tests/bench/fair_load.py: budget, hellos, churn, rate, big, log), beside a control with no flood, same
run. The agent (tests/bench/hostile_load.py `good`: 20 spans every 50 ms) is of another origin. The `ext-` rows
send the floods the way the extension carries a page (fair_load.py: the extension's Origin on every socket, the
page's origin stamped in each hello), beside an agent the extension carries too, and its own control: every tab
the extension carries shares its Origin header, so these rows hold the relay to the page origin's share.

Targets (issue 31): the agent's ack p95 within 50 ms of the control, the dashboard's key p95 within 200 ms, under
every flood. The short CI pass (WMCP_BENCH_SECONDS < 20) holds only what noise cannot flip: the agent is never
refused and every batch it sent is acked under every flood, and every key press is painted beside the control and
the budget flood (under 10 s, rows of 1.5 s); the times are printed, and held by the full run (20 s a row, every
flood) when the machine had room.

  WMCP_BENCH_SECONDS=3 pytest tests/bench/test_fair_shares.py -m bench -s
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.bench import procs
from tests.bench.fair_load import EXT_KINDS, KINDS
from tests.bench.test_tui_load import p95

ROOT = Path(__file__).resolve().parents[2]
SECONDS = float(os.environ.get("WMCP_BENCH_SECONDS", "20"))
# The short pass (under 10 s) judges no time, only that the agent is served whole beside each flood under way and
# that a press is painted: 1.5 s a row says that, and its 14 rows of four tests were the check's longest wait.
ROW_SECONDS = SECONDS if SECONDS >= 10 else 1.5
ACK_OVER_CONTROL_MS = 50.0
KEY_P95_MS = 200.0


def _flood(url: str, kind: str, seconds: float, ready: Path) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.bench.fair_load", url, kind, str(seconds), str(ready)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    _wait_for(ready, proc, f"the {kind} flood never started")
    return proc


def _wait_for(ready: Path, proc: subprocess.Popen[str], never: str) -> None:
    """Until `proc` writes its `ready` file; `never` says what failed if it exits or takes procs.LIVENESS_S."""
    deadline = time.monotonic() + procs.LIVENESS_S
    while not ready.exists():
        assert proc.poll() is None, f"{never}: {proc.communicate()[1][-2000:]}"
        assert time.monotonic() < deadline, never
        time.sleep(0.02)  # polling the ready file, not standing in for it


def _warm_up(app: procs.Wmcp, probe: Path, kind: str) -> None:
    app.key(b"s")
    deadline = time.monotonic() + procs.LIVENESS_S
    while not (probe.exists() and any(line.startswith("k ") for line in probe.read_text().splitlines())):
        assert time.monotonic() < deadline, f"{kind}: the dashboard never painted a key press"
        time.sleep(0.02)  # polling the probe file, not standing in for it


def _via(kind: str) -> list[str]:
    """The legitimate agent's route for a row: the extension's for the `ext-` rows."""
    return ["--via-extension"] if _route(kind) else []


def _good(url: str, seconds: float, sid: str, kind: str) -> dict[str, Any]:
    run = subprocess.run(
        [sys.executable, "-m", "tests.bench.hostile_load", "good", url, "--seconds", str(seconds), "--session", sid, *_via(kind)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=seconds * 10 + 60,
        check=False,
    )
    assert run.returncode == 0, f"the legitimate agent was refused or lost an ack: {run.stderr[-2000:]}"
    return json.loads(run.stdout)


def _route(kind: str) -> str:
    return "ext-" if kind.startswith("ext") else ""


def _relay(home: Path) -> tuple[subprocess.Popen[str], str]:
    env = dict(os.environ, WMCP_TOP_HOME=str(home), PYTHONUNBUFFERED="1")
    proc = subprocess.Popen(
        [sys.executable, "-m", "tui.cli", "relay", "--port", "0"], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    assert proc.stdout is not None
    for line in proc.stdout:
        if "listening on" in line:
            port = int(line.rsplit(":", 1)[1])
            break
    token = (home / "config" / "token").read_text().strip()
    return proc, f"ws://127.0.0.1:{port}/relay?t={token}"


def _stop(flood: subprocess.Popen[str], kind: str) -> dict[str, Any]:
    """Ends a flood once the agent beside it is done, and returns what it sent."""
    flood.send_signal(signal.SIGTERM)
    out, err = flood.communicate(timeout=60)
    assert flood.returncode == 0, f"{kind}: {err[-2000:]}"
    sent: dict[str, Any] = json.loads(out)
    return sent


# Each route's rows beside their own control, one test a route so that the short pass's workers share them out.
ROUTES = {"direct": ("control", *KINDS), "extension": ("ext-control", *EXT_KINDS)}
# The dashboard's rows in the short pass: its control and the budget flood, the one that fills the store the
# dashboard draws. Each row starts a dashboard (about 10 s a row in a loaded check, 120 s of the pass's workers for
# all 14); every flood still runs through the relay in the ack test's short pass, and the full run has every row.
DASHBOARD_ROWS = ROUTES if SECONDS >= 10 else {"direct": ("control", "budget"), "extension": ("ext-control", "ext-budget")}


@pytest.mark.bench
@pytest.mark.parametrize("route", ROUTES)
def test_ack_p95_under_each_flood_beside_a_control(tmp_path: Path, route: str) -> None:
    relay, url = _relay(tmp_path / "home")  # with its session log, as a user runs it
    rows: dict[str, dict[str, Any]] = {}
    try:
        for i, kind in enumerate(ROUTES[route]):
            flood = None if kind.endswith("control") else _flood(url, kind, ROW_SECONDS + 30, tmp_path / f"{kind}.ready")
            rows[kind] = _good(url, ROW_SECONDS, f"600d{i:04x}", kind)
            if flood is not None:
                rows[kind]["flood"] = _stop(flood, kind)
    finally:
        relay.send_signal(signal.SIGINT)
        relay.wait(30)
    control = rows[ROUTES[route][0]]["ack_p95_ms"]
    print(f"\nlegitimate agent's ack times under floods from another origin, {route} ({ROW_SECONDS:g} s a row)")
    for kind, row in rows.items():
        print(
            f"  {kind:11s} ack p95 {row['ack_p95_ms']:7.1f} ms  p50 {row['ack_p50_ms']:6.1f}  max {row['ack_max_ms']:7.1f}"
            f"  ({row['good_batches']} batches)  flood {row.get('flood', {})}"
        )
    for kind, row in rows.items():
        assert row["good_batches"] > 0 and row["good_spans"] == 20 * row["good_batches"], f"{kind}: every batch acked"
    if SECONDS >= 20:
        over = {k: r["ack_p95_ms"] for k, r in rows.items() if r["ack_p95_ms"] > control + ACK_OVER_CONTROL_MS}
        assert not over, f"ack p95 more than {ACK_OVER_CONTROL_MS:g} ms over the control's {control:.1f} ms: {over}"


@pytest.mark.bench
@pytest.mark.parametrize("route", ROUTES)
def test_dashboard_key_to_repaint_under_each_flood(tmp_path: Path, route: str) -> None:
    rows: dict[str, list[float]] = {}
    acks: dict[str, float] = {}
    for i, kind in enumerate(DASHBOARD_ROWS[route]):
        run = tmp_path / kind
        run.mkdir()
        probe = run / "probe.txt"
        with procs.wmcp(run, headless=False, probe=probe) as app:
            flood = None if kind.endswith("control") else _flood(app.ws_url, kind, ROW_SECONDS + 30, run / "ready")
            agent = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "tests.bench.hostile_load",
                    "good",
                    app.ws_url,
                    "--seconds",
                    str(ROW_SECONDS),
                    "--session",
                    f"d00d{i:04x}",
                    *_via(kind),
                    "--ready",
                    str(run / "agent-ready"),
                ],
                cwd=ROOT,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            # Timed once the agent is under way and the dashboard has answered one press: the agent's own start (a
            # Python process importing) and the dashboard's (the first tab's styles, modules imported on first use,
            # 0.1-0.3 s of its loop) fell on the first press of a row, in the control too; the flood's cost is
            # what follows.
            _wait_for(run / "agent-ready", agent, f"{kind}: the agent never got its hello acked")
            _warm_up(app, probe, kind)
            keys: list[float] = []
            started = time.monotonic()
            while time.monotonic() - started < ROW_SECONDS - 0.5:
                keys.append(time.monotonic())
                app.key(b"s")
                time.sleep(1.0)  # one press a second, as test_tui_load does
            out, err = agent.communicate(timeout=ROW_SECONDS * 10 + 60)
            assert agent.returncode == 0, f"{kind}: the legitimate agent was refused: {err[-2000:]}"
            acks[kind] = json.loads(out)["ack_p95_ms"] or float("nan")  # what keys first costs its page: frames wait for an answer
            if flood is not None:
                _stop(flood, kind)
            painted = [float(line.split()[1]) for line in probe.read_text().splitlines() if line.startswith("k ")]
        latencies = []
        j = 0
        for t in keys:
            while j < len(painted) and painted[j] < t:
                j += 1
            if j < len(painted):
                latencies.append((painted[j] - t) * 1000)
                j += 1
        rows[kind] = latencies
    print(f"\ndashboard key -> repaint under floods from another origin, {route} ({ROW_SECONDS:g} s a row, one press a second)")
    for kind, latencies in rows.items():
        print(
            f"  {kind:11s} key p95 {p95(latencies):7.0f} ms  max {max(latencies, default=float('nan')):7.0f} ms  ({len(latencies)} presses)"
            f"  agent's ack p95 {acks[kind]:6.1f} ms"
        )
    for kind, latencies in rows.items():
        assert latencies, f"{kind}: no key press was painted"
    if SECONDS >= 20:
        over = {k: p95(v) for k, v in rows.items() if p95(v) > KEY_P95_MS}
        assert not over, f"key p95 over {KEY_P95_MS:g} ms: {over}"
