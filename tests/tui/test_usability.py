"""Pilot tests of issue 15: the dashboard as a new user meets it (no crash, no false alarm, every view reachable
by keyboard). Each test runs the real app on its own relay, fed over a real socket by tests/tui/helpers.Page."""

from __future__ import annotations

from pathlib import Path

from .helpers import SID, cell, live_app, open_page, spans, until


async def test_screenshot_into_an_unusable_export_dir_is_a_toast_not_a_crash(tmp_path: Path) -> None:
    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    for bad in (Path("/proc/nope"), a_file, a_file / "below"):
        app = live_app(tmp_path)
        app.export_dir = bad
        async with app.run_test(size=(120, 36)) as pilot:
            page = await open_page(app)
            await until(pilot, lambda: SID in app._views, what="session tab")
            for key in ("ctrl+s", "e", "E", "t"):
                await pilot.press(key)
            await pilot.pause()
            assert app.is_running and app.relay is not None  # the relay and its sessions stay up
            errors = [n for n in app._notifications if n.severity == "error"]
            assert len(errors) == 4 and any("screenshot" in n.message for n in errors), [n.message for n in errors]
            await page.send(spans(SID, "search", 0, 1))
            await until(pilot, lambda: cell(app, "search", "calls") == "1", what="still live after the failures")
            await page.close()


async def test_two_exports_in_one_second_write_two_files(tmp_path: Path) -> None:
    app = live_app(tmp_path)
    app._stamp = lambda: "20260101-000000"  # type: ignore[method-assign] - the same second for every export
    async with app.run_test(size=(120, 36)) as pilot:
        page = await open_page(app)
        await page.send(spans(SID, "search", 0, 1))
        await until(pilot, lambda: cell(app, "search", "calls") == "1", what="row")
        for key in ("e", "e", "E", "E", "t", "t", "ctrl+s", "ctrl+s"):
            await pilot.press(key)
        await pilot.pause()
        files = sorted(p.name for p in (tmp_path / "exports").iterdir())
        assert files == sorted([
            f"report-{SID}-20260101-000000.json", f"report-{SID}-20260101-000000-2.json",
            "capture-20260101-000000.json", "capture-20260101-000000-2.json",
            "trace-20260101-000000.json", "trace-20260101-000000-2.json",
            "wmcp-top-20260101-000000.svg", "wmcp-top-20260101-000000-2.svg",
        ]), files
        await page.close()


async def test_exports_with_no_session_say_so_instead_of_writing_an_empty_file(tmp_path: Path) -> None:
    app = live_app(tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        for key in ("E", "t"):
            await pilot.press(key)
        await pilot.pause()
        assert not (tmp_path / "exports").exists() or not any((tmp_path / "exports").iterdir())
        notes = [n.message for n in app._notifications]
        assert notes.count("no sessions yet: nothing to export") == 2, notes
