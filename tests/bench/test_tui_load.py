"""Benchmark: the running dashboard under load, each row against the headless relay in the same run.

`wmcp-top` runs as its own process on a real pseudo-terminal (160x45), relay and UI on one event loop, with
latency probes on (WMCP_TOP_PROBE, tui/probes/latency.py). A load process plays page agents, one WebSocket per session,
sending a `spans` frame every 100 ms per session. The measurement starts once that load is steady (every session
set up, held by the relay and drawn for half a second: `_wait_steady`). Meanwhile this test presses `s` (sort)
once a second. Then the same load runs against `wmcp-top relay` (the headless relay, no screen): the baseline,
so the dashboard's own share is the difference, whatever else the machine is doing. Figures per row:

- CPU share: the process's user+system time over the load window, as a share of one core (dashboard, relay);
- RSS: the dashboard's peak resident set (VmHWM);
- frame-to-screen p95: from a frame of the visible session leaving the load process to the first repaint that
  shows its spans (the app stamps after the refresh; both use CLOCK_MONOTONIC);
- key-to-repaint p95: from writing `s` to the terminal to the repaint showing the new sort order;
- longest loop hold: of each turn of the app's event loop over 20 ms, the main thread's own CPU time in that
  turn (its work holding the loop; on a busy machine the turn's wall time also counts waiting for a core);
- machine: the load average and the whole machine's busy share while the row ran (other work skews CPU figures).

Rows (issue 16): 64 sessions x 2 spans/s (<= 5 % of a core), 64 x 16 (<= 20 %), 1 x 1,000 (<= 15 %), 8 x 125
(<= 40 %); RSS <= 100 MB at 64 sessions (150 MB otherwise); key p95 <= 100 ms, frame p95 <= 300 ms in every row.
Memory is held always; the time figures are printed with the machine's load and asserted by the full run only
(tests/bench/judge.py).
The 10,000-tool case (issue 11 item 6): one session gets 10,000 spans of distinct tools, then 100 calls/s over
them; key p95 <= 100 ms and /healthz p95 <= 100 ms, polled every 100 ms. All 10,000 rows are kept
(relay_bridge.core.budget.MAX_TOOL_ROWS is above that), so the table's top-rows window is what keeps it cheap.
The relay's side of a tab switch (issue 33): 64 agents that follow watch frames, the tab switched again and
again; each switch tells exactly two agents (the tab left, the tab opened), the relay's work and the time until
both were told are its time targets.

  pytest tests/bench/test_tui_load.py -m bench -s      (WMCP_BENCH_SECONDS sets each run's length, default 20)
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import random
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # the load process runs this file as a script
from tests.bench import judge, procs  # noqa: E402

SECONDS = float(os.environ.get("WMCP_BENCH_SECONDS", "20"))
TICK = 0.1
COLS, LINES = 160, 45
MANY_TOOLS = 10_000
STEADY_PAINTS = 0.5  # seconds of the steady load the dashboard has drawn before the measurement starts
GO_WAIT_S = 120.0  # the load's longest wait for the measurement to begin (as _wait_steady's deadline)


@dataclass(frozen=True)
class Row:
    name: str
    sessions: int
    spans_per_s: float  # per session
    tools: int
    cpu: float  # target share of one core for the dashboard process (issue 16)
    rss_mb: float
    # Beside the target, the dashboard's own share (its CPU less the headless relay's in the same run, which
    # cancels the machine's drift), a regression tripwire between today's figures (64x2 5-7 %, 64x16 8 %,
    # 1x1000 10-12 %, 8x125 5-8 %) and those before issue 16's work (21, 31, 31, 17 %). Both are time targets.
    own_guard: float = 1.0


ROWS = [
    Row("64x2", 64, 2, 30, 0.05, 100.0, own_guard=0.14),
    Row("64x16", 64, 16, 30, 0.20, 100.0, own_guard=0.20),
    Row("1x1000", 1, 1000, 20, 0.15, 150.0, own_guard=0.22),
    Row("8x125", 8, 125, 6, 0.40, 150.0, own_guard=0.25),
]
KEY_P95_MS, FRAME_P95_MS, HEALTHZ_P95_MS = 100.0, 300.0, 100.0


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.floor(0.95 * len(ordered)))] if ordered else float("nan")


def p50(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.floor(0.5 * len(ordered)))] if ordered else float("nan")


# -- the load process -----------------------------------------------------------------------------------------


async def _load(url: str, seconds: float, out: Path, sessions: int, rate: float, tools_n: int, many: int) -> None:
    """`sessions` agents at `rate` spans/s each over `tools_n` tools. With `many`, session 0 first sends that
    many spans of distinct tools, then calls them at random."""
    from websockets.asyncio.client import connect

    sys.path.insert(0, str(ROOT))
    from relay_bridge.core import synth

    sids = [f"{0xBE000000 + i:08x}" for i in range(sessions)]
    names = [f"tool_{j:02d}" for j in range(tools_n)]
    sent: list[tuple[str, int, float]] = []
    sockets = []
    for i, sid in enumerate(sids):
        ws = await connect(url, max_size=1 << 20, compression=None)
        await ws.recv()  # welcome
        await ws.send(json.dumps(synth.hello(sid, f"https://site{i}.example")))
        await ws.recv()  # ack: the session exists (the first one is the visible tab)
        for j, name in enumerate(names):
            await ws.send(json.dumps(synth.tool(sid, name, 1.0 + j, description=f"{name} things")))
        sockets.append(ws)

    async def drain(ws: Any) -> None:
        try:
            async for _ in ws:
                pass
        except Exception:
            return

    readers = [asyncio.create_task(drain(ws)) for ws in sockets]
    seqs = [0] * sessions
    if many:
        rng = random.Random(11)
        while seqs[0] < many:  # 500 a frame (the protocol's cap), each span a tool of its own
            first = seqs[0]
            batch = [synth.span(sids[0], s, f"many_{s:05d}", 100.0 + s, 1.0 + s % 97, gap=1.0) for s in range(first, min(many, first + 500))]
            seqs[0] += len(batch)
            await sockets[0].send(json.dumps(synth.spans_frame(sids[0], batch), separators=(",", ":")))
            await asyncio.sleep(0.05)
        names = [f"many_{j:05d}" for j in range(many)]
    ready = out.with_suffix(".ready")  # set-up done, the steady load starts: the measurement may begin
    ready.with_suffix(".tmp").write_text(f"{time.monotonic():.6f}")
    ready.with_suffix(".tmp").rename(ready)
    rng = random.Random(7)
    start = time.monotonic()
    owed = [rng.random() for _ in range(sessions)]  # spread the sessions' frames over the tick
    tick = 0
    # The steady load runs until the test has seen it drawn and begins to measure (its `.go` file), then `seconds`
    # more: counted from `ready`, a starved short pass spent them all waiting for the first paints and measured a
    # load already over (no frame to time).
    go = out.with_suffix(".go")
    until = start + GO_WAIT_S
    measuring = False
    while time.monotonic() < until:
        if not measuring and go.exists():
            measuring = True
            until = time.monotonic() + seconds
        tick += 1
        for i, (sid, ws) in enumerate(zip(sids, sockets)):
            owed[i] += rate * TICK
            n = int(owed[i])
            if n == 0:
                continue
            owed[i] -= n
            spans = []
            for _ in range(n):
                seq = seqs[i]
                seqs[i] += 1
                tool = names[rng.randrange(len(names))] if many else names[seq % len(names)]
                spans.append(
                    synth.span(
                        sid, seq, tool, 100.0 + seq * 8.0, 1.0 + (seq * 7919 % 200) / 10, result_bytes=200 + seq % 5000, gap=2.0 if seq else None
                    )
                )
            await ws.send(json.dumps(synth.spans_frame(sid, spans), separators=(",", ":")))
            sent.append((sid, seqs[i] - 1, time.monotonic()))
        next_at = start + tick * TICK
        await asyncio.sleep(max(0.0, next_at - time.monotonic()))
    elapsed = time.monotonic() - start
    await asyncio.sleep(0.5)
    for task in readers:
        task.cancel()
    for ws in sockets:
        await ws.close()
    out.write_text(json.dumps({"sent": sent, "spans": sum(seqs), "seconds": elapsed, "visible": sids[0]}))


# -- the process under test ----------------------------------------------------------------------------------


def _wait_steady(app: procs.Wmcp, ready: Path, sessions: int, probe: Path | None) -> None:
    """Until the load is steady: the load process has set every session up (its `ready` file), the relay holds
    them all, and (the dashboard) has painted the visible session's table over at least STEADY_PAINTS seconds
    of the steady load, so its tabs are built and the first full draw is done. Measuring from a fixed delay
    instead caught the set-up on a slow machine (key presses behind 64 tabs being built, the CPU of 2,000 tool
    frames)."""
    deadline = time.monotonic() + 120
    while True:
        assert time.monotonic() < deadline, "the load never became steady"
        if ready.exists() and procs.healthz_sessions(app.port) >= sessions:
            if probe is None:
                return
            since = float(ready.read_text())
            painted = [
                float(line.split()[1])
                for line in (probe.read_text().splitlines() if probe.exists() else [])
                if line.startswith("f ") and float(line.split()[1]) >= since
            ]
            if painted and painted[-1] - painted[0] >= STEADY_PAINTS:
                return
        time.sleep(0.02)  # polling the condition above, not standing in for it


def run_under_load(tmp_path: Path, row: Row, *, headless: bool, many: int = 0) -> dict[str, Any]:
    """Start `wmcp-top` (or `wmcp-top relay`), play the load, measure. Returns the figures."""
    run = tmp_path / ("relay" if headless else "app")
    probe = run / "probe.txt"
    run.mkdir(parents=True)
    health: list[float] = []
    with procs.wmcp(run, headless=headless, probe=None if headless else probe, size=(COLS, LINES)) as app:
        result = run / "load.json"
        load = subprocess.Popen(
            [
                sys.executable,
                __file__,
                "load",
                app.ws_url,
                str(SECONDS),
                str(result),
                str(row.sessions),
                str(row.spans_per_s),
                str(row.tools),
                str(many),
            ],
            cwd=ROOT,
        )
        _wait_steady(app, result.with_suffix(".ready"), row.sessions, None if headless else probe)
        result.with_suffix(".go").touch()  # the load's `seconds` begin now
        cpu0, wall0, m0 = procs.cpu_seconds(app.proc.pid), time.monotonic(), procs.machine()
        load0 = os.getloadavg()[0]
        keys: list[float] = []
        next_key = time.monotonic()
        while load.poll() is None and time.monotonic() - wall0 < SECONDS - 0.5:
            now = time.monotonic()
            if not headless and now >= next_key:
                keys.append(now)
                app.key(b"s")
                next_key = now + 1.0
            if many:
                health.append(procs.healthz_ms(app.port))
            time.sleep(0.1 if many else max(0.0, min(0.2, next_key - time.monotonic())))
        cpu1, wall1, m1 = procs.cpu_seconds(app.proc.pid), time.monotonic(), procs.machine()
        load1 = os.getloadavg()[0]
        rss_mb = procs.status_kb(app.proc.pid, "VmHWM") / 1024
        assert load.wait(SECONDS + 120) == 0

    data = json.loads(result.read_text())
    frames, keys_painted, stalls = [], [], []
    for line in probe.read_text().splitlines() if probe.exists() else []:
        parts = line.split()
        if parts[0] == "f":
            frames.append((float(parts[1]), parts[2], int(parts[3])))
        elif parts[0] == "k":
            keys_painted.append(float(parts[1]))
        elif parts[0] == "s" and wall0 <= float(parts[1]) <= wall1:
            stalls.append((float(parts[2]), float(parts[3])))
    visible = data["visible"]
    painted = sorted((t, acked) for t, sid, acked in frames if sid == visible)
    latencies = []
    i = 0
    for sid, seq, t_sent in data["sent"]:
        if sid != visible or t_sent < wall0:
            continue
        while i < len(painted) and (painted[i][1] < seq or painted[i][0] < t_sent):
            i += 1
        if i == len(painted):
            break
        latencies.append((painted[i][0] - t_sent) * 1000)
    key_lat = []
    j = 0
    for t in keys:
        while j < len(keys_painted) and keys_painted[j] < t:
            j += 1
        if j < len(keys_painted):
            key_lat.append((keys_painted[j] - t) * 1000)
            j += 1
    return {
        "cpu": (cpu1 - cpu0) / (wall1 - wall0),
        "rss_mb": rss_mb,
        "frames": latencies,
        "keys": key_lat,
        "health": health,
        "stall_max_ms": max((late for late, _ in stalls), default=0.0),
        "hold_cpu_max_ms": max((cpu for _, cpu in stalls), default=0.0),
        "holds_over_50ms": sum(1 for _, cpu in stalls if cpu > 50),
        "rate": data["spans"] / data["seconds"],
        "machine_busy": procs.cores_busy(m0, m1),
        "loadavg": (load0 + load1) / 2,
    }


def _report(title: str, app: dict[str, Any], relay: dict[str, Any] | None) -> None:
    """The figures; `relay` None: the short pass ran no headless baseline (_baseline)."""
    nan = float("nan")
    base = relay or {"cpu": nan, "rss_mb": nan, "health": [], "loadavg": nan, "machine_busy": nan}
    print()
    print(
        f"{title}: {app['rate']:,.0f} spans/s for {SECONDS:.0f} s over real sockets, {COLS}x{LINES} pty"
        + ("" if relay else " (short pass: no headless baseline)")
    )
    print(
        f"  dashboard CPU      {app['cpu'] * 100:5.1f} % of one core   headless relay {base['cpu'] * 100:5.1f} %   "
        f"dashboard's own share {(app['cpu'] - base['cpu']) * 100:5.1f} %"
    )
    print(f"  dashboard RSS      {app['rss_mb']:5.1f} MB (peak)   relay {base['rss_mb']:5.1f} MB")
    print(f"  frame-to-screen    p95 {p95(app['frames']):5.0f} ms, p50 {p50(app['frames']):.0f} ms over {len(app['frames'])} frames")
    print(f"  key-to-repaint     p95 {p95(app['keys']):5.0f} ms over {len(app['keys'])} presses of `s`")
    if app["health"]:
        print(
            f"  /healthz           p95 {p95(app['health']):5.0f} ms, max {max(app['health']):.0f} ms over {len(app['health'])} polls "
            f"(headless relay: p95 {p95(base['health']):.0f} ms)"
        )
    print(
        f"  longest loop hold  {app['hold_cpu_max_ms']:5.0f} ms of the app's own CPU ({app['holds_over_50ms']} over 50 ms); "
        f"{app['stall_max_ms']:.0f} ms of wall time, the rest waiting for a core"
    )
    print(
        f"  machine            load average {app['loadavg']:.1f} / {base['loadavg']:.1f}, "
        f"{app['machine_busy']:.1f} / {base['machine_busy']:.1f} of {os.cpu_count()} cores busy (dashboard run / relay run)"
    )


def _check(app: dict[str, Any], relay: dict[str, Any] | None, cpu: float | None, rss_mb: float, own_guard: float | None = None) -> None:
    """Memory and keeping up are held always. Time figures (CPU share, latencies) are time targets
    (tests/bench/judge.py): printed met or not in every run, asserted by the full run, with the machine's load
    beside them (on a shared machine a latency is mostly the wait for a core)."""
    # The run produced its figures; three frames at least are what a judged run needs (a starved short pass may
    # match only one or two).
    assert app["frames"] and app["keys"], "no probe: the figures were not produced"
    assert len(app["frames"]) >= 3 or not judge.judging(), "too few probes to judge"
    assert app["rss_mb"] <= rss_mb, f"dashboard RSS {app['rss_mb']:.1f} MB > {rss_mb} MB"
    others = max(app["machine_busy"] - app["cpu"], relay["machine_busy"] - relay["cpu"] if relay else 0.0)
    print(f"  (other processes kept {others:.1f} of {os.cpu_count()} cores busy)")
    # A full pass (>= 20 s) has enough samples for the targets; a shorter one gets 1.5x headroom on latencies.
    slack = 1.0 if SECONDS >= 20 else 1.5
    checks = [
        judge.at_most("key p95 ms", p95(app["keys"]), KEY_P95_MS * slack, ".0f"),
        judge.at_most("frame p95 ms", p95(app["frames"]), FRAME_P95_MS * slack, ".0f"),
    ]
    if cpu is not None:
        checks.append(judge.at_most("dashboard CPU share", app["cpu"], cpu))
    if own_guard is not None and relay is not None:
        checks.append(judge.at_most("dashboard's own CPU share", app["cpu"] - relay["cpu"], own_guard))
    if app["health"]:
        checks.append(judge.at_most("/healthz p95 ms", p95(app["health"]), HEALTHZ_P95_MS * slack, ".0f"))
    judge.time_targets(checks)


def _baseline(tmp_path: Path, row: Row, many: int = 0) -> dict[str, Any] | None:
    """The same load against the headless relay: what the dashboard's own share is judged against. The short
    pass judges no share (tests/bench/judge.py) and skips it: half of this file's time there."""
    return run_under_load(tmp_path, row, headless=True, many=many) if judge.judging() else None


@pytest.mark.bench
@pytest.mark.parametrize("row", ROWS, ids=[r.name for r in ROWS])
def test_dashboard_under_load(tmp_path: Path, row: Row) -> None:
    relay = _baseline(tmp_path, row)
    app = run_under_load(tmp_path, row, headless=False)
    _report(f"{row.sessions} session{'s' if row.sessions > 1 else ''} x {row.spans_per_s:g} spans/s, {row.tools} tools", app, relay)
    _check(app, relay, row.cpu, row.rss_mb, row.own_guard)


@pytest.mark.bench
def test_ten_thousand_tools_do_not_freeze_the_loop(tmp_path: Path) -> None:
    row = Row("10k-tools", 1, 100, 1, 1.0, 150.0)
    relay = _baseline(tmp_path, row, many=MANY_TOOLS)
    app = run_under_load(tmp_path, row, headless=False, many=MANY_TOOLS)
    _report(f"1 session with {MANY_TOOLS:,} distinct tools, then 100 calls/s over them", app, relay)
    _check(app, relay, None, row.rss_mb)


# -- the relay's side of a tab switch (issue 33) -----------------------------------------------------------------

SWITCH_SESSIONS = 64
TOLD_P95_MS = 50.0  # a switch's watch frames reach both agents (the frame -> screen budget is 300 ms in all)
SHOW_COST_US = 1000.0  # the relay's own work for one switch: working out whom to tell, at 64 sessions


@pytest.mark.bench
async def test_a_tab_switch_costs_the_relay_two_frames(tmp_path: Path) -> None:
    """64 agents that follow watch frames on real sockets to the relay; the dashboard switches tabs again and
    again (relay_bridge.core.watching, as tui/app.py's tell_watching does). Held always: each switch tells exactly the
    tab left (unwatched) and the tab opened (watched), nobody else. Time targets: the relay's own work per switch
    and the time until both agents were told."""
    from websockets.asyncio.client import connect

    from relay_bridge.core import synth
    from relay_bridge.relay.server import Relay, RelayConfig

    relay = Relay(RelayConfig(port=0, token="ab" * 16, log_dir=None))
    await relay.start()
    sids = [f"{0xCA000000 + i:08x}" for i in range(SWITCH_SESSIONS)]
    told: dict[str, list[tuple[float, bool]]] = {sid: [] for sid in sids}
    sockets = []
    try:
        for sid in sids:
            ws = await connect(f"ws://127.0.0.1:{relay.port}/relay?t={'ab' * 16}", compression=None)
            await ws.recv()  # welcome
            await ws.send(json.dumps({**synth.hello(sid), "cadence": True}))
            assert json.loads(await ws.recv())["type"] == "ack"
            assert json.loads(await ws.recv())["watched"] is False  # nobody watches yet
            sockets.append(ws)

        async def listen(sid: str, ws: Any) -> None:
            async for raw in ws:
                frame = json.loads(raw)
                if frame["type"] == "watch":
                    told[sid].append((time.perf_counter(), frame["watched"]))

        readers = [asyncio.create_task(listen(sid, ws)) for sid, ws in zip(sids, sockets)]
        switches = max(40, int(SECONDS * 20))
        cost_us, told_ms = [], []
        for n in range(switches):
            sid, left = sids[n % SWITCH_SESSIONS], sids[(n - 1) % SWITCH_SESSIONS] if n else None
            before = {s: len(told[s]) for s in sids}
            started = time.perf_counter()
            relay.watching.show("dashboard", {sid})
            cost_us.append((time.perf_counter() - started) * 1e6)
            deadline = time.monotonic() + procs.LIVENESS_S
            while len(told[sid]) == before[sid] or (left is not None and len(told[left]) == before[left]):
                assert time.monotonic() < deadline, f"switch {n}: the agents were not told"
                await asyncio.sleep(0.001)
            told_ms.append((max(told[sid][-1][0], told[left][-1][0] if left else 0.0) - started) * 1000)
            assert told[sid][-1][1] is True and (left is None or told[left][-1][1] is False)
        await asyncio.sleep(0.05)  # any stray frame would have arrived by now (one loop turn is enough)
        frames = sum(len(v) for v in told.values())
        for task in readers:
            task.cancel()
    finally:
        for ws in sockets:
            await ws.close()
        await relay.stop()
    print()
    print(
        f"a tab switch among {SWITCH_SESSIONS} sessions, {switches} switches: the relay's own work p50 {p50(cost_us):.0f} µs, "
        f"p95 {p95(cost_us):.0f} µs; both agents told p50 {p50(told_ms):.1f} ms, p95 {p95(told_ms):.1f} ms; {frames} watch frames"
    )
    assert frames == 2 * switches - 1, f"{frames} watch frames for {switches} switches: only the tab left and the tab opened are told"
    judge.time_targets(
        [
            judge.at_most("the relay's work per switch, p95 µs", p95(cost_us), SHOW_COST_US, ".0f"),
            judge.at_most("both agents told, p95 ms", p95(told_ms), TOLD_P95_MS, ".1f"),
        ]
    )


if __name__ == "__main__" and len(sys.argv) == 9 and sys.argv[1] == "load":
    asyncio.run(_load(sys.argv[2], float(sys.argv[3]), Path(sys.argv[4]), int(sys.argv[5]), float(sys.argv[6]), int(sys.argv[7]), int(sys.argv[8])))
