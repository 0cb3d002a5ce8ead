"""Snapshot tests (pytest-textual-snapshot): every view at 120x36, at 80x24 (the two-row footer, the narrow
table) and in the compact 60x20 layout.

The app is fed the demo's first 30 s with a fixed seed and every clock frozen (tui.feed.frozen_demo_app), so
the pictures are the same on every run. Update after an intended change: `pytest tests/tui --snapshot-update`.
"""

from __future__ import annotations

import difflib
import re
from pathlib import Path

import pytest

from tests.tui.helpers import at_rest, footers_current, unsettled, until
from tui import keys
from tui.feed import frozen_demo_app

SIZES = {"full": (120, 36), "small": (80, 24), "compact": (60, 20)}
VIEWS = {
    "main": [],
    "timeline": ["l"],
    "inspector": ["down", "down", "down", "down", "i"],  # render_preview: the image payload (after bulk_import)
    "status": ["d"],
    "schemas": ["w"],  # search_products: the exact match across the shop and agent tabs
    "prompts": ["m"],  # the shop tab's two LanguageModel sessions (relay_bridge.lanes.demo)
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
    assert snap_compare(app, run_before=lambda pilot: at_rest(pilot, app, VIEWS[view]), terminal_size=SIZES[size])


def test_main_light_theme(snap_compare, tmp_path: Path) -> None:
    app = frozen_demo_app(30.0, export_dir=tmp_path, theme_name="wmcp-light")
    assert snap_compare(app, run_before=lambda pilot: at_rest(pilot, app), terminal_size=(120, 36))


def test_main_high_contrast_other_session(snap_compare, tmp_path: Path) -> None:
    """The hidden agent tab: overlapping calls and a long call still in flight."""
    app = frozen_demo_app(30.0, export_dir=tmp_path, theme_name="wmcp-high-contrast")
    # `tab` scrolls the tab row to the tab it selects (30 cells here): `‹1 2›`
    assert snap_compare(app, run_before=lambda pilot: at_rest(pilot, app, ["tab"]), terminal_size=(80, 24))


DIALOGS = Path(__file__).parent / "__snapshots__" / "dialogs"


async def _draw_call_dialog(app, size: tuple[int, int], confirm: bool) -> str:
    """The call dialog as `x` opens it on the shop tab's `add_to_cart` (WmcpTopApp.action_invoke's arguments),
    then, with `confirm`, the question a tool not marked read-only asks first: the SVG of that screen."""
    from tui.screens.invoke import ConfirmCall, InvokeScreen, input_schema, is_read_only

    async with app.run_test(size=size) as pilot:
        await at_rest(pilot, app)  # what the dialogs cover is the dashboard at rest (+2 here)
        await until(pilot, lambda: app.dashboard.selected_tool() is not None, what="a tool selected")
        sid = app.selected_session_id
        assert sid == "3f2a9c01", sid  # the demo's shop tab, the first
        rec = app.store.sessions[sid].tools["add_to_cart"]
        await app.push_screen(InvokeScreen(sid, "add_to_cart", input_schema(rec.descriptor), is_read_only(rec.annotationsSent, rec.annotationsKept)))
        # The arguments box draws its cursor once focused, and blinks it: a loaded check twice drew the box without
        # it. Focused and held on, the picture does not depend on when it is taken. The question comes after, as
        # enter in the focused box asks it.
        await until(pilot, lambda: app.focused is not None and app.focused.id == "input", what="the arguments box focused")
        app.focused.cursor_blink = False  # the TextArea just found by its id
        # The call dialog drawn whole before the question covers it: its footer is laid out only while it is on top
        # (a loaded check drew the confirm picture with that footer's row empty).
        await until(pilot, lambda: footers_current(app) and not unsettled(app), what="the call dialog at rest")
        if confirm:
            await app.push_screen(ConfirmCall("add_to_cart"))
        shown = ConfirmCall if confirm else InvokeScreen
        await until(pilot, lambda: isinstance(app.screen, shown) and app.screen.is_attached, what="the dialog shown")
        await until(pilot, lambda: footers_current(app) and not unsettled(app), what="the footers showing the dialog's keys")
        await pilot.wait_for_animation()
        return app.export_screenshot()


def _picture(svg: str, rows: int) -> list[str]:
    """What the SVG draws on its first `rows` rows: each text run and background with its resolved style.
    Rich names the classes after a hash of the segments' reprs, which carry Textual's per-process style metadata,
    so names are resolved; the footer's last rows are left out because Textual recomposes the footer under a
    second modal on a turn of its own (sometimes the dashboard's keys show through, sometimes not)."""
    styles = dict(re.findall(r"\.(terminal-[\w-]+) \{([^}]*)\}", svg))
    out = []
    for kind, attrs, body in re.findall(r"<(text|rect) ([^>]*?)/?>(?:([^<]*)</text>)?", svg):
        y = re.search(r' y="([\d.]+)"', attrs)
        if y is None or float(y.group(1)) >= 1.5 + rows * 24.4:
            continue
        cls = re.search(r'class="([\w-]+)"', attrs)
        style = styles.get(cls.group(1), "") if cls else ""
        place = re.sub(r'(class|clip-path)="[^"]*"', "", attrs)
        out.append(f"{kind} {place} {style} {body}")
    return out


@pytest.mark.parametrize("size", ["full", "small"])
@pytest.mark.parametrize("dialog", ["call", "confirm"])
async def test_call_dialog(request: pytest.FixtureRequest, tmp_path: Path, dialog: str, size: str) -> None:
    svg = await _draw_call_dialog(frozen_demo_app(30.0, export_dir=tmp_path), SIZES[size], dialog == "confirm")
    stored = DIALOGS / f"{dialog}-{size}.svg"
    if request.config.getoption("--snapshot-update"):
        stored.parent.mkdir(parents=True, exist_ok=True)
        stored.write_text(svg, encoding="utf-8")
    rows = SIZES[size][1] - 2
    want, got = (_picture(x, rows) for x in (stored.read_text(encoding="utf-8"), svg))
    diff = list(difflib.unified_diff(want, got, str(stored), "drawn", lineterm="", n=0))
    assert not diff, "\n".join([*diff[:40], "(pytest --snapshot-update redraws it)"])
