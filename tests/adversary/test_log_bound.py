"""A page holding the token cannot fill the disk through the session log: the current run is bounded by its own
cap, what the cap deletes is counted, and a replay of a capped run opens and says what is missing (audit: 548
parts, 8.2 GB in ~185 s from valid traffic only)."""

from __future__ import annotations

import json
from pathlib import Path

from relay_bridge.core import synth
from relay_bridge.relay.replay import load_store
from relay_bridge.relay.server import Relay
from tests.relay.conftest import open_session, send_spans

SID = "10c0ffee"
ROTATE, CAP = 40_000, 200_000
BATCHES, PER_BATCH = 200, 20  # ~10 KB a line (several a part): ~10x the cap in all


def _disk(directory: Path) -> int:
    return sum(f.stat().st_size for f in directory.glob("session-*.jsonl"))


def _lines(directory: Path) -> int:
    return sum(len(f.read_bytes().splitlines()) for f in directory.glob("session-*.jsonl"))


async def test_a_flood_of_valid_frames_keeps_the_run_under_its_cap_and_counts_what_went(relay: Relay, tmp_path: Path) -> None:
    log = relay.session_log
    assert log is not None
    # The relay makes its log with the defaults (1 GiB); a small cap makes the same attack cheap to run.
    log.rotate_bytes, log.run_bytes = ROTATE, CAP
    logs = tmp_path / "logs"
    ws = await open_session(relay, SID)
    peak = 0
    for batch in range(BATCHES):
        await send_spans(ws, SID, range(batch * PER_BATCH, (batch + 1) * PER_BATCH))  # acked: accepted and logged
        log.flush()  # what the 100 ms timer does, now: the bound must hold after every write, not only at the end
        peak = max(peak, _disk(logs))
        assert peak <= CAP, f"the run's log is {peak} bytes on disk, over its {CAP}-byte cap"
    assert log.capped_parts > 0 and log.capped_bytes > 0 and log.capped is not None
    # Nothing lost silently: every line written is on disk or counted as deleted (open + hello + one per batch).
    assert _lines(logs) + log.capped_lines == 2 + BATCHES
    newest = max(logs.glob("session-*.jsonl"), key=lambda f: f.stat().st_mtime_ns)
    assert json.loads(newest.read_bytes().splitlines()[-1])["f"]["spans"][-1]["seq"] == BATCHES * PER_BATCH - 1
    print(
        f"\nlog bound: {BATCHES} frames, {peak} bytes peak on disk (cap {CAP}), {log.capped_lines} lines in "
        f"{log.capped_parts} parts ({log.capped_bytes} bytes) deleted and counted"
    )
    await ws.close()
    await relay.stop()
    # The first part (the hello) and the newest are kept: the replay opens from the first part, knows the session,
    # has the newest spans, and says which parts are missing instead of passing for the whole run.
    first = min(logs.glob("session-*.jsonl"))
    assert first.name.endswith("-001.jsonl")
    notes: list[str] = []
    again = load_store(first, notes=notes)
    assert any("missing" in note and "002" in note for note in notes), notes
    held = again.sessions[SID].received  # which seqs the replayed store holds (the ring keeps only the newest)
    assert held.has(BATCHES * PER_BATCH - 1) and held.has(0) and not held.has(PER_BATCH * 5)


def test_a_replay_reads_parts_past_999_and_says_which_are_missing(tmp_path: Path) -> None:
    """A long capped run numbers its parts past 999 and keeps the first part with the newest: all are read."""

    def line(t: float, frame: dict[str, object]) -> str:
        return json.dumps({"t": t, "c": 1, "f": frame}) + "\n"

    stamp = "session-20261130-000000-1"
    (tmp_path / f"{stamp}-001.jsonl").write_text(line(1.0, synth.hello(SID)))
    (tmp_path / f"{stamp}-999.jsonl").write_text(line(2.0, synth.spans_frame(SID, [synth.span(SID, 1, "t", 1.0, 1.0)])))
    (tmp_path / f"{stamp}-1000.jsonl").write_text(line(3.0, synth.spans_frame(SID, [synth.span(SID, 2, "t", 2.0, 1.0)])))
    notes: list[str] = []
    again = load_store(tmp_path / f"{stamp}-001.jsonl", notes=notes)
    assert [s.seq for s in again.sessions[SID].spans()] == [1, 2]
    assert len(notes) == 1 and "parts 002 to 998 of this run are missing" in notes[0], notes
