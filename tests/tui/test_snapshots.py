"""Snapshot tests (pytest-textual-snapshot): every view at 120x36, at 80x24 (the two-row footer, the narrow
table) and in the compact 60x20 layout.

The app is fed the demo's first 30 s with a fixed seed and every clock frozen (tui.feed.frozen_demo_app), so
the pictures are the same on every run. Update after an intended change: `pytest tests/tui --snapshot-update`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tui import keys
from tui.feed import frozen_demo_app

SIZES = {"full": (120, 36), "small": (80, 24), "compact": (60, 20)}
VIEWS = {
    "main": [],
    "timeline": ["l"],
    "inspector": ["down", "down", "down", "down", "i"],  # render_preview: the image payload (after bulk_import)
    "status": ["d"],
    "schemas": ["w"],  # search_products: the exact match across the shop and agent tabs
    "prompts": ["m"],  # the shop tab's two LanguageModel sessions (relay_bridge.demo)
    "help": ["question_mark"],  # every view's keys, from tui/keys.py
    "sort": ["o"],  # the column picker
}


@pytest.fixture(autouse=True)
def _fixed_keymap_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """Help prints where the keymap lives; the suite's home is a temporary directory whose name changes with the
    run's number and the xdist worker, which would rewrap the help's last lines."""
    monkeypatch.setattr(keys, "keymap_path", lambda: Path("/home/you/.config/wmcp-top/keymap.toml"))


@pytest.mark.parametrize("size", list(SIZES))
@pytest.mark.parametrize("view", list(VIEWS))
def test_view(snap_compare, tmp_path: Path, view: str, size: str) -> None:
    app = frozen_demo_app(30.0, export_dir=tmp_path)
    assert snap_compare(app, press=VIEWS[view], terminal_size=SIZES[size])


def test_main_light_theme(snap_compare, tmp_path: Path) -> None:
    app = frozen_demo_app(30.0, export_dir=tmp_path, theme_name="wmcp-light")
    assert snap_compare(app, terminal_size=(120, 36))


def test_main_high_contrast_other_session(snap_compare, tmp_path: Path) -> None:
    """The hidden agent tab: overlapping calls and a long call still in flight."""
    app = frozen_demo_app(30.0, export_dir=tmp_path, theme_name="wmcp-high-contrast")
    assert snap_compare(app, press=["tab"], terminal_size=(80, 24))


def _push_call_dialog(tool: str, confirm: bool):  # type: ignore[no-untyped-def]
    """The call dialog as `x` opens it on the shop tab's `tool` (the same constructor arguments as
    WmcpTopApp.action_invoke), then, with `confirm`, the question a tool not marked read-only asks first."""

    async def run_before(pilot) -> None:  # type: ignore[no-untyped-def]
        from tui.screens.invoke import ConfirmCall, InvokeScreen, input_schema, is_read_only

        app = pilot.app
        sid = "3f2a9c01"  # the demo's shop tab, the first
        rec = app.store.sessions[sid].tools[tool]
        await app.push_screen(InvokeScreen(sid, tool, input_schema(rec.descriptor), is_read_only(rec.annotationsSent, rec.annotationsKept)))
        if confirm:
            await app.push_screen(ConfirmCall(tool))
        await pilot.pause()

    return run_before


@pytest.mark.parametrize("size", ["full", "small"])
@pytest.mark.parametrize("dialog", ["call", "confirm"])
def test_call_dialog(snap_compare, tmp_path: Path, dialog: str, size: str) -> None:
    app = frozen_demo_app(30.0, export_dir=tmp_path)
    assert snap_compare(app, run_before=_push_call_dialog("add_to_cart", dialog == "confirm"), terminal_size=SIZES[size])
