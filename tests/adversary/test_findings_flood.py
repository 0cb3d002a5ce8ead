"""The findings under one site's flood (issue 48): four origins x 16 sessions, the same 1,024 tool names with
slightly different definitions (tests/findings/flood.py). What load cannot flip: the cross-tool analysis stays
within footprint's limits, shared fairly (another origin's tools are still compared), its findings are bounded,
`diagnose` on the flood's capture completes in bounded memory, and the `f` view opens before the rules have run
(they run off the loop). Also the forgeries: a page of another origin cannot file a finding under a victim's
session, and a page's facts cannot claim a saving larger than its calls carried. Times are in
tests/bench/test_findings_flood.py."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Static

from relay_bridge.cli import write_json
from relay_bridge.core import synth
from relay_bridge.core.limits import LIMITS
from relay_bridge.core.store import Store
from relay_bridge.exports.capture import build_capture
from relay_bridge.findings import diagnose, from_session
from relay_bridge.findings.common import carried_tokens
from relay_bridge.findings.document import session_findings
from relay_bridge.findings.schema import MAX_DIVERGED, MAX_SIMILAR, catalog
from tests.findings.builders import BloatFacts, Facts, attach
from tests.findings.flood import ORIGINS, SESSIONS_PER_ORIGIN, flood_into
from tests.findings.test_diagnose_files import run
from tests.frames import frame
from tests.liveness import LIVENESS_S
from tests.tui.helpers import live_app, open_page, until
from tui.screens.findings import FindingsScreen

VICTIM = "0f0f0f0f"
VICTIM_ORIGIN = "https://victim.example"


def victim_into(store: Store, conn: int = 1) -> None:
    """A page of its own origin, with two near-identical tools (a real schema.similar of its own)."""
    store.connect(conn, VICTIM_ORIGIN)
    store.apply(conn, frame(synth.hello(VICTIM, VICTIM_ORIGIN)))
    for name in ("find_orders", "search_orders"):
        store.apply(conn, frame(synth.tool(VICTIM, name, 1.0, description="find the orders of the customer by date and status")))
    store.apply(conn, frame(synth.tool(VICTIM, "tool_0000", 1.0, description="the victim's own tool")))


# The flood less one session an origin: the relay holds 64 live sessions, and the other pages need theirs.
ROOM = SESSIONS_PER_ORIGIN - 1


def test_the_cross_tool_analysis_is_bounded_and_fair_under_the_flood() -> None:
    store = Store()
    flood_into(store, sessions=ROOM)
    victim_into(store)
    inputs = [from_session(s) for s in store.sessions.values()]
    found = catalog(inputs)
    cover = found.coverage
    assert cover["compared"] <= LIMITS.tools < cover["tools"] and not cover["complete"]
    assert sum(o["operations"] for o in cover["byOrigin"].values()) <= LIMITS.similarity_budget
    assert sum(o["budget"] for o in cover["byOrigin"].values()) <= LIMITS.similarity_budget
    # The victim's origin asked for little: it got all of it, whatever the flood's four origins asked.
    mine = cover["byOrigin"][VICTIM_ORIGIN]
    assert mine["compared"] == mine["tools"] == 3 and mine["complete"]
    assert any(f.rule == "schema.similar" and f.session == VICTIM for f in found.findings)
    # The flood's origins share the rest equally (water-filling: within one tool of each other).
    flood = [cover["byOrigin"][o]["compared"] for o in ORIGINS]
    assert max(flood) - min(flood) <= 1 and sum(flood) == LIMITS.tools - 3
    # Bounded findings: at most MAX_DIVERGED an origin, MAX_SIMILAR a session.
    diverged = [f for f in found.findings if f.rule == "schema.diverged"]
    assert 0 < len(diverged) <= MAX_DIVERGED * len(ORIGINS)
    assert all(len(f.origins) == 1 and f.session == "" and len(f.sessions) >= 2 for f in diverged)
    per_session: dict[str, int] = {}
    for f in found.findings:
        if f.rule == "schema.similar":
            per_session[f.session] = per_session.get(f.session, 0) + 1
    assert max(per_session.values()) <= MAX_SIMILAR


def test_no_page_files_a_finding_under_another_origins_session() -> None:
    """The flood registers the victim's tool name `tool_0000` with other definitions, from four other origins:
    no finding draws on the victim's session but its own, and each cross-session finding names only sessions of
    the origin it came from."""
    store = Store()
    flood_into(store, origins=4, sessions=2, tools=8)
    victim_into(store)
    findings = diagnose([from_session(s) for s in store.sessions.values()])
    about_victim = [f for f in findings if f.about(VICTIM)]
    # The victim's own: its two near-duplicate tools, and the security review of its own definitions (lint.*).
    assert {f.rule for f in about_victim if not f.rule.startswith("lint.")} == {"schema.similar"}
    assert all(f.session == VICTIM and not f.sessions for f in about_victim)
    origin_of = {s.id: s.info.origin for s in store.sessions.values()}
    for f in findings:
        if f.sessions:
            assert {origin_of[sid] for sid in f.sessions} == set(f.origins) and len(f.origins) == 1
    doc = session_findings(list(store.sessions.values()))
    for record in doc["findings"]:
        if record["session"] == VICTIM or any(s["id"] == VICTIM for s in record.get("sessions", [])):
            assert record["session"] == VICTIM and "sessions" not in record
            assert record["rule"] == "schema.similar" or record["rule"].startswith("lint.")


def test_a_claimed_saving_never_exceeds_what_the_calls_carried() -> None:
    """A page claims 3 x 10^12 tokens of whitespace through its facts, on calls that carried 4 KB each."""
    sid = "c1a1c1a1"
    store = Store()
    store.connect(1, "https://claims.example")
    store.apply(1, frame(synth.hello(sid, "https://claims.example")))
    store.apply(1, frame(synth.tool(sid, "list", 1.0)))
    spans = [synth.span(sid, i, "list", 10.0 + i * 100, 3.0, result_bytes=4000, gap=None if i == 0 else 97.0) for i in range(20)]
    store.apply(1, frame(synth.spans_frame(sid, spans)))
    claim = 12 * 10**12  # bytes: 3 x 10^12 tokens
    attach(
        store.sessions[sid],
        {i: Facts(bloat=BloatFacts(claim, whitespace_bytes=claim, repeated_key_bytes=claim, base64_bytes=claim)) for i in range(20)},
    )
    session = store.sessions[sid]
    findings = diagnose([from_session(session)])
    carried = sum(carried_tokens(s) for s in from_session(session).spans)
    assert findings and carried > 0
    for f in findings:
        assert f.saving.tokens <= carried, (f.rule, f.saving)
        assert (f.saving.bytes or 0) <= 20 * 4000
    assert session_findings([session])["total"]["tokens"] <= 3 * carried  # three kinds, each held to the calls


@pytest.mark.timeout(900)  # a flood built, written and diagnosed: past 120 s inside a whole pass at load 30-40
def test_diagnose_on_the_floods_capture_completes_in_bounded_memory(tmp_path: Path) -> None:
    store = Store()
    flood_into(store)
    write_json(tmp_path / "capture.json", build_capture(store))
    out, rss_kib = run(tmp_path, str(tmp_path / "capture.json"), "--json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert len(doc["sessions"]) == len(ORIGINS) * SESSIONS_PER_ORIGIN
    assert doc["coverage"]["compared"] <= LIMITS.tools and len(doc["findings"]) <= LIMITS.pairs_kept + 64 * 1024
    assert rss_kib <= 300 * 1024, f"diagnose took {rss_kib // 1024} MB on the flood"


def _held_offload(monkeypatch: pytest.MonkeyPatch) -> tuple[asyncio.Event, list[str], list[int]]:
    """The worker process's requests held until the test releases them; what was asked, and the pid that answered
    each (the view's work runs in another process, not in the dashboard's)."""
    from tui.model import diagnosis

    held, asked, pids = asyncio.Event(), [], []
    real = diagnosis.Offload.__call__

    async def spy(self: diagnosis.Offload, request: tuple[Any, ...]) -> Any:
        asked.append(request[0])
        await held.wait()
        got = await real(self, request)
        pids.append(self._proc.pid if self._proc is not None else os.getpid())
        return got

    monkeypatch.setattr(diagnosis.Offload, "__call__", spy)
    return held, asked, pids


async def test_the_f_view_opens_before_the_floods_rules_have_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The view shows at once, saying it is diagnosing; the flood's work goes to the worker process (held there by
    this test until it has seen another page's frame answered: the loop is free meanwhile), then its findings
    arrive."""
    held, asked, pids = _held_offload(monkeypatch)
    app = live_app(tmp_path)
    async with app.run_test(size=(160, 45)) as pilot:
        flood_into(app.store, sessions=ROOM)
        page = await open_page(app, sid="600d0001", origin="https://good.example")
        await pilot.press("f")
        await until(pilot, lambda: isinstance(app.screen, FindingsScreen) and bool(asked), timeout=60, what="the work under way")
        screen: FindingsScreen = app.screen  # type: ignore[assignment]  # the test opened this one
        assert screen.pending and "diagnosing" in str(screen.query_one("#summary", Static).render())
        acked = len(page.replies)
        await page.send(synth.spans_frame("600d0001", [synth.span("600d0001", 0, "search", 10.0, 2.0)]))
        await until(pilot, lambda: any(r.get("type") == "ack" for r in page.replies[acked:]), timeout=LIVENESS_S, what="another page acked")
        held.set()
        await until(pilot, lambda: not screen.pending, timeout=180, what="the findings")
        assert any(f.rule == "schema.diverged" for f in screen.findings)
        assert "catalog" in asked and pids and os.getpid() not in pids
        await page.close()


async def test_leaving_the_view_while_its_rules_run_is_safe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Escape while the flood is diagnosed: the work goes on for the app, not for the view (a view being taken
    down shows nothing: the benchmark's presses once ended the app with `No nodes match '#title'`), and opening
    the view again shows its result at once, without doing it again."""
    from tui.screens.findings import diagnosis_of

    held, asked, _ = _held_offload(monkeypatch)
    app = live_app(tmp_path)
    async with app.run_test(size=(160, 45)) as pilot:
        flood_into(app.store, sessions=2, tools=300)
        await pilot.press("f")
        await until(pilot, lambda: isinstance(app.screen, FindingsScreen) and app.screen.pending, timeout=60, what="the work under way")  # type: ignore[attr-defined]  # narrowed by the isinstance
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, FindingsScreen), timeout=LIVENESS_S, what="back on the dashboard")
        held.set()
        await until(pilot, lambda: not diagnosis_of(app).pending, timeout=120, what="the work done with no view open")
        requests = len(asked)
        await pilot.press("f")  # the app still answers, and opens the view again: on what was worked out
        await until(pilot, lambda: isinstance(app.screen, FindingsScreen), timeout=LIVENESS_S, what="the view again")
        screen: FindingsScreen = app.screen  # type: ignore[assignment]  # the test opened this one
        assert not screen.pending and any(f.rule == "schema.diverged" for f in screen.findings)
        assert len(asked) == requests and asked.count("catalog") == 1
        assert app.is_running
