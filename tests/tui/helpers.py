"""Helpers for the tui tests: an app on a real relay, a websockets client, and condition waits."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual.message import Message
from textual.notifications import Notification, Notify
from textual.widgets import DataTable, Footer, Static, Tab, Tabs
from textual.widgets._footer import FooterKey
from textual.widgets._tabs import Underline

from relay_bridge.core import synth
from relay_bridge.relay.server import RelayConfig
from tests.liveness import LIVENESS_S, connect
from tui.app import WmcpTopApp
from tui.widgets.tool_table import ToolTable

TOKEN = "0123456789abcdef0123456789abcdef"
SID = "a1b2c3d4"
SID2 = "0f0e0d0c"
ORIGIN_MS = 1_764_000_000_000.0


class Heard:
    """Every message posted in the app (`app.run_test(message_hook=heard)`): what a test watches instead of the
    app's private state. `notifications` are the toasts the user was shown, in order."""

    def __init__(self) -> None:
        self.messages: list[Message] = []

    def __call__(self, message: Message) -> None:
        self.messages.append(message)

    @property
    def notifications(self) -> list[Notification]:
        return [m.notification for m in self.messages if isinstance(m, Notify)]

    def count(self, kind: type[Message]) -> int:
        return sum(1 for m in self.messages if isinstance(m, kind))


def screen_text(app: WmcpTopApp) -> str:
    """What the terminal shows now, as plain text (the same render as an SVG screenshot)."""
    import io

    from rich.console import Console

    width, height = app.size
    console = Console(
        width=width, height=height, file=io.StringIO(), force_terminal=True, color_system=None, record=True, legacy_windows=False, safe_box=False
    )
    console.print(app.screen._compositor.render_update(full=True, screen_stack=app._background_screens))
    return console.export_text()


def live_app(tmp: Path, relay: dict[str, Any] | None = None, **kw: Any) -> WmcpTopApp:
    """The app with its own relay on a free loopback port (no session log unless `relay` names a log_dir)."""
    config = RelayConfig(**{"port": 0, "token": TOKEN, "log_dir": None, **(relay or {})})
    return WmcpTopApp(relay_config=config, export_dir=tmp / "exports", **kw)


class Page:
    """A fake page agent: one websocket to the app's relay."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.replies: list[dict[str, Any]] = []
        self.commands: list[dict[str, Any]] = []
        # a fake agent: answers each relay `command` with the `result` this returns (None: no answer)
        self.on_command: Callable[[dict[str, Any]], dict[str, Any] | None] | None = None
        self._reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        try:
            async for message in self.ws:
                msg = json.loads(message)
                self.replies.append(msg)
                if msg.get("type") == "command":
                    self.commands.append(msg)
                    answer = self.on_command(msg) if self.on_command is not None else None
                    if answer is not None:
                        await self.send(answer)
        except Exception:
            return

    async def send(self, frame: dict[str, Any]) -> None:
        await self.ws.send(json.dumps(frame, separators=(",", ":")))

    async def close(self) -> None:
        await self.ws.close()
        self._reader.cancel()


async def open_page(
    app: WmcpTopApp,
    sid: str = SID,
    origin: str = "https://shop.example",
    tools: tuple[str, ...] = ("search", "cart"),
    ws_origin: str | None = None,
    **hello: Any,
) -> Page:
    """`ws_origin`: the handshake's Origin header (the browser's word for the socket: the extension's own, a page's)."""
    assert app.relay is not None
    ws = await connect(f"ws://127.0.0.1:{app.relay.port}/relay?t={TOKEN}", origin=ws_origin)
    page = Page(ws)
    await page.send(synth.hello(sid, origin, time_origin=ORIGIN_MS, **hello))
    for i, name in enumerate(tools):
        await page.send(synth.tool(sid, name, 10.0 + i, description=f"the {name} tool"))
    return page


def spans(sid: str, tool: str, first_seq: int, n: int, wall: float = 12.0, at: float = 1000.0, **kw: Any) -> dict[str, Any]:
    return synth.spans_frame(
        sid, [synth.span(sid, first_seq + i, tool, at + i * 100, wall + i, gap=50.0 if first_seq + i else None, **kw) for i in range(n)]
    )


# A wait fails once it has given the app both `timeout` seconds and MIN_POLLS turns of its loop, so a starved
# process (two polls in 5 s at a load of 15 on two cores) waits on instead of failing, while a condition that
# never comes still fails at `timeout` on a machine that runs the app; HARD_TIMEOUT (or a longer `timeout`) ends
# even a starved wait.
MIN_POLLS = 200
HARD_TIMEOUT = 90.0


async def until(pilot: Any, predicate: Callable[[], Any], timeout: float = LIVENESS_S, what: str = "condition", poll: float = 0.025) -> float:
    """Let the app run until `predicate()` holds; returns the seconds it took. Fails after `timeout` seconds and
    MIN_POLLS polls, or after HARD_TIMEOUT seconds (`timeout` when longer). Each poll has the screen drawn, so a
    long wait polls less often: 5 ms, then 5 ms longer each time, up to `poll` (a timed wait passes 0.005)."""
    start = time.monotonic()
    polls = 0
    while not predicate():
        polls += 1
        waited = time.monotonic() - start
        if (waited > timeout and polls >= MIN_POLLS) or waited > max(timeout, HARD_TIMEOUT):
            # few polls: the app was starved of the CPU for HARD_TIMEOUT; many: the condition never came
            raise AssertionError(f"{what} not met within {waited:.1f}s ({polls} polls)")
        await pilot.pause(min(poll, 0.005 * polls))
    return time.monotonic() - start


# The dashboard's internals are reached from here only.


def has_tab(app: WmcpTopApp, sid: str = SID) -> bool:
    """Whether session `sid` has its tab on the dashboard."""
    return app.is_running and sid in app.dashboard.session_ids()


def tabs(app: WmcpTopApp) -> Tabs:
    return app.dashboard.tabs


def tab_text(app: WmcpTopApp, sid: str) -> str:
    tab = tabs(app).get_tab(f"s-{sid}")
    assert tab is not None, f"no tab for {sid}"
    return str(tab.label)


def shown(app: WmcpTopApp, sid: str = SID) -> bool:
    """Whether session `sid` is the one the dashboard's view shows."""
    return has_tab(app, sid) and app.dashboard.view.session_id == sid


def table(app: WmcpTopApp, sid: str = SID) -> ToolTable:
    assert shown(app, sid), f"{sid} is not the session on screen"
    return app.dashboard.view.table


def row_keys(app: WmcpTopApp, sid: str = SID) -> list[str]:
    """The tool rows shown, in order; empty while session `sid` is not the one on screen."""
    if not shown(app, sid):
        return []
    return table(app, sid).order


def cell(app: WmcpTopApp, tool: str, column: str, sid: str = SID) -> str | None:
    """The text shown in one cell, or None while that row (or session) is not on screen."""
    if not shown(app, sid):
        return None
    shown_cell = app.dashboard.view.table.cell(tool, column)
    return shown_cell.plain if shown_cell is not None else None


def drawn_mark(app: WmcpTopApp) -> str:
    """The overflow mark the tabs' places on screen make: what the mark must say once the row is at rest."""
    from tui.model.tab_row import overflow_marker

    row = tabs(app)
    view = row.region
    places = [(tab.region.x, tab.region.right) for tab in row.query("#tabs-list > Tab").results(Tab)]
    return overflow_marker(sum(a < view.x for a, _ in places), sum(a >= view.x and b > view.right for a, b in places))


def shown_mark(app: WmcpTopApp) -> str:
    """What the overflow mark shows now ("" when hidden)."""
    mark = app.dashboard.query_one("#more-tabs", Static)
    return str(mark.render()).strip() if mark.display else ""


def tab_row_unrest(app: WmcpTopApp) -> str:
    """What keeps the tab row from being at rest ("" when it is): scrolled where it rests, drawn there, its mark
    saying what the tabs' places make and the underline under the selected tab, nothing of it moving."""
    dash = app.dashboard
    row = dash.tabs
    scroller = row.query_one("#tabs-scroll")
    underline = row.query_one(Underline)
    selected = row.active_tab
    if any(
        app.animator.is_being_animated(obj, name)
        for obj, name in ((scroller, "scroll_x"), (underline, "highlight_start"), (underline, "highlight_end"))
    ):
        return "the tab row moving"
    if scroller.scroll_x != dash.tab_row.scroll_x:
        return f"the tab row scrolled to {scroller.scroll_x} (target {scroller.scroll_target_x}), resting at {dash.tab_row.scroll_x}"
    if selected is None:
        return "no tab selected"
    under = selected.virtual_region.shrink(selected.styles.gutter).column_span
    if (underline.highlight_start, underline.highlight_end) != under:
        return f"the underline at {underline.highlight_start}-{underline.highlight_end}, the tab at {under}"
    if not shown_mark(app) == dash.tab_row.mark == drawn_mark(app):
        return f"the mark shown {shown_mark(app)!r}, computed {dash.tab_row.mark!r}, drawn {drawn_mark(app)!r}"
    return ""


def tab_row_at_rest(app: WmcpTopApp) -> bool:
    return not tab_row_unrest(app)


def footers_current(app: WmcpTopApp) -> bool:
    """Every footer shows its screen's keys now, laid out (a footer recomposes a turn or more after the keys
    change, and its new keys are placed on a turn after that)."""
    for screen in app.screen_stack:
        shown = {(b.action, not enabled) for _, b, enabled, _ in screen.active_bindings.values() if b.show}
        for footer in screen.query(Footer):
            keys = [key for key in footer.query(FooterKey) if key.action != "command_palette"]  # the palette's own, always
            if {(key.action, key.disabled) for key in keys} != shown:
                return False
            if screen is app.screen and not all(key.region for key in keys):
                return False  # the new keys not laid out yet (a covered screen's wait for it to show again)
    return True


def unsettled(app: WmcpTopApp) -> str:
    """What the screen still has to do before a picture of it is final ("" when nothing): a message waiting in
    the app's, the screen's or a widget's queue, or a layout, a repaint or a callback the screen has yet to run
    (a footer once drew its keys cut short, laid out in a pass that a later one replaced)."""
    screen = app.screen
    if screen._layout_required or screen._scroll_required or screen._repaint_required or screen._recompose_required:
        return "the screen's layout or paint pending"
    if screen._dirty_widgets or screen._callbacks:
        return "widgets to paint or callbacks to run after the screen's refresh"
    for pump in (app, *screen.walk_children(with_self=True)):
        if not pump._message_queue.empty() or pump._next_callbacks:
            return f"a message waiting for {pump!r}"
    return ""


async def at_rest(pilot: Any, app: WmcpTopApp, keys: tuple[str, ...] | list[str] = ()) -> None:
    """The one wait every picture takes before it is drawn: the dashboard shown with its tab row at rest and
    every footer current, then `keys` pressed, then the same again (a key can scroll the row or open a view).
    Not met, it says what was not at rest."""

    def unrest() -> str:
        if app.selected_session_id is None:
            return "no session selected"
        if any(t._require_update_dimensions or t._updated_cells for t in app.screen.query(DataTable)):
            return "a table's rows not measured yet (DataTable does it on its idle turn)"
        return tab_row_unrest(app) or ("" if footers_current(app) else "a footer not showing its screen's keys") or unsettled(app)

    for press in (None, keys) if keys else (None,):
        if press is not None:
            await pilot.press(*press)
        what = "the dashboard drawn at rest" + (f" after {' '.join(press)}" if press else "")
        try:
            await until(pilot, lambda: not unrest(), what=what)
        except AssertionError as exc:
            raise AssertionError(f"{exc}: {unrest()}") from None
