"""The findings view (`f`): live and ranked, over a real relay and socket; the top finding on the summary line;
hostile tool names shown inert; one view built once and shown again with what moved while it was closed; and its
snapshots at 80x24 and 160x45 (the demo with its facts)."""

from __future__ import annotations

import gc
import time
import weakref
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import DataTable, Footer
from textual.widgets._footer import FooterKey

from relay_bridge.core import synth
from relay_bridge.findings import diagnose, from_session
from tests.findings.builders import Facts, ImageFacts, attach, with_demo_facts
from tui.feed import demo_store
from tui.screens.findings import FindingsScreen
from tui.widgets.summary_line import SummaryLine

from .helpers import SID, at_rest, footers_current, has_tab, live_app, open_page, screen_text, spans, until

EVIL = "[bold red]bulk[/]\x1b[2J"


async def test_findings_view_is_live_ranked_and_inert(tmp_path: Path) -> None:
    app = live_app(tmp_path)
    async with app.run_test(size=(140, 40)) as pilot:
        page = await open_page(app, tools=("search",))
        await page.send(synth.tool(SID, EVIL, 20.0, description="Import orders from a spreadsheet. " * 90))
        await page.send(spans(SID, "search", 0, 12))
        await until(pilot, lambda: has_tab(app, SID) and app.store.sessions[SID].stats.totals.calls == 12, what="calls")
        # The main screen's summary line names the top finding (the unused 3 KB tool), inert.
        await until(pilot, lambda: "fix first (f)" in str(app.dashboard.query_one(SummaryLine).render()), what="summary line")
        await pilot.press("f")
        await until(pilot, lambda: isinstance(app.screen, FindingsScreen), what="findings view")
        screen: FindingsScreen = app.screen  # type: ignore[assignment]  # app.screen is typed Screen; the test opened this one
        table = screen.query_one("#findings", DataTable)
        expected = diagnose([from_session(s) for s in app.store.sessions.values()])
        await until(pilot, lambda: table.row_count > 0, what="the rows, a frame after the view")
        assert table.row_count == len(expected) and [f.rule for f in screen.findings] == [f.rule for f in expected]
        assert screen.findings[0].rule == "schema.unused"
        text = screen_text(app)
        assert "[bold red]bulk[/]" in text and "\x1b" not in text  # markup shown literally, the escape made inert
        assert "schema.unused" in text and "tok/conversation" in text
        # Live: an image fact and its call arrive; the view diagnoses again and ranks the image first, no key pressed.
        attach(app.store.sessions[SID], {12: Facts(image=ImageFacts("image/png", 2400, 1600, 900_000, 300_000, 150_000, 1568, 1045))})
        await page.send(
            synth.spans_frame(SID, [synth.span(SID, 12, "search", 9000.0, 30.0, image_bytes=1_200_000, result_bytes=1_200_100, gap=50.0)])
        )
        await until(pilot, lambda: screen.findings and screen.findings[0].rule == "images.reencode", what="the image ranked first")
        await until(pilot, lambda: "images.reencode" in screen_text(app) and "evidence" in screen_text(app), what="detail")
        await page.close()


async def _opened_findings(tmp_path: Path) -> weakref.ref[Any]:
    """An app that showed its findings, run to its end: a weak reference to it."""
    app = live_app(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        page = await open_page(app, tools=("search",))
        await page.send(spans(SID, "search", 0, 3))
        await until(pilot, lambda: has_tab(app, SID), what="the session's tab")
        await pilot.press("f")
        await until(pilot, lambda: isinstance(app.screen, FindingsScreen), what="the findings view")
        screen: FindingsScreen = app.screen  # type: ignore[assignment]  # app.screen is typed Screen; the test opened this one
        await until(pilot, lambda: not screen.pending, what="the findings")
        await page.close()
    return weakref.ref(app)


async def test_an_app_that_opened_the_findings_is_collected_once_it_has_ended(tmp_path: Path) -> None:
    """Its diagnosis outlives no app: kept by a registry keyed weakly by the app, it held the app's own methods, so
    every app that had opened `f` stayed alive with all it had drawn (a test worker held hundreds of thousands of
    objects, and its last collections outran the time it is given to end). Textual keeps the app that ran last as
    its active app: the first of two is the one that must go."""
    first = await _opened_findings(tmp_path / "first")
    await _opened_findings(tmp_path / "second")
    gc.collect()
    assert first() is None, [type(r).__name__ for r in gc.get_referrers(first())]


async def test_findings_view_compact(tmp_path: Path) -> None:
    app = live_app(tmp_path)
    async with app.run_test(size=(60, 20)) as pilot:
        page = await open_page(app, tools=("search", "unused_tool"))
        await page.send(spans(SID, "search", 0, 12))
        await until(pilot, lambda: has_tab(app, SID) and app.store.sessions[SID].stats.totals.calls == 12, what="calls")
        await pilot.press("f")
        await until(pilot, lambda: isinstance(app.screen, FindingsScreen), what="findings view")
        await until(pilot, lambda: "unused_tool" in screen_text(app) and "tok" in screen_text(app), what="compact rows")
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, FindingsScreen), what="back")
        await page.close()


def _footer_keys(app) -> list[list[FooterKey]]:
    """The key widgets of the dashboard's footer and the findings view's: the same objects while neither footer
    was composed again."""
    return [list(footer.query(FooterKey)) for screen in (app.dashboard, app.get_screen("findings")) for footer in screen.query(Footer)]


def _key_states(keys: list[FooterKey]) -> list[tuple[str, str, str, bool]]:
    """What a footer's keys say: the same widgets must show while this does not change."""
    return [(key.key, key.description, key.action, key.disabled) for key in keys]


async def test_the_view_is_built_once_and_shown_again_with_what_moved_while_closed(tmp_path: Path) -> None:
    """The view is one screen, built while the dashboard is idle: `f` shows it again, never builds another, and no
    footer lays out its keys again when they did not change (each of those was most of what a press cost under a
    flood). What moved while it was closed is shown when it opens, and it opens at the first row."""
    app = live_app(tmp_path)
    async with app.run_test(size=(140, 40)) as pilot:
        page = await open_page(app, tools=("search", "cart", "unused_one"))
        await page.send(spans(SID, "search", 0, 12))
        await until(pilot, lambda: has_tab(app, SID) and app.store.sessions[SID].stats.totals.calls == 12, what="calls")
        await until(pilot, lambda: app.is_screen_installed("findings"), what="the view built before the first press")
        built = app.get_screen("findings", FindingsScreen)
        await at_rest(pilot, app)
        await until(pilot, lambda: bool(_footer_keys(app)[-1]), what="the view's footer keys, before it was ever shown")
        view_keys = _footer_keys(app)[-1]
        await pilot.press("f")
        await until(pilot, lambda: app.screen is built and built.query_one("#findings", DataTable).row_count > 0, what="the view, its rows")
        await until(pilot, lambda: footers_current(app), what="every footer showing its keys")
        keys = _footer_keys(app)
        # The same widgets, unless the keys themselves changed meanwhile (a loaded machine built the view while
        # the app's state still moved: then laying them out again is right).
        assert keys[-1] == view_keys or _key_states(keys[-1]) != _key_states(view_keys), "the view's footer laid out its keys again when first shown"
        table = built.query_one("#findings", DataTable)
        table.move_cursor(row=table.row_count - 1)
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is app.dashboard and footers_current(app), what="back on the dashboard")
        # Closed: a tool with a 3 KB description arrives (never called: the first thing to fix).
        await page.send(synth.tool(SID, "import_orders", 20.0, description="Import orders from a spreadsheet. " * 90))
        await until(pilot, lambda: "import_orders" in app.store.sessions[SID].tools, what="the new tool stored")
        for _ in range(3):
            await pilot.press("f")
            await until(pilot, lambda: app.screen is built, what="the same view shown again")
            await until(pilot, lambda: built.findings and built.findings[0].tools == ("import_orders",), what="what moved while closed")
            await until(pilot, lambda: "import_orders" in screen_text(app), what="its row drawn")
            assert table.cursor_row == 0, "each opening starts at what to fix first"
            await pilot.press("escape")
            await until(pilot, lambda: app.screen is app.dashboard and footers_current(app), what="back on the dashboard")
        assert [s for s in app.screen_stack if isinstance(s, FindingsScreen)] == []
        assert _footer_keys(app) == keys, "a footer laid out the same keys again"
        await page.close()


async def test_the_view_shown_again_draws_the_rows_it_rendered_until_the_theme_moves(tmp_path: Path, monkeypatch) -> None:
    """The view's table keeps the cells it rendered while its look did not change (rendering a screenful of a
    flood's rows again was most of what an opening cost beyond an empty view), and renders them again for a new
    theme."""
    rendered: list[int] = []
    render = DataTable._render_cell

    def counted(self, row_index, *args, **kw):
        if isinstance(self.screen, FindingsScreen):
            rendered.append(row_index)
        return render(self, row_index, *args, **kw)

    monkeypatch.setattr(DataTable, "_render_cell", counted)
    app = live_app(tmp_path)
    async with app.run_test(size=(140, 40)) as pilot:
        page = await open_page(app, tools=("search", *(f"unused_{i}" for i in range(12))))
        await page.send(spans(SID, "search", 0, 12))
        await until(pilot, lambda: has_tab(app, SID) and app.store.sessions[SID].stats.totals.calls == 12, what="calls")
        for _ in range(2):  # the first opening lays the table out again once its rows are in: at rest after it
            await pilot.press("f")
            await until(pilot, lambda: isinstance(app.screen, FindingsScreen) and "unused_0" in screen_text(app), what="the rows drawn")
            await pilot.press("escape")
            await until(pilot, lambda: app.screen is app.dashboard, what="back on the dashboard")
        del rendered[:]
        await pilot.press("f")
        await until(pilot, lambda: isinstance(app.screen, FindingsScreen) and "unused_0" in screen_text(app), what="the rows drawn again")
        assert [r for r in rendered if r >= 0] == [], "the same rows rendered again"
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is app.dashboard, what="back on the dashboard")
        app.theme = "wmcp-light"
        await pilot.press("f")
        await until(pilot, lambda: isinstance(app.screen, FindingsScreen) and "unused_0" in screen_text(app), what="the rows in the new theme")
        assert len({r for r in rendered if r >= 0}) >= 12, "a new theme renders every row shown again"
        await page.close()


async def test_the_view_shown_again_applies_its_styles_again_only_when_the_theme_or_the_apps_classes_moved(tmp_path: Path, monkeypatch) -> None:
    """Textual applies a shown screen's styles again each time (5 ms of a press's 20 to 30 on the loop under a
    flood, and the screen's first frame drawn whole after it); the kept view skips it while nothing its styles
    depend on moved, and shows a new theme, or the compact layout's classes, once they did."""
    from textual.screen import Screen

    restyled: list[str] = []
    real = Screen.update_node_styles

    def counted(self: Screen, animate: bool = True) -> None:
        if isinstance(self, FindingsScreen):
            restyled.append(self.app.theme)
        real(self, animate)

    monkeypatch.setattr(Screen, "update_node_styles", counted)
    app = live_app(tmp_path)
    async with app.run_test(size=(140, 40)) as pilot:
        page = await open_page(app, tools=("search", "unused_one"))
        await page.send(spans(SID, "search", 0, 12))
        await until(pilot, lambda: has_tab(app, SID) and app.store.sessions[SID].stats.totals.calls == 12, what="calls")
        await until(pilot, lambda: app.is_screen_installed("findings"), what="the view built")
        view = app.get_screen("findings", FindingsScreen)

        async def show() -> None:
            await pilot.press("f")
            await until(pilot, lambda: app.screen is view and "unused_one" in screen_text(app), what="the view")
            await pilot.press("escape")
            await until(pilot, lambda: app.screen is app.dashboard, what="back on the dashboard")

        await show()
        del restyled[:]
        for _ in range(3):
            await show()
        assert restyled == [], "the view's styles applied again with nothing they depend on moved"
        dark = view.query_one("#title").styles.background
        app.theme = "wmcp-light"
        await show()
        assert restyled == ["wmcp-light"] and view.query_one("#title").styles.background != dark
        await pilot.resize_terminal(70, 20)  # compact: the app's classes move
        await until(pilot, lambda: app.compact, what="the compact layout")
        await show()
        assert len(restyled) == 2
        await page.close()


def _demo_app(tmp_path: Path):
    from tui.app import WmcpTopApp

    store, clock = demo_store(30.0)
    with_demo_facts(store, 30.0)
    return WmcpTopApp(store=store, clock=clock.ms, export_dir=tmp_path, source_label="demo feed, seed 7, at 30s")


def test_findings_snapshot_80x24(snap_compare, tmp_path: Path) -> None:
    app = _demo_app(tmp_path)
    assert snap_compare(app, run_before=lambda pilot: at_rest(pilot, app, ["f"]), terminal_size=(80, 24))


def test_findings_snapshot_160x45(snap_compare, tmp_path: Path) -> None:
    app = _demo_app(tmp_path)
    assert snap_compare(app, run_before=lambda pilot: at_rest(pilot, app, ["f"]), terminal_size=(160, 45))


@pytest.mark.serial
async def test_the_summary_line_diagnoses_at_most_once_a_second_and_catches_up(tmp_path: Path, monkeypatch) -> None:
    """A session whose numbers move with every frame is not diagnosed with every frame (the costliest update the
    dashboard makes), and the line still ends on the finding of what arrived last."""
    import tui.model.diagnosis as diagnosis

    runs: list[float] = []
    real = diagnosis.diagnose

    def counted(*args, **kw):
        runs.append(time.monotonic())
        return real(*args, **kw)

    monkeypatch.setattr(diagnosis, "diagnose", counted)
    app = live_app(tmp_path)
    async with app.run_test(size=(140, 40)) as pilot:
        page = await open_page(app, tools=("search",))
        await page.send(synth.tool(SID, "import_orders", 20.0, description="Import orders from a spreadsheet. " * 90))
        started = time.monotonic()
        for i in range(80):  # two seconds of frames, each moving the numbers (the store wakes views 4 times a second)
            await page.send(spans(SID, "search", i, 1))
            await pilot.pause(0.025)
        last = time.monotonic()
        await until(pilot, lambda: app.store.sessions[SID].stats.totals.calls == 80, what="calls")
        during = [t for t in runs if t < last]
        assert 2 <= len(during) <= 3 + (last - started - 2.0), f"diagnosed {len(during)} times in {last - started:.1f} s of changes"
        # What changed after the last diagnosis is diagnosed when its interval ends: the line ends current.
        await until(pilot, lambda: runs[-1] >= last - 0.1, what="the catch-up diagnosis")
        assert "fix first (f)" in str(app.dashboard.query_one(SummaryLine).render())
        await page.close()


async def test_the_summary_line_reviews_no_large_session_on_the_loop(tmp_path: Path, monkeypatch) -> None:
    """A session of 300 definitions no one has reviewed yet: the line's top finding comes from the app's diagnosis,
    the definitions reviewed by its worker process, and no turn of the loop reviews more than INLINE_REVIEW of them
    (the line used to diagnose the session itself: 90 to 110 ms of the loop for a flood's session). On a loaded
    machine the line may run while the definitions are still arriving: what has come by then is a small session,
    reviewed at once, and the rest go to the worker."""
    import threading
    import uuid

    import tui.model.diagnosis as diagnosis
    from relay_bridge.findings import security

    on_loop: list[object] = []
    review = security.review

    def counted(descriptor):
        if threading.current_thread() is threading.main_thread():
            on_loop.append(descriptor)
        return review(descriptor)

    monkeypatch.setattr(security, "review", counted)
    asked: list[int] = []
    ask = diagnosis.Offload.__call__

    async def spy(self, request):
        asked.append(len(request[1]) if request[0] == "review" else 0)
        return await ask(self, request)

    monkeypatch.setattr(diagnosis.Offload, "__call__", spy)
    batches: list[int] = []  # definitions each of the line's diagnoses reviewed on the loop
    own = diagnosis.Diagnosis.own_findings

    def watched(self, *args, **kwargs):
        before = len(on_loop)
        try:
            return own(self, *args, **kwargs)
        finally:
            batches.append(len(on_loop) - before)

    monkeypatch.setattr(diagnosis.Diagnosis, "own_findings", watched)
    fresh = uuid.uuid4().hex  # definitions no earlier test put in the process's content caches
    tools = 300
    assert tools > diagnosis.INLINE_REVIEW
    app = live_app(tmp_path)
    async with app.run_test(size=(140, 40)) as pilot:
        page = await open_page(app, tools=())
        for i in range(tools):
            await page.send(synth.tool(SID, f"tool_{i:03d}", 10.0 + i, description=f"look up the {fresh} catalog, part {i}"))
        await page.send(synth.tool(SID, "import_orders", 20.0, description=f"Import orders from a {fresh} spreadsheet. " * 90))
        await page.send(spans(SID, "tool_000", 0, 12))
        await until(pilot, lambda: has_tab(app, SID) and app.store.sessions[SID].stats.totals.calls == 12, what="calls")
        await until(pilot, lambda: "fix first (f)" in str(app.dashboard.query_one(SummaryLine).render()), timeout=60, what="the top finding")
        assert "import_orders" in str(app.dashboard.query_one(SummaryLine).render())
        assert sum(asked) + len(on_loop) >= tools + 1, "every definition reviewed, by the worker or a few at once"
        assert sum(asked) > diagnosis.INLINE_REVIEW, "the worker reviewed the session"
        assert max(batches) <= diagnosis.INLINE_REVIEW, f"a diagnosis reviewed {max(batches)} definitions on the loop"
        assert len(on_loop) == sum(batches), "no other path reviews on the loop"
        await page.close()


async def test_the_worker_process_is_reaped_before_the_app_exits(tmp_path: Path) -> None:
    """Left to the collector after the loop closed, its pipes printed "Exception ignored ... Event loop is closed"
    as the app exited (seen in a loaded run of the suite)."""
    from tui.model.diagnosis import Offload, diagnosis_of

    app = live_app(tmp_path)
    async with app.run_test(size=(120, 36)):
        offload = diagnosis_of(app).offload
        assert isinstance(offload, Offload)
        assert await offload(("review", [])) is not None
        proc = offload._proc
        assert proc is not None and proc.returncode is None, "the worker process runs"
    assert proc.returncode is not None, "the worker process ended and was reaped with the app"
    assert offload._unreaped == [] and offload._proc is None
