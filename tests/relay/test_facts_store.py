"""Diagnosis facts in the store: one entry per (session, seq), stored once and counted, a bounded window, in
the snapshot, the session log, the capture (the v2 report stays closed and unchanged) and both replays."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema

from relay_bridge.core import budget as b
from relay_bridge.core import protocol as p
from relay_bridge.core import synth
from relay_bridge.core.store import Store
from relay_bridge.exports.capture import build_capture
from relay_bridge.exports.report import build_report
from relay_bridge.relay.replay import load_store
from relay_bridge.relay.server import APPLY_SLICE, Relay, RelayConfig
from relay_bridge.relay.sessionlog import SessionLog
from tests.relay.conftest import TOKEN, open_session, recv_json
from tests.relay.test_protocol import FACTS

SID = "0a1b2c3d"
SCHEMA = json.loads((Path(__file__).parents[2] / "relay_bridge" / "schema" / "report.v2.json").read_text())


def frame(obj: dict) -> p.AgentFrame:
    decoded = p.decode(json.dumps(obj))
    assert not isinstance(decoded, p.Rejection), decoded
    return decoded


def session_with_spans(n: int = 3) -> Store:
    store = Store()
    store.connect(1)
    store.apply(1, frame(synth.hello(SID)))
    store.apply(1, frame(synth.tool(SID, "snap", 1.0)))
    store.apply(1, frame(synth.spans_frame(SID, [synth.span(SID, s, "snap", s * 10.0, 1.0) for s in range(n)])))
    return store


def test_facts_are_stored_once_per_seq_and_counted() -> None:
    store = session_with_spans()
    assert store.apply(1, frame({"type": "facts", "session": SID, "seq": 1, "facts": FACTS})) == []
    store.apply(
        1, frame({"type": "facts", "session": SID, "items": [{"seq": 1, "facts": {"repeat": {"of": 0}}}, {"seq": 2, "facts": {"repeat": {"of": 0}}}]})
    )
    session = store.sessions[SID]
    assert sorted(session.facts) == [1, 2]
    assert session.facts[1].image is not None and session.facts[1].image.fit_bytes == 22000, "the first one stays"
    assert (session.counters.facts, session.counters.facts_duplicates) == (2, 1)
    assert (store.counters["facts"], store.counters["facts_duplicates"]) == (2, 1)
    frozen = store.snapshot().sessions[SID]
    store.apply(1, frame({"type": "facts", "session": SID, "seq": 0, "facts": {}}))
    assert sorted(frozen.facts) == [1, 2], "a snapshot is not changed by later frames"


def test_facts_of_a_session_the_socket_does_not_own_are_refused() -> None:
    store = session_with_spans()
    store.connect(2)
    [err] = store.apply(2, frame({"type": "facts", "session": SID, "seq": 1, "facts": FACTS}))
    assert isinstance(err, p.ErrorFrame) and err.code == p.Code.UNKNOWN_SESSION
    assert store.sessions[SID].facts == {}


def test_the_facts_table_is_a_bounded_window_and_budgeted() -> None:
    store = session_with_spans(0)
    total = 10 * 500
    for start in range(0, total, 500):
        items = [{"seq": s, "facts": {"repeat": {"of": 0}}} for s in range(start, start + 500)]
        store.apply(1, frame({"type": "facts", "session": SID, "items": items}))
    session = store.sessions[SID]
    assert len(session.facts) == b.FACTS_MAX
    assert min(session.facts) == total - b.FACTS_MAX, "the oldest left first"
    assert store.counters["facts_evicted"] == total - b.FACTS_MAX
    assert session.footprint >= b.FACTS_MAX * b.FACTS_BYTES
    before = store.footprint
    store.apply(1, frame(synth.event(SID, 1.0, "reset")))
    assert session.facts == {} and store.footprint < before - (b.FACTS_MAX - 1) * b.FACTS_BYTES, "reset releases them"


def test_full_windows_churn_without_changing_the_footprint() -> None:
    """Past its windows (timeline entries, facts) a session's every span and fact replaces the oldest: its estimated
    bytes stay where they are, and the relay's total stays the sum of its sessions'."""
    store = session_with_spans(0)
    session = store.sessions[SID]

    def send(first: int, n: int) -> None:
        spans = [synth.span(SID, s, "snap", s * 10.0, 1.0) for s in range(first, first + n)]
        items = [{"seq": s, "facts": {"repeat": {"of": 0}}} for s in range(first, first + n)]
        store.apply(1, frame(synth.spans_frame(SID, spans, facts=items)))

    seq = 0
    while len(session.facts) < b.FACTS_MAX:  # 4,096 calls: their timeline entries fill its window too
        send(seq, 500)
        seq += 500
    full, entries = session.footprint, len(session.timeline)
    assert session.timeline_bytes > b.TIMELINE_BYTES - 1024 or entries == b.TIMELINE_MAX, "the timeline's window is full"
    for _ in range(4):
        send(seq, 500)
        seq += 500
    assert len(session.facts) == b.FACTS_MAX and len(session.timeline) == entries
    assert session.footprint == full, "entries that replace the oldest grow nothing"
    assert session.timeline_bytes == sum(e.size for e in session.timeline)
    assert store.footprint == sum(s.footprint for s in store.sessions.values())


def test_facts_over_the_relay_budget_are_refused_and_counted(monkeypatch) -> None:
    store = session_with_spans()
    monkeypatch.setattr(b, "RELAY_BUDGET_BYTES", store.footprint + b.FACTS_BYTES)
    monkeypatch.setattr(b, "RESERVE_POOL_BYTES", 0)  # no small-origin reserve past the total in this test
    replies = store.apply(1, frame({"type": "facts", "session": SID, "items": [{"seq": s, "facts": {}} for s in range(3)]}))
    assert [r.code for r in replies if isinstance(r, p.ErrorFrame)] == [p.Code.LIMIT]
    assert len(store.sessions[SID].facts) == 1
    assert store.counters["limit:budget"] == 2 and store.sessions[SID].counters.limited == 2


def test_facts_reach_the_capture_not_the_report_and_come_back(tmp_path: Path) -> None:
    store = session_with_spans()
    store.apply(1, frame({"type": "facts", "session": SID, "seq": 1, "facts": FACTS}))
    store.apply(1, frame({"type": "facts", "session": SID, "seq": 2, "facts": {"repeat": {"of": 1}}}))
    session = store.sessions[SID]
    report = build_report(session)
    jsonschema.validate(report, SCHEMA)
    assert "jpegBytes" not in json.dumps(report) and "repeat" not in json.dumps(report), "v2 stays closed"
    capture = build_capture(store)
    assert capture["sessions"][0]["diagnosisFacts"] == {"1": FACTS, "2": {"repeat": {"of": 1}}}
    path = tmp_path / "capture.json"
    path.write_text(json.dumps(capture))
    assert load_store(path).sessions[SID].facts == session.facts


def test_facts_go_to_the_session_log_and_a_replay_rebuilds_them(tmp_path: Path) -> None:
    log = SessionLog(tmp_path)
    store = Store()
    frames = [
        synth.hello(SID),
        synth.spans_frame(SID, [synth.span(SID, s, "snap", s * 10.0, 1.0) for s in range(2)]),
        {"type": "facts", "session": SID, "items": [{"seq": 0, "facts": {"bloat": FACTS["bloat"]}}, {"seq": 1, "facts": {"repeat": {"of": 0}}}]},
    ]
    store.connect(1)
    log.connection(1, True)
    for f in frames:
        raw = json.dumps(f).encode()
        decoded = p.decode(raw)
        assert not isinstance(decoded, p.Rejection)
        store.apply(1, decoded)
        log.frame(1, raw, decoded)
    log.flush()
    log.close()
    assert log.path is not None
    again = load_store(log.path).sessions[SID]
    assert again.facts == store.sessions[SID].facts
    assert again.facts[0].bloat is not None and again.facts[0].bloat.whitespace_bytes == 300


def test_facts_riding_on_a_spans_frame_are_stored_after_its_spans() -> None:
    store = Store()
    store.connect(1)
    store.apply(1, frame(synth.hello(SID)))
    spans = [synth.span(SID, s, "snap", s * 10.0, 1.0) for s in range(3)]
    riding = [{"seq": 0, "facts": {"repeat": {"of": 0}}}, {"seq": 2, "facts": FACTS}]
    [ack] = store.apply(1, frame(synth.spans_frame(SID, spans, facts=riding)))
    assert isinstance(ack, p.Ack) and ack.seq == 2
    session = store.sessions[SID]
    assert sorted(session.facts) == [0, 2] and session.counters.facts == 2
    assert session.facts[2].image is not None and session.facts[2].image.fit_bytes == 22000
    # the same facts again (a re-sent batch): counted as duplicates, the spans' ack unchanged
    replies = store.apply(1, frame(synth.spans_frame(SID, spans, facts=riding)))
    assert [type(r) for r in replies] == [p.Ack] and session.counters.facts_duplicates == 2


def test_a_spans_frame_carries_at_most_a_frames_worth_of_facts() -> None:
    too_many = [{"seq": s, "facts": {}} for s in range(p.MAX_FACTS_PER_FRAME + 1)]
    assert isinstance(p.decode(json.dumps(synth.spans_frame(SID, [], facts=too_many))), p.Rejection)
    assert isinstance(p.decode(json.dumps(synth.spans_frame(SID, [], facts=[{"seq": -1, "facts": {}}]))), p.Rejection)


async def test_a_sliced_batch_keeps_its_facts_and_the_log_replays_them(tmp_path: Path) -> None:
    """A batch above the server's slice is applied in parts: the facts go with the last, and are logged."""
    relay = Relay(RelayConfig(port=0, token=TOKEN, log_dir=tmp_path / "logs"))
    await relay.start()
    try:
        ws = await open_session(relay, SID)
        n = APPLY_SLICE * 2 + 7
        spans = [synth.span(SID, s, "snap", s * 10.0, 1.0) for s in range(n)]
        riding = [{"seq": s, "facts": {"repeat": {"of": 0}}} for s in range(1, n)]
        await ws.send(json.dumps(synth.spans_frame(SID, spans, facts=riding)))
        ack = await recv_json(ws)
        assert (ack["type"], ack["seq"]) == ("ack", n - 1)
        live = relay.store.sessions[SID]
        assert sorted(live.facts) == list(range(1, n)) and live.counters.facts == n - 1
        await ws.close()
    finally:
        await relay.stop()
    [part] = sorted((tmp_path / "logs").rglob("*.jsonl*"))
    assert load_store(part).sessions[SID].facts == live.facts


def test_short_bloat_facts_are_written_whole_in_the_capture() -> None:
    # An agent whose relay reads rows leaves the zero figures out (docs/protocol.md); the capture has them all.
    store = session_with_spans()
    store.apply(1, frame({"type": "facts", "session": SID, "seq": 1, "facts": {"bloat": {"textBytes": 9, "base64Bytes": 4, "base64Runs": 1}}}))
    bloat = build_capture(store)["sessions"][0]["diagnosisFacts"]["1"]["bloat"]
    assert bloat == {"textBytes": 9, "whitespaceBytes": 0, "repeatedKeyBytes": 0, "repeatedKeyRows": 0, "base64Bytes": 4, "base64Runs": 1}
