"""The tui's parts on their own: sanitising, themes, keymap, the demo scenario, the screenshots script."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from textual.binding import Binding
from textual.screen import Screen

from relay_bridge.core import protocol as p
from relay_bridge.lanes import demo
from tui import keys
from tui.model.sanitize import inert, inert_str
from tui.palette import Palette
from tui.themes import APP_VARIABLES, ThemeError, load_file, load_themes, theme_from_data

ROOT = Path(__file__).resolve().parents[2]


# -- sanitize -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("[bold red]x[/]", "[bold red]x[/]"),
        ("\x1b[31mred\x1b[0m", "␛[31mred␛[0m"),
        ("a\x07b\x00c\x7f", "a␇b␀c␡"),
        ("tab\tnew\nline\r", "tab␉new␊line␍"),
        ("\x9b31m", "\\x9b31m"),
        ("abc\u202eevil", "abc\\u202eevil"),
        ("naïve 名前 🙂", "naïve 名前 🙂"),
    ],
)
def test_inert_makes_page_text_visible_and_markup_free(raw: str, shown: str) -> None:
    text = inert(raw)
    assert text.plain == shown
    assert not text.spans and not text.style
    assert all(ord(c) >= 0x20 and not 0x7F <= ord(c) <= 0x9F for c in text.plain)


def test_inert_limits_and_keeps_our_own_newlines() -> None:
    assert inert_str("x" * 10, limit=5) == "xxxx…"
    assert inert("a\nb\x1b", keep_newlines=True).plain == "a\nb␛"


# -- themes ---------------------------------------------------------------------------------------------------


def test_builtin_themes_load_with_app_variables() -> None:
    loaded = load_themes()
    assert not loaded.errors
    assert {"wmcp-dark", "wmcp-light", "wmcp-high-contrast"} <= set(loaded.themes)
    assert loaded.themes["wmcp-light"].dark is False
    for theme in loaded.themes.values():
        assert set(APP_VARIABLES) <= set(theme.variables)


def test_user_themes_from_the_config_dir_and_bad_files_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WMCP_TOP_HOME", str(tmp_path))
    folder = tmp_path / "config" / "themes"
    folder.mkdir(parents=True)
    (folder / "mine.json").write_text(json.dumps({"name": "mine", "primary": "#ff00ff", "variables": {"wmcp-error": "#123456"}}))
    (folder / "broken.toml").write_text('name = "broken"\nprimary = "not a colour"\n')
    loaded = load_themes()
    assert loaded.themes["mine"].variables["wmcp-error"] == "#123456"
    assert loaded.themes["mine"].variables["wmcp-ok"] == APP_VARIABLES["wmcp-ok"]
    assert "broken" not in loaded.themes and any("broken.toml" in e for e in loaded.errors)
    with pytest.raises(ThemeError):
        theme_from_data({"primary": "#000000"}, "nameless")


async def test_theme_option_palette_switcher_and_unknown_name(tmp_path: Path) -> None:
    from tui.app import WmcpTopApp

    app = WmcpTopApp(theme_name="wmcp-light", export_dir=tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert app.theme == "wmcp-light"
        assert app.palette.error == load_file(ROOT / "themes" / "wmcp-light.toml").variables["wmcp-error"]
        assert {"wmcp-dark", "wmcp-light", "wmcp-high-contrast"} <= set(app.available_themes)  # the palette's Theme list
        app.theme = "wmcp-high-contrast"
        await pilot.pause()
        assert app.palette.ok == "#00FF66"
    app = WmcpTopApp(theme_name="no-such-theme", export_dir=tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert app.theme == "wmcp-dark"
        assert any("unknown theme 'no-such-theme'" in e for e in app.theme_errors)


def test_no_color_styles_by_weight_only() -> None:
    palette = Palette(no_color=True)
    for kind in ("ok", "slow", "error", "inflight", "muted"):
        assert "#" not in palette.style(kind)
    assert palette.style("error") == "bold reverse"


async def test_no_color_env_is_respected(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tui.app import WmcpTopApp

    monkeypatch.setenv("NO_COLOR", "1")
    app = WmcpTopApp(export_dir=tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert app.no_color and app.palette.no_color


# -- keymap ---------------------------------------------------------------------------------------------------


def test_every_binding_has_a_unique_id_and_the_design_keys() -> None:
    ids = [a.id for a in keys.ACTIONS]
    assert len(ids) == len(set(ids))
    by_key = {k: a.action for a in keys.ACTIONS if a.scope in ("app", "dashboard") for k in a.key.split(",")}
    for key, action in {
        "q": "quit",
        "ctrl+c": "quit",
        "j": "list_key('down')",
        "k": "list_key('up')",
        "o": "sort_by",
        "question_mark": "help",
        "slash": "filter",
        "s": "sort",
        "S": "sort_reverse",
        "p": "pause",
        "tab": "next_session",
        "e": "export_report",
        "E": "export_capture",
        "t": "export_trace",
        "d": "status",
        "l": "timeline",
        "i": "inspect",
        "c": "copy_snippet",
        "ctrl+s": "screenshot",
    }.items():
        assert by_key[key] == action


def test_every_key_of_every_view_is_in_the_one_table_and_the_help() -> None:
    """Issue 34: the help missed the timeline's 1-4, ctrl+l, g/G and enter. Every binding of every screen now comes
    from tui/keys.py (so help, palette and keymap know it), and the help lists each."""
    from rich.console import Console

    from tui.screens import entry_detail, help, inspector, invoke, prompts, schemas, sort_picker, status, timeline
    from tui.screens.dashboard import DashboardScreen

    screens: list[type[Screen]] = [
        DashboardScreen,
        timeline.TimelineScreen,
        prompts.PromptsScreen,
        schemas.SchemasScreen,
        status.StatusScreen,
        inspector.InspectorScreen,
        invoke.InvokeScreen,
        invoke.ConfirmCall,
        entry_detail.EntryDetailScreen,
        help.HelpScreen,
        sort_picker.SortPicker,
    ]
    known = {a.id for a in keys.ACTIONS}
    for screen in screens:
        for binding in screen.BINDINGS:
            assert isinstance(binding, Binding) and binding.id in known, (screen.__name__, binding)
    console = Console(width=200, record=True)
    console.print(help.help_renderable(object()))
    text = console.export_text()
    for action in keys.ACTIONS:
        assert action.id in text, action.id
    timeline_rows = [line for line in text.splitlines() if "wmcp.timeline." in line or "wmcp.view.open" in line]
    for shown in ("1 ", "2 ", "3 ", "4 ", "ctrl+l", "end, G", "home, g", "enter"):
        assert any(line.lstrip().startswith(shown) for line in timeline_rows), shown


def test_keymap_file(tmp_path: Path) -> None:
    path = tmp_path / "keymap.toml"
    path.write_text('[keys]\n"wmcp.pause" = "space"\n"wmcp.bogus" = "x"\n"wmcp.quit" = 3\n')
    keymap, problems = keys.load_keymap(path)
    assert keymap == {"wmcp.pause": "space"}
    assert len(problems) == 2
    path.write_text("not = [toml")
    assert keys.load_keymap(path)[0] == {} and keys.load_keymap(path)[1]


# -- the demo -------------------------------------------------------------------------------------------------


def test_demo_scenario_is_deterministic_valid_and_has_every_case() -> None:
    first = demo.frames_until(45.0)
    assert first == demo.frames_until(45.0)
    assert demo.frames_until(45.0, seed=8) != first
    frames = [f for _, f in first]
    for frame in frames:
        if frame["type"] != "disconnect":
            assert not isinstance(p.decode(json.dumps(frame)), p.Rejection), frame
    hellos = {f["session"]["id"]: f["session"] for f in frames if f["type"] == "hello"}
    assert len(hellos) == 4
    assert hellos[demo.AGENT]["visibility"] == "hidden"
    assert hellos[demo.RELAYED]["context"] == "relayed" and hellos[demo.RELAYED]["via"] == demo.SHOP
    spans = [s for f in frames if f["type"] == "spans" for s in f["spans"]]
    assert any(s["overlapped"] and s["gapSincePrevCallMs"] is None for s in spans)
    assert any(s["isError"] for s in spans)
    assert any(s["imageBytes"] > 0 and s["contentTypes"].get("image") for s in spans)
    late = [f for t, f in first if f["type"] == "tool" and t > 10]
    assert [f["name"] for f in late] == ["summarize_page"]
    starts = {(f["session"], c["seq"]): t for t, f in first if f["type"] == "start" for c in f["calls"]}
    settles = {(s["sessionId"], s["seq"]): t for t, f in first if f["type"] == "spans" for s in f["spans"]}
    assert max(settles[k] - starts[k] for k in settles) > 20  # a call in flight for a long while
    assert any(f["type"] == "event" and f["kind"] == "toolcancel" for f in frames)
    assert [f["session"] for f in frames if f["type"] == "disconnect"] == [demo.DOCS]
    assert Counter(demo.route(f) for f in frames)[demo.RELAYED] == 0  # relayed frames ride the shop's socket


def test_demo_runs_over_a_real_socket(relay_server) -> None:
    async def run() -> None:
        await demo.run_demo(relay_server.ws_url, speed=50.0, limit_seconds=44.0)

    asyncio.run(run())
    snap = relay_server.wait_for(lambda s: len(s["sessions"]) == 4 and s["sessions"][demo.DOCS]["state"] != "live")
    sessions = snap["sessions"]
    assert sessions[demo.RELAYED]["info"]["context"] == "relayed" and sessions[demo.RELAYED]["lost"] == 3
    assert sessions[demo.DOCS]["state"] == "disconnected"
    assert "summarize_page" in sessions[demo.DOCS]["tools"]
    assert sessions[demo.SHOP]["totals"]["calls"] > 10
    assert snap["counters"].get("rejected", 0) == 0


@pytest.mark.serial  # lateness in wall-clock ms: a loaded machine (load 40) made one frame 373 ms late
def test_the_demo_keeps_time_with_its_pages_clocks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 34: the demo paced frame to frame, so each sleep's overshoot added up: a `start` arrived later and
    later after the page clock's invokedAt, and an 8.5 ms call read `running 0.6s` before its span came. Here
    every sleep overshoots by 15 ms (a loaded machine): a frame may be that late, never more and more late."""
    import types

    from websockets.asyncio.server import serve

    real_sleep = asyncio.sleep
    slow = types.SimpleNamespace(**{k: getattr(asyncio, k) for k in dir(asyncio) if not k.startswith("__")})
    slow.sleep = lambda delay, *a: real_sleep(delay + 0.015, *a)
    monkeypatch.setattr(demo, "asyncio", slow)
    late: list[float] = []
    origins: dict[str, float] = {}

    async def page(ws) -> None:
        async for message in ws:
            now = time.time() * 1000
            frame = json.loads(message)
            if frame["type"] == "hello":
                origins[frame["session"]["id"]] = frame["session"]["timeOrigin"]
            elif frame["type"] == "start" and frame["session"] in origins:
                late.extend(now - (origins[frame["session"]] + c["invokedAt"]) for c in frame["calls"])

    async def run() -> None:
        async with serve(page, "127.0.0.1", 0) as server:
            port = server.sockets[0].getsockname()[1]
            await demo.run_demo(f"ws://127.0.0.1:{port}/relay", limit_seconds=6.0)

    asyncio.run(run())
    assert len(late) >= 5, late
    assert max(late) < 250, late  # paced frame to frame, 15 ms a sleep added up past this within seconds


# -- screenshots ----------------------------------------------------------------------------------------------


def test_screenshots_are_current(tmp_path: Path) -> None:
    """screenshots/*.svg are what scripts/screenshots.py draws now (run it after a visible change)."""
    env = dict(os.environ, WMCP_TOP_HOME=str(tmp_path))  # not the session's home, which other tests write to
    out = subprocess.run([sys.executable, "scripts/screenshots.py", "--check"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr


def test_a_stale_screenshot_is_told_by_the_rows_that_differ(tmp_path: Path) -> None:
    """A check on another machine leaves no file to open: its log says which rows of text differ, or, when only
    the colours moved, which line of markup."""
    spec = importlib.util.spec_from_file_location("screenshots", ROOT / "scripts" / "screenshots.py")
    assert spec is not None and spec.loader is not None
    shots = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(shots)
    row = '<text class="r{c}" x="0">&#160;+29.{n}s&#160;settle</text>'
    disk = tmp_path / "timeline.svg"
    disk.write_text("<svg>\n" + row.format(c=1, n=595) + "\n</svg>", encoding="utf-8")
    told = shots._differences(disk, "<svg>\n" + row.format(c=1, n=596) + "\n</svg>")
    assert "- +29.595s settle" in told and "+ +29.596s settle" in told and "<text" not in told
    told = shots._differences(disk, "<svg>\n" + row.format(c=2, n=595) + "\n</svg>")
    assert told.startswith("the same text; the markup differs from line 2") and 'class="r2"' in told


def test_schemas_view_names_every_part_of_the_breakdown() -> None:
    """The Schemas view lists where a tool's bytes go part by part: none of the footprint's parts is left out."""
    from relay_bridge.core.breakdown import PARTS
    from tui.screens.schemas import PART_LABELS

    assert tuple(PART_LABELS) == PARTS
