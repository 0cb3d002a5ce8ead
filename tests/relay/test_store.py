"""The store, the coalescer, the session log and the exports as units (the socket suites cover them end to end)."""

from __future__ import annotations

import asyncio
import gc
import json
import os
import time
from pathlib import Path

import jsonschema
import pytest

from relay_bridge.core import budget as b
from relay_bridge.core import protocol as p
from relay_bridge.core import synth
from relay_bridge.core.store import Store
from relay_bridge.exports.capture import build_capture
from relay_bridge.exports.report import build_report
from relay_bridge.exports.trace import trace_document
from relay_bridge.relay.notify import Coalescer
from relay_bridge.relay.replay import load_store
from relay_bridge.relay.sessionlog import SessionLog
from tests.liveness import LIVENESS_S

SID = "0a1b2c3d"
SCHEMA = json.loads((Path(__file__).parents[2] / "relay_bridge" / "schema" / "report.v2.json").read_text())


def frame(obj: dict) -> p.AgentFrame:
    decoded = p.decode(json.dumps(obj))
    assert not isinstance(decoded, p.Rejection), decoded
    return decoded


def live_store(sid: str = SID, conn: int = 1) -> Store:
    store = Store()
    store.connect(conn)
    store.apply(conn, frame(synth.hello(sid)))
    return store


def test_phase_coverage_and_relay_states() -> None:
    store = live_store()
    s = store.sessions[SID]
    assert (s.phase, s.coverage) == ("live", "none-observed")
    store.apply(1, frame(synth.status(SID, "tools-registered", "tools are wrapped", ["call a tool"])))
    assert s.phase == "tools-registered"
    store.apply(1, frame(synth.spans_frame(SID, [synth.span(SID, 0, "t", 1.0, 1.0)])))
    assert s.coverage == "running"
    store.apply(1, frame(synth.status(SID, "measuring", coverage="incomplete") | {"reasons": ["wrap of tool x failed"]}))
    assert s.coverage == "incomplete" and "wrap of tool x failed" in s.coverage_reasons()
    store.disconnect(1)
    assert (s.state, s.phase) == ("disconnected", "disconnected")


def test_ledger_highest_rev_wins_and_feeds_unsampled() -> None:
    store = live_store()
    for rev, unsampled in [(2, 5), (1, 99), (3, 7)]:
        store.apply(1, frame({"type": "ledger", "session": SID, "rev": rev, "ledger": {"sessionId": SID, "totals": {"unsampledCalls": unsampled}}}))
    s = store.sessions[SID]
    assert s.ledger_rev == 3 and s.stats.totals.unsampledCalls == 7 and s.stats.totals.calls == 7


def test_tool_registry_rejection_and_withdrawal() -> None:
    store = live_store()
    store.apply(
        1,
        frame(
            synth.tool(
                SID, "search", 1.0, description="find", annotations={"readOnlyHint": True, "destructiveHint": False}, kept={"readOnlyHint": True}
            )
        ),
    )
    store.apply(1, frame(synth.tool(SID, "search", 2.0, description="again", rejected="InvalidStateError: duplicate name")))
    s = store.sessions[SID]
    rec = s.tools["search"]
    assert rec.registered and rec.rejected is None and json.loads(rec.descriptor)["description"] == "find"
    assert rec.annotationsSent == {"readOnlyHint": True, "destructiveHint": False} and rec.annotationsKept == {"readOnlyHint": True}
    assert [e.kind for e in s.timeline][-2:] == ["register", "rejected"]
    assert s.stats.schema_bytes == rec.schemaBytes
    store.apply(1, frame(synth.tool(SID, "search", 3.0, change="unregistered")))
    assert not s.tools["search"].registered and s.stats.schema_bytes == 0


def test_reset_event_clears_numbers_and_keeps_tools() -> None:
    store = live_store()
    store.apply(1, frame(synth.tool(SID, "search", 1.0)))
    store.apply(1, frame(synth.spans_frame(SID, [synth.span(SID, i, "search", i, 1.0) for i in range(3)])))
    store.apply(1, frame(synth.event(SID, 5.0, "reset")))
    s = store.sessions[SID]
    assert s.stats.totals.calls == 0 and s.spans() == [] and s.stats.schema_bytes > 0
    replies = store.apply(1, frame(synth.spans_frame(SID, [synth.span(SID, 3, "search", 9.0, 1.0)])))
    assert replies[-1] == p.Ack(SID, 3) and s.stats.totals.calls == 1


def test_relay_ring_buffer_and_inflight_are_bounded() -> None:
    store = Store(buffer=10)
    store.connect(1)
    store.apply(1, frame(synth.hello(SID)))
    s = store.sessions[SID]
    store.apply(1, frame(synth.start_frame(SID, [(i, "hang", float(i)) for i in range(100, 130)])))
    assert len(s.inflight) == 10
    store.apply(1, frame(synth.spans_frame(SID, [synth.span(SID, i, "t", i, 1.0) for i in range(25)])))
    assert [x.seq for x in s.spans()] == list(range(15, 25)) and s.stats.totals.calls == 25


def test_session_info_is_updated_on_reconnect_and_visibility() -> None:
    store = live_store()
    store.apply(1, frame(synth.event(SID, 1.0, "visibility", state="hidden")))
    assert store.sessions[SID].info.visibility == "hidden"
    store.disconnect(1)
    store.connect(2)
    store.apply(2, frame(synth.hello(SID, title="after reload", resume=store.sessions[SID].resume)))
    s = store.sessions[SID]
    assert (s.state, s.conn, s.info.title, s.hellos) == ("live", 2, "after reload", 2)


async def test_coalescer_hands_out_bursts_once() -> None:
    store = live_store()
    coalescer = Coalescer(store, interval=0.05)
    calls: list[tuple[set[str], bool]] = []
    done = asyncio.Event()

    def listener(dirty: set[str], relay: bool) -> None:
        calls.append((dirty, relay))
        done.set()

    coalescer.subscribe(listener)
    store.drain_changes()
    for seq in range(500):
        store.apply(1, frame(synth.spans_frame(SID, [synth.span(SID, seq, "t", seq, 1.0)])))
    await asyncio.wait_for(done.wait(), LIVENESS_S)
    assert calls == [({SID}, False)]  # 500 frames in one loop turn, one notice
    # A second burst right after the flush waits out the interval: still one notice per burst, never one per frame.
    done.clear()
    for seq in range(500, 600):
        store.apply(1, frame(synth.spans_frame(SID, [synth.span(SID, seq, "t", seq, 1.0)])))
    await asyncio.wait_for(done.wait(), LIVENESS_S)
    assert len(calls) == 2
    coalescer.close()


async def test_a_hurried_session_s_first_changes_go_out_at_once_and_no_more_than_it_was_given() -> None:
    # A tab switch hurries the session it shows: its agent's answer is drawn when it comes, not at the interval's end.
    other = "1a2b3c4d"
    store = live_store()
    store.apply(1, frame(synth.hello(other)))
    coalescer = Coalescer(store, interval=3600.0)  # unhurried, every notice after the first waits an hour
    notices: asyncio.Queue[set[str]] = asyncio.Queue()
    coalescer.subscribe(lambda dirty, relay: notices.put_nowait(dirty))
    store.drain_changes()

    def change(sid: str, seq: int) -> None:
        store.apply(1, frame(synth.spans_frame(sid, [synth.span(sid, seq, "t", seq, 1.0)])))

    async def nothing_out() -> bool:
        for _ in range(3):  # the loop turns a notice made now would go out on (call_soon)
            await asyncio.sleep(0)
        return notices.empty()

    change(SID, 0)
    assert await asyncio.wait_for(notices.get(), LIVENESS_S) == {SID}  # the leading edge
    change(other, 0)  # waits for the interval
    coalescer.hurry({SID}, 3600.0, flushes=2)
    assert await nothing_out(), "another session's change is not hurried"
    change(SID, 1)
    assert await asyncio.wait_for(notices.get(), LIVENESS_S) == {SID, other}, "the hurried session's change takes what waits along"
    change(SID, 2)
    assert await asyncio.wait_for(notices.get(), LIVENESS_S) == {SID}, "and its next one goes out at once too"
    change(SID, 3)
    assert await nothing_out(), "two flushes given, two spent: the interval holds again"
    coalescer.hurry({SID}, 0.0, flushes=2)
    change(SID, 4)
    assert await nothing_out(), "a hurry whose time is over hurries nothing"
    coalescer.close()


def test_session_log_rotates_at_its_size_and_prunes_only_other_runs(tmp_path: Path) -> None:
    for i in range(5):  # an earlier run's parts
        old = tmp_path / f"session-20000101-000000-1-{i + 1:03d}.jsonl"
        old.write_text("{}\n")
        os.utime(old, (1_000_000 + i, 1_000_000 + i))
    log = SessionLog(tmp_path, rotate_bytes=2000, keep_files=3, keep_bytes=10**9)
    raw = json.dumps(synth.hello(SID)).encode()
    for burst in (1, 40):  # one frame, then a burst far past the rotation size in a single flush
        for _ in range(burst):
            log.frame(1, raw)
        log.flush()
    log.close()
    mine = sorted(tmp_path.glob(f"session-{log._stamp}-*.jsonl"))
    others = sorted(set(tmp_path.glob("session-*.jsonl")) - set(mine))
    assert len(others) == 3, "older runs are pruned to keep_files"
    assert sum(len(f.read_text().splitlines()) for f in mine) == 41, "the current run is never pruned"
    line = len(mine[0].read_bytes().splitlines()[0]) + 1
    assert all(f.stat().st_size <= max(2000, line) for f in mine), [f.stat().st_size for f in mine]
    assert all(f.stat().st_mode & 0o777 == 0o600 for f in mine)
    assert all(json.loads(line)["f"]["type"] == "hello" for f in mine for line in f.read_text().splitlines())


@pytest.mark.serial
async def test_the_session_log_writes_within_its_flush_time_and_schedules_nothing_when_idle(tmp_path: Path) -> None:
    """A buffered line is on disk within FLUSH_SECONDS; with nothing buffered the log has no timer on the loop
    (an idle relay is not woken ten times a second), and a write that fails is tried again."""
    loop = asyncio.get_running_loop()
    log = SessionLog(tmp_path)
    log.start()
    await asyncio.sleep(0)
    assert log._timer is None and not loop._scheduled  # type: ignore[attr-defined]  # asyncio's private timer list: what the test counts
    log.frame(1, json.dumps(synth.hello(SID)).encode())
    log.refusal(1, "rate_limited", SID, False, None)
    assert log._timer is not None
    started = time.monotonic()
    while log.path is None or len(log.path.read_text().splitlines()) < 2:
        assert time.monotonic() - started < 0.25, "the line was not written within the promised 250 ms"
        await asyncio.sleep(0.005)
    assert log._timer is None  # flushed, nothing left: no timer
    os.close(log._fd)  # the disk refuses the next write: the line stays buffered and the flush is tried again
    log._fd = os.open(os.devnull, os.O_RDONLY)
    log.frame(1, json.dumps(synth.hello(SID)).encode())
    while log.error is None:
        await asyncio.sleep(0.005)
    assert log._timer is not None and log._buf
    log.close()


def test_report_capture_and_trace_from_a_rich_session(tmp_path: Path) -> None:
    store = live_store()
    store.apply(1, frame(synth.tool(SID, "search", 1.0, description="find")))
    store.apply(1, frame(synth.tool(SID, "snap", 1.0)))
    spans = [
        synth.span(SID, 0, "search", 0.0, 500.0),
        synth.span(SID, 1, "snap", 100.0, 50.0, image_bytes=4000, result_bytes=4200, overlapped=True),
        synth.span(SID, 2, "search", 700.0, 10.0, gap=50.0, is_error=True, error="boom"),
    ]
    store.apply(1, frame(synth.spans_frame(SID, spans)))
    store.apply(1, frame(synth.start_frame(SID, [(3, "search", 800.0)])))
    session = store.sessions[SID]
    report = build_report(session)
    jsonschema.validate(report, SCHEMA)
    assert build_report(session, spans=False)["spans"] == []
    assert [s["seq"] for s in build_report(session, spans=1)["spans"]] == [2]
    assert {r["tool"] for r in build_report(session, tool="snap")["tools"]} == {"snap"}
    trace = trace_document([(f"{session.info.origin} {SID}", session.info.timeOrigin, session.spans())])
    xs = [e for e in trace["traceEvents"] if e["ph"] == "X" and e["cat"] != "gap"]
    assert sorted(e["tid"] for e in xs) == [1, 1, 2]  # the overlapping call got its own lane
    names = {e["args"]["name"] for e in trace["traceEvents"] if e["ph"] == "M"}
    assert f"{session.info.origin} {SID}" in names and "host + model wait" in names
    capture = build_capture(store)
    assert capture["sessions"][0]["facts"]["1"]["overlapped"] is True
    assert capture["sessions"][0]["inflight"][0]["seq"] == 3
    path = tmp_path / "capture.json"
    path.write_text(json.dumps(capture))
    again = load_store(path).sessions[SID]
    assert again.stats.aggregates() == session.stats.aggregates()
    assert again.stats.totals_dict() == session.stats.totals_dict()
    assert {n: json.loads(r.descriptor) for n, r in again.tools.items()} == {n: json.loads(r.descriptor) for n, r in session.tools.items()}
    assert list(again.inflight) == [3]


def test_a_relayed_copy_of_a_direct_session_is_acked_and_ignored() -> None:
    store = live_store()  # the session is here directly on connection 1
    store.apply(1, frame(synth.spans_frame(SID, [synth.span(SID, 0, "t", 1.0, 1.0)])))
    store.connect(2)  # a same-origin tab relays what it heard on the BroadcastChannel
    # The relayer learns nothing about the owner's session: its acks echo its own seqs.
    assert store.apply(2, frame(synth.hello(SID, context="relayed", via="11111111"))) == [p.Ack(SID, -1)]
    replies = store.apply(2, frame(synth.spans_frame(SID, [synth.span(SID, s, "t", 1.0, 1.0) for s in range(2)])))
    assert replies == [p.Ack(SID, 1)]
    s = store.sessions[SID]
    assert s.conn == 1 and s.stats.totals.calls == 1 and store.counters["rejected"] == 0
    assert store.counters["shadowed_sessions"] == 1
    # the direct socket keeps working
    assert store.apply(1, frame(synth.spans_frame(SID, [synth.span(SID, 1, "t", 2.0, 1.0)])))[-1] == p.Ack(SID, 1)


class FrozenClock:
    def __init__(self, epoch: float, mono: float) -> None:
        self.epoch, self.mono = epoch, mono

    def time(self) -> float:
        return self.epoch

    def monotonic(self) -> float:
        return self.mono


def test_every_relay_stamp_comes_from_the_injected_clock() -> None:
    clock = FrozenClock(1_764_000_010.0, 500.0)
    store = Store(clock=clock)
    store.connect(1)
    store.apply(1, frame(synth.hello(SID, time_origin=1_764_000_000_000.0)))
    store.apply(1, frame(synth.start_frame(SID, [(0, "slow", 5.0)])))
    clock.mono = 503.5
    store.apply(1, frame(synth.event(SID, 6.0, "toolcancel", seq=0)))
    store.disconnect(1)
    s = store.sessions[SID]
    assert s.created == 1_764_000_010.0 and s.last_seen == 503.5
    assert (s.inflight[0].seen_at, s.inflight[0].cancelled_at) == (500.0, 503.5)
    attach = next(e for e in s.timeline if e.kind == "attach")
    assert attach.at == 10_000.0  # relay-side facts land on the page clock: 10 s after timeOrigin


def test_a_snapshot_is_not_changed_by_later_frames() -> None:
    store = live_store()
    store.apply(1, frame(synth.tool(SID, "search", 1.0, description="d")))
    store.apply(1, frame(synth.spans_frame(SID, [synth.span(SID, 0, "search", 10.0, 5.0)])))
    store.apply(1, frame(synth.start_frame(SID, [(1, "search", 20.0)])))
    snap = store.snapshot()
    before = build_report(snap.sessions[SID], generated_at=1.0)
    store.apply(1, frame(synth.spans_frame(SID, [synth.span(SID, 2, "search", 30.0, 9.0)])))
    store.apply(1, frame({"type": "update", "session": SID, "seq": 0, "blockingMs": 4.0}))
    store.apply(1, frame(synth.event(SID, 40.0, "toolcancel", seq=1)))
    store.apply(1, frame(synth.event(SID, 41.0, "visibility", state="hidden")))
    store.apply(1, frame({"type": "tool", "session": SID, "change": "unregistered", "name": "search", "at": 50.0}))
    store.apply(1, frame(synth.status(SID, "measuring")))
    store.apply(1, frame({"type": "bye", "session": SID, "reason": "pagehide"}))
    frozen = snap.sessions[SID]
    assert build_report(frozen, generated_at=1.0) == before
    assert frozen.stats.ring[0].blockingMs == 0 and store.sessions[SID].stats.ring[0].blockingMs == 4.0
    assert frozen.inflight[1].cancelled_at is None and frozen.inflight[1].ended_at is None
    assert frozen.info.visibility == "visible" and frozen.tools["search"].registered and frozen.state == "live"
    assert len(frozen.timeline) < len(store.sessions[SID].timeline) and snap.counters["frames"] < store.counters["frames"]


def test_tools_counted_not_measured_reach_the_capture_and_come_back_from_it(tmp_path: Path) -> None:
    """A tool registered before the agent loaded: the ledger says measured false and how many calls
    `toolactivated` counted; the store, the capture and a replay of it all keep that, per tool."""
    store = live_store()
    store.apply(1, frame(synth.tool(SID, "early", 1.0)))
    store.apply(1, frame(synth.tool(SID, "late", 2.0)))
    store.apply(1, frame(synth.spans_frame(SID, [synth.span(SID, 0, "late", 5.0, 1.0)])))
    tools = {"early": {"schemaBytes": 10, "measured": False, "counted": 3}, "late": {"schemaBytes": 10}}
    store.apply(1, frame({"type": "ledger", "session": SID, "rev": 4, "ledger": {"sessionId": SID, "tools": tools}}))
    for at in (3.0, 4.0, 6.0):
        store.apply(1, frame(synth.event(SID, at, "toolactivated", tool="early", counted=True)))
    session = store.sessions[SID]
    assert session.counted_only() == {"early": 3}
    assert session.stats.totals.calls == 1, "counted calls are not measured calls"
    assert [e.at for e in session.timeline_view({"calls"}) if e.kind == "toolactivated"] == [3.0, 4.0, 6.0]
    capture = build_capture(store)
    by_name = {t["name"]: t for t in capture["sessions"][0]["tools"]}
    assert (by_name["early"]["measured"], by_name["early"]["counted"]) == (False, 3)
    assert (by_name["late"]["measured"], by_name["late"]["counted"]) == (True, 0)
    path = tmp_path / "capture.json"
    path.write_text(json.dumps(capture))
    assert load_store(path).sessions[SID].counted_only() == {"early": 3}
    bad = p.decode(json.dumps({"type": "ledger", "session": SID, "rev": 5, "ledger": {"sessionId": SID, "tools": {"early": {"counted": -1}}}}))
    assert isinstance(bad, p.Rejection)


def test_a_snapshot_keeps_the_change_log_its_readers_use() -> None:
    """The dashboard reads `epoch` and `version` of whatever stats it shows; while paused that is a snapshot. A
    snapshot has them as the live stats had them at that moment, and later spans do not move it."""
    store = live_store()
    store.apply(1, frame(synth.tool(SID, "search", 1.0)))
    store.apply(1, frame(synth.tool(SID, "fetch", 1.5)))
    store.apply(1, frame(synth.spans_frame(SID, [synth.span(SID, 0, "search", 10.0, 5.0)])))
    live = store.sessions[SID].stats
    frozen = store.snapshot().sessions[SID].stats
    assert (frozen.epoch, frozen.version) == (live.epoch, live.version)
    store.apply(1, frame(synth.spans_frame(SID, [synth.span(SID, 1, "fetch", 20.0, 5.0)])))
    assert live.version > frozen.version and "fetch" in live.changed_since(frozen.version)
    assert frozen.changed_since(frozen.version) == []


def test_every_frame_kind_after_hello_has_one_handler() -> None:
    import typing

    from relay_bridge.core.store import _HANDLERS

    assert set(_HANDLERS) == set(typing.get_args(p.AgentFrame)) - {p.Hello}


def test_what_a_session_holds_per_span_and_per_tool_is_left_out_of_the_cycle_collector() -> None:
    """A flood of spans under ever new tool names (tests/bench/fair_load.py `budget`) filled a session with 16,384
    rows: every full collection walked them all, and the dashboard's keys waited 100-280 ms behind it. Spans, rows,
    totals and the change log hold only numbers and text, so the collector is never to visit them."""
    store = live_store()
    spans = [synth.span(SID, s, f"tool-{s:05d}", s * 1.0, 1.0) for s in range(2000)]
    for at in range(0, 2000, 500):
        store.apply(1, frame(synth.spans_frame(SID, spans[at : at + 500])))
    stats = store.sessions[SID].stats
    assert len(stats.tools) == 2000
    gc.collect()  # a full collection untracks the dicts that hold nothing it could need to visit
    assert not any(gc.is_tracked(span) for span in stats.ring.values())
    assert not any(gc.is_tracked(row) for row in stats.tools.values())
    assert not gc.is_tracked(stats.totals)
    assert not gc.is_tracked(stats.tools), "the rows' dict is walked on every full collection"
    assert not gc.is_tracked(stats._touched), "the change log is walked on every full collection"
    before, oldest = stats.version, next(iter(stats.ring.values())).tool
    stats.add(p.decode(json.dumps(synth.spans_frame(SID, [synth.span(SID, 2000, "tool-new", 1.0, 1.0)]))).spans[0])  # type: ignore[union-attr]  # a spans frame decodes to Spans
    assert not gc.is_tracked(stats.tools) and not gc.is_tracked(stats._touched), "a new row must not make them tracked again"
    assert stats.changed_since(before) == [oldest, "tool-new"], "newest first: the evicted span's row changed last"


def test_every_timeline_entry_is_sized_as_the_budget_says() -> None:
    """A settle entry's size is worked out without walking its detail: it must be what budget.detail_bytes says,
    whatever the tool's name and whichever optional keys the span brought."""
    store = live_store()
    spans = [synth.span(SID, 0, "t", 0.0, 1.0), synth.span(SID, 1, "a_longer_tool_name", 2.0, 1.0, is_error=True)]
    spans += [{**synth.span(SID, 2, "form", 4.0, 1.0), "outcome": "navigated"}, {**synth.span(SID, 3, "form", 6.0, 1.0), "waitedMs": 3.5}]
    spans += [{**synth.span(SID, 4, "x", 8.0, 1.0), "invokedBy": "terminal"}, synth.span(SID, 5, "é" * 40, 10.0, 123456.5, result_bytes=10**9)]
    store.apply(1, frame(synth.spans_frame(SID, spans)))
    entries = [e for e in store.sessions[SID].timeline if e.kind in ("settle", "error")]
    assert len([e for e in entries if e.kind == "settle"]) == 6
    assert [e.size for e in entries] == [b.detail_bytes(e.detail) + len(e.kind) for e in entries]
