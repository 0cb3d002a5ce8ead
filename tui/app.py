"""The wmcp-top Textual app: the relay's store, shown live.

The relay runs on this app's asyncio loop (started in `on_mount`, stopped in `on_unmount`). The store never
calls the UI: a Coalescer hands the app the ids of sessions that changed, at most four times a second, and
the app pulls what it shows from the store inside `batch_update()`, updating keyed table cells in place.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import Any

from rich.text import Text
from textual import on
from textual.app import App, ComposeResult, SystemCommand
from textual.content import Content
from textual.css.query import NoMatches
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Input, TabbedContent, TabPane
from textual.widgets._tabbed_content import ContentTab

from relay_bridge import __version__
from relay_bridge.cli import UsageError, start_relay, write_json
from relay_bridge.notify import Coalescer
from relay_bridge.exports.capture import build_capture
from relay_bridge.exports.report import build_report
from relay_bridge.exports.trace import trace_document
from relay_bridge.paths import data_dir
from relay_bridge.server import Relay, RelayConfig
from relay_bridge.extension import is_extension_agent
from relay_bridge.store import Session, Store

from . import keys
from .palette import Palette
from .sanitize import inert, inert_str
from .themes import DEFAULT_THEME, APP_VARIABLES, load_themes
from .widgets.session_pane import SessionView
from .widgets.tool_table import columns_for
from .widgets.topbar import TopBar
from .widgets.waiting import WaitingPanel, waiting_text

Feed = Callable[["WmcpTopApp"], Awaitable[None]]
REFRESH_INTERVAL = 0.25  # at most 4 screen updates a second
TICK_INTERVAL = 0.5
COMPACT_WIDTH, COMPACT_HEIGHT = 80, 24
NARROW_WIDTH = 100  # under this the tool table drops min and max rather than scroll sideways


class StoreChanged(Message):
    def __init__(self, dirty: set[str], relay: bool) -> None:
        super().__init__()
        self.dirty = dirty
        self.relay = relay


def origin_host(origin: str) -> str:
    for prefix in ("https://", "http://"):
        if origin.startswith(prefix):
            return origin[len(prefix):]
    return origin


def session_state_word(session: Session) -> str:
    if session.state == "live":
        return "hidden" if session.info.visibility == "hidden" else "live"
    return session.state  # disconnected | ended


def tab_label(session: Session, compact: bool = False) -> Text:
    state = session_state_word(session)
    label = Text(no_wrap=True, end="")
    if session.agent.startswith("cdp/"):
        label.append("cdp ", style="italic")  # watched over the DevTools Protocol: nothing in the page
    elif is_extension_agent(session.agent):
        label.append("ext ", style="italic")  # injected by the wmcp-top browser extension
    if not compact:
        label.append_text(inert(origin_host(session.info.origin), limit=28))
        label.append(" ")
    label.append(session.id)
    if session.info.context != "top" and not compact:
        label.append(f" {session.info.context}")
    elif session.info.context == "relayed":
        label.append(" rel")
    label.append(f" {state}", style="bold" if state in ("live", "hidden") else "dim")
    return label


def pane_id(sid: str) -> str:
    return f"s-{sid}"


class WmcpTopApp(App[int]):
    TITLE = "wmcp-top"
    CSS_PATH = "app.tcss"
    BINDINGS = keys.bindings()
    ENABLE_COMMAND_PALETTE = True
    AUTO_FOCUS = None  # the session's table takes focus when its tab opens; the filter only when asked

    def __init__(
        self,
        *,
        store: Store | None = None,
        relay_config: RelayConfig | None = None,
        feed: Feed | None = None,
        theme_name: str | None = None,
        export_dir: Path | None = None,
        clock: Callable[[], float] | None = None,
        source_label: str | None = None,
        probe: Any = None,
        keymap_file: Path | None = None,
        cdp_url: str | None = None,
    ) -> None:
        super().__init__()
        self.store = store if store is not None else Store(buffer=relay_config.buffer if relay_config else 500)
        self.relay_config = relay_config
        self.relay: Relay | None = None
        self.feed = feed
        self.theme_name = theme_name
        self.export_dir = Path(export_dir) if export_dir else data_dir() / "exports"
        self.clock_ms: Callable[[], float] = clock or (lambda: time.time() * 1000)
        self.frozen = clock is not None
        self.source_label = source_label
        self.probe = probe
        self.keymap_file = keymap_file
        self.startup_error: str | None = None
        self.cdp_url = cdp_url  # `wmcp-top attach --cdp URL`: the status view explains how to start Chrome
        self.lane_state: str | None = None  # one line about the attach/open lane, for the status view
        self._otlp_sig: tuple | None = None
        self.open_handle: Any = None  # `wmcp-top open`: the browser (relay_bridge.browser.OpenHandle)
        self.paused = False
        self.compact = False
        self.table_layout = "full"  # compact / narrow / full: which tool-table columns fit
        self.text_filter = ""
        self.sort_key = "tool"
        self.sort_reverse = False
        self.palette = Palette(no_color=self.no_color)
        self.coalescer: Coalescer | None = None
        self._views: dict[str, SessionView] = {}
        self._labels: dict[str, str] = {}
        self._pending: set[str] = set()
        self._pending_relay = False
        self._feed_task: asyncio.Task[None] | None = None
        self._tick_timer: Any = None
        self.refreshes = 0  # screen updates done (tests read it)
        self.theme_errors: list[str] = []
        self.keymap_problems: list[str] = []
        self._apply_lock = asyncio.Lock()

    # -- setup --------------------------------------------------------------------------------------------

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return dict(APP_VARIABLES)

    def compose(self) -> ComposeResult:
        yield TopBar(id="topbar")
        yield WaitingPanel(id="waiting")
        yield TabbedContent(id="sessions")
        yield Input(placeholder="filter tools by name (enter keeps it, esc clears)", id="filter")
        yield Footer()

    async def on_mount(self) -> None:
        self._setup_themes()
        keymap, self.keymap_problems = keys.load_keymap(self.keymap_file)
        if keymap:
            self.set_keymap(keymap)
        for problem in self.keymap_problems + self.theme_errors:
            self.notify(inert_str(problem), severity="warning", markup=False, timeout=8)
        self._main.query_one("#filter", Input).display = False
        self._main.query_one("#sessions", TabbedContent).display = False
        if self.relay_config is not None:
            try:
                self.relay = await start_relay(self.relay_config, self.store)
            except UsageError as exc:
                self.startup_error = str(exc)
                self.exit(return_code=2)
                return
        self.coalescer = Coalescer(self.store, REFRESH_INTERVAL)
        self.coalescer.subscribe(self._on_store_change)
        self._update_compact(self.size.width, self.size.height)
        await self._apply(set(self.store.sessions), True)
        self._tick_timer = self.set_interval(TICK_INTERVAL, self._tick)
        if self.feed is not None:
            self._feed_task = asyncio.create_task(self._run_feed())

    async def _run_feed(self) -> None:
        assert self.feed is not None
        try:
            await self.feed(self)
        except asyncio.CancelledError:
            raise
        except UsageError as exc:  # the lane could not start (no browser, no DevTools endpoint): one line, exit 2
            self.startup_error = str(exc)
            self.exit(return_code=2)
        except Exception as exc:  # noqa: BLE001 - a broken feed is reported, the app stays up
            self.notify(inert_str(f"feed stopped: {exc}"), severity="error", markup=False, timeout=10)

    def _setup_themes(self) -> None:
        loaded = load_themes()
        self.theme_errors = loaded.errors
        for theme in loaded.themes.values():
            self.register_theme(theme)
        wanted = self.theme_name or DEFAULT_THEME
        if wanted not in self.available_themes:
            if self.theme_name:
                self.theme_errors.append(f"unknown theme {self.theme_name!r}; using {DEFAULT_THEME}")
            wanted = DEFAULT_THEME if DEFAULT_THEME in self.available_themes else "textual-dark"
        self.theme = wanted
        self._update_palette()

    def _update_palette(self) -> None:
        try:
            variables = {**APP_VARIABLES, **self.current_theme.variables}
        except Exception:  # noqa: BLE001 - no theme yet
            variables = dict(APP_VARIABLES)
        self.palette = Palette.from_variables(variables, self.no_color)

    def watch_theme(self, theme: str) -> None:
        self._update_palette()
        if self.is_mounted and self.coalescer is not None:
            self.call_later(self._refresh_all)

    async def on_unmount(self) -> None:
        await self.shutdown()

    async def shutdown(self) -> None:
        if self._feed_task is not None:
            self._feed_task.cancel()
            try:
                await self._feed_task
            except (asyncio.CancelledError, Exception):  # noqa: BLE001
                pass
            self._feed_task = None
        if self.coalescer is not None:
            self.coalescer.close()
            self.coalescer = None
        if self.relay is not None:
            relay, self.relay = self.relay, None
            await relay.stop()
        if self.probe is not None:
            self.probe.close()

    # -- store -> screen ----------------------------------------------------------------------------------

    def _on_store_change(self, dirty: set[str], relay: bool) -> None:
        self.post_message(StoreChanged(dirty, relay))

    async def on_store_changed(self, message: StoreChanged) -> None:
        if self.paused:
            self._pending |= message.dirty
            self._pending_relay = self._pending_relay or message.relay
            return
        await self._apply(message.dirty, message.relay)

    @property
    def tabs(self) -> TabbedContent:
        return self._main.query_one("#sessions", TabbedContent)

    @property
    def _main(self) -> Screen:
        """The dashboard's own screen (views and help are pushed on top of it)."""
        return self.screen_stack[0] if self.screen_stack else self.screen

    @property
    def selected_session_id(self) -> str | None:
        try:
            active = self.tabs.active
        except NoMatches:
            return None
        return active[2:] if active.startswith("s-") else None

    @property
    def selected_session(self) -> Session | None:
        sid = self.selected_session_id
        return self.store.sessions.get(sid) if sid else None

    async def _apply(self, dirty: set[str], relay: bool = False) -> None:
        if self._exit or not self.screen_stack:
            return  # shutting down
        try:
            await self._apply_locked(dirty, relay)
        except NoMatches:
            if self._exit or not self.is_running:
                return  # the widgets went away under us: the app is closing
            raise

    async def _apply_locked(self, dirty: set[str], relay: bool) -> None:
        async with self._apply_lock:
            store = self.store
            tabs = self.tabs
            new = [sid for sid in store.sessions if sid not in self._views]
            gone = [sid for sid in self._views if sid not in store.sessions]
            for sid in gone:
                await tabs.remove_pane(pane_id(sid))
                self._views.pop(sid, None)
                self._labels.pop(sid, None)
            for sid in new:
                view = SessionView(sid)
                await tabs.add_pane(TabPane(Content.from_text(tab_label(store.sessions[sid], self.compact)), view, id=pane_id(sid)))
                self._views[sid] = view  # only once mounted: everything in _views has its widgets
            if new and self.selected_session is not None and self.selected_session.state != "live":
                # the tab on screen has ended (about:blank before `open` navigates, a reloaded page): follow the
                # newest live session rather than keep showing a finished one
                live = [sid for sid in new if store.sessions[sid].state == "live"]
                if live:
                    tabs.active = pane_id(live[-1])
            if new or gone:
                has = bool(self._views)
                tabs.display = has
                self._main.query_one("#waiting", WaitingPanel).display = not has
            active = self.selected_session_id
            with self.batch_update():
                for sid in set(dirty) | set(new):
                    session = store.sessions.get(sid)
                    view = self._views.get(sid)
                    if session is None or view is None:
                        continue
                    self._set_label(session)
                    if sid == active:
                        self._show(view, session)
                    else:
                        view.stale = True
                self._update_topbar()
                screen = self.screen
                if hasattr(screen, "refresh_view"):
                    screen.refresh_view()  # type: ignore[attr-defined]
            self.refreshes += 1
            if self.probe is not None and active is not None and active in dirty:
                session = store.sessions.get(active)
                if session is not None:
                    acked = session.acked
                    self.call_after_refresh(self.probe.painted, active, acked)

    def _set_label(self, session: Session) -> None:
        label = tab_label(session, self.compact)
        sig = label.plain
        if self._labels.get(session.id) != sig:
            self._labels[session.id] = sig
            try:
                self.tabs.get_tab(pane_id(session.id)).label = label
            except (NoMatches, ValueError, KeyError):  # pragma: no cover - pane going away
                pass

    def _show(self, view: SessionView, session: Session) -> None:
        table = view.table
        if (table.sort_key, table.sort_reverse) != (self.sort_key, self.sort_reverse):
            table.sort_key, table.sort_reverse = self.sort_key, self.sort_reverse
            table.set_sort(self.sort_key, self.sort_reverse)
        view.show(session, self.palette, self.clock_ms, text_filter=self.text_filter, compact=self.compact, layout=self.table_layout)

    async def _refresh_all(self) -> None:
        for view in self._views.values():
            view.stale = True
        await self._apply(set(self.store.sessions), True)

    def _update_topbar(self) -> None:
        try:
            bar = self._main.query_one(TopBar)
        except NoMatches:
            return
        store = self.store
        text = Text(no_wrap=True, end="")
        text.append("wmcp-top", style="bold")
        if not self.compact:
            text.append(f" {__version__}")
        if self.relay is not None:
            text.append(f" · relay 127.0.0.1:{self.relay.port}")
        elif self.source_label:
            text.append(" · ")
            text.append_text(inert(self.source_label, limit=40))
        live = sum(1 for s in store.sessions.values() if s.state == "live")
        n = len(store.sessions)
        text.append(f" · {n} session{'s' if n != 1 else ''}" + (f", {live} live" if n else ""))
        counters = store.counters
        extra = []
        if counters.get("rejected"):
            extra.append(f"rejected {counters['rejected']}")
        if counters.get("lost"):
            extra.append(f"lost {counters['lost']}")
        if extra:
            text.append(" · " + " · ".join(extra), style=self.palette.style("error"))
        otlp = self.relay.otlp.stats if self.relay is not None and self.relay.otlp is not None else None
        if otlp is not None and otlp.state == "unreachable":
            text.append(" · ")
            text.append(f"OTLP down, {otlp.dropped} dropped" if not self.compact else f"OTLP✗{otlp.dropped}",
                        style=self.palette.style("error"))
        if self.text_filter:
            text.append(" · filter ")
            text.append_text(inert(self.text_filter, limit=20))
        bar.set_text(text)
        bar.set_paused(self.paused)
        bar.set_compact(self.compact)
        try:
            waiting = self._main.query_one("#waiting", WaitingPanel)
        except NoMatches:
            return
        if waiting.display:
            waiting.update(waiting_text(self.relay.snippet if self.relay else None, self.source_label))

    def _tick(self) -> None:
        self._check_otlp()
        if self.paused:
            return
        session = self.selected_session
        if session is None or not session.inflight:
            return
        view = self._views.get(session.id)
        if view is not None and not view.stale:
            view.tick(session, self.palette, self.clock_ms, self.compact)

    def _check_otlp(self) -> None:
        """The exporter works off the loop; its state (ok / unreachable, drops) reaches the screen on the tick."""
        otlp = self.relay.otlp.stats if self.relay is not None and self.relay.otlp is not None else None
        if otlp is None:
            return
        sig = (otlp.state, otlp.exported, otlp.dropped, otlp.last_error)
        if sig == self._otlp_sig:
            return
        self._otlp_sig = sig
        self._update_topbar()
        screen = self.screen
        if screen.__class__.__name__ == "StatusScreen":
            screen.refresh_view()  # type: ignore[attr-defined]

    @on(TabbedContent.TabActivated)
    def _tab_activated(self, event: TabbedContent.TabActivated) -> None:
        if not self.screen_stack or self._exit:
            return  # a tab change delivered while the app closes
        sid = self.selected_session_id
        if sid is None:
            return
        if self.paused:
            if sid in self._views:
                self._views[sid].table.focus()
            return
        view = self._views.get(sid)
        session = self.store.sessions.get(sid)
        if view is not None and session is not None:
            with self.batch_update():
                self._show(view, session)
            if self.screen is self._main and not self._main.query_one("#filter", Input).has_focus:
                view.table.focus()

    # -- layout -------------------------------------------------------------------------------------------

    def on_resize(self, event: Any) -> None:
        self._update_compact(event.size.width, event.size.height)

    def _update_compact(self, width: int, height: int) -> None:
        compact = width < COMPACT_WIDTH or height < COMPACT_HEIGHT
        layout = "compact" if compact else ("narrow" if width < NARROW_WIDTH else "full")
        if compact == self.compact and layout == self.table_layout:
            return
        self.table_layout = layout
        if compact != self.compact:
            self.compact = compact
            self.set_class(compact, "-compact")
            self._labels.clear()
        if self.is_mounted:
            self.call_later(self._refresh_all)

    # -- actions ------------------------------------------------------------------------------------------

    MAIN_ONLY = frozenset({"next_session", "prev_session", "sort", "sort_reverse", "filter"})

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Session, sort and filter keys act on the dashboard; over a view or the help they pass the key on
        (so tab moves focus there)."""
        if action in self.MAIN_ONLY and self.screen_stack and self.screen is not self._main:
            return False
        if action in self.NOT_WHILE_CALLING and self._invoke_open():
            return False  # the dialog may hold a tool's result: it goes into no file and no other view
        return True

    NOT_WHILE_CALLING = frozenset({"screenshot", "export_report", "export_capture", "export_trace", "invoke",
                                   "status", "timeline", "inspect", "schemas", "prompts", "copy_snippet", "help"})

    def _invoke_open(self) -> bool:
        from .screens.invoke import ConfirmCall, InvokeScreen

        return any(isinstance(s, (InvokeScreen, ConfirmCall)) for s in self.screen_stack)

    def action_help(self) -> None:
        from .screens.help import HelpScreen

        self.push_screen(HelpScreen())

    def action_filter(self) -> None:
        field = self._main.query_one("#filter", Input)
        field.display = True
        field.value = self.text_filter
        field.focus()

    @on(Input.Changed, "#filter")
    async def _filter_changed(self, event: Input.Changed) -> None:
        self.text_filter = event.value
        if not self.paused:
            await self._refresh_all()

    @on(Input.Submitted, "#filter")
    def _filter_done(self, event: Input.Submitted) -> None:
        field = self._main.query_one("#filter", Input)
        field.display = False
        self._focus_table()

    def key_escape(self) -> None:
        field = self._main.query_one("#filter", Input)
        if field.display:
            field.value = ""
            field.display = False
            self._focus_table()

    def _focus_table(self) -> None:
        sid = self.selected_session_id
        if sid and sid in self._views:
            self._views[sid].table.focus()

    def _columns(self) -> list[str]:
        return [c.key for c in columns_for(self.table_layout)]

    async def _set_sort(self, key: str, reverse: bool) -> None:
        self.sort_key, self.sort_reverse = key, reverse  # the header's ▲/▼ says which (no toast: cheap to repaint)
        if not self.paused:
            sid = self.selected_session_id
            if sid and sid in self._views:
                self._views[sid].table.set_sort(key, reverse)  # re-order rows only: the numbers are current
            for other, view in self._views.items():
                if other != sid:
                    view.stale = True
        if self.probe is not None:
            self.call_after_refresh(self.probe.key_painted)

    async def action_sort(self) -> None:
        cols = self._columns()
        i = cols.index(self.sort_key) if self.sort_key in cols else -1
        await self._set_sort(cols[(i + 1) % len(cols)], self.sort_reverse)

    async def action_sort_reverse(self) -> None:
        await self._set_sort(self.sort_key, not self.sort_reverse)

    @on(DataTable.HeaderSelected)
    async def _header_clicked(self, event: DataTable.HeaderSelected) -> None:
        key = event.column_key.value
        if key is None:
            return
        await self._set_sort(key, not self.sort_reverse if key == self.sort_key else False)

    async def action_pause(self) -> None:
        self.paused = not self.paused
        self._main.query_one(TopBar).set_paused(self.paused)
        if not self.paused:
            pending, relay = self._pending, self._pending_relay
            self._pending, self._pending_relay = set(), False
            for view in self._views.values():
                view.stale = True
            await self._apply(pending | set(self.store.sessions), relay)

    def _cycle(self, step: int) -> None:
        ids = [pane_id(sid) for sid in self._views]
        if not ids:
            return
        tabs = self.tabs
        order = [tab.id for tab in tabs.query(ContentTab)]
        order = [ContentTab.sans_prefix(t) for t in order if t] or ids
        current = tabs.active
        i = order.index(current) if current in order else -1
        tabs.active = order[(i + step) % len(order)]

    def action_next_session(self) -> None:
        self._cycle(1)

    def action_prev_session(self) -> None:
        self._cycle(-1)

    def _stamp(self) -> str:
        return time.strftime("%Y%m%d-%H%M%S")

    def _export(self, name: str, doc: Any) -> Path | None:
        path = self.export_dir / name
        try:
            write_json(path, doc)
        except OSError as exc:
            self.notify(inert_str(f"could not write {path}: {exc.strerror}"), severity="error", markup=False)
            return None
        self.notify(inert_str(f"wrote {path}"), title="export", markup=False, timeout=6)
        return path

    def action_export_report(self) -> Path | None:
        session = self.selected_session
        if session is None:
            self.notify("no session selected", severity="warning")
            return None
        return self._export(f"report-{session.id}-{self._stamp()}.json", build_report(session))

    def action_export_capture(self) -> Path | None:
        return self._export(f"capture-{self._stamp()}.json", build_capture(self.store))

    def action_export_trace(self) -> Path | None:
        sessions = [(f"{s.info.origin} {s.id}", s.info.timeOrigin, s.spans()) for s in self.store.sessions.values()]
        return self._export(f"trace-{self._stamp()}.json", trace_document(sessions))

    def action_screenshot(self) -> Path | None:
        self.export_dir.mkdir(parents=True, exist_ok=True)
        try:
            path = self.save_screenshot(f"wmcp-top-{self._stamp()}.svg", str(self.export_dir))
        except OSError as exc:
            self.notify(inert_str(f"could not save the screenshot: {exc.strerror}"), severity="error", markup=False)
            return None
        self.notify(inert_str(f"wrote {path}"), title="screenshot", markup=False, timeout=6)
        return Path(path)

    def action_copy_snippet(self) -> None:
        if self.relay is None:
            self.notify("no relay in this mode: nothing to paste", severity="warning")
            return
        self.copy_to_clipboard(self.relay.snippet.script_tag)
        self.notify("copied the script tag to the clipboard (OSC 52)", timeout=3)

    def action_status(self) -> None:
        from .screens.status import StatusScreen

        self._toggle_view(StatusScreen, lambda: StatusScreen())

    def action_timeline(self) -> None:
        from .screens.timeline import TimelineScreen

        sid = self.selected_session_id
        if sid is None:
            self.notify("no session yet", severity="warning")
            return
        self._toggle_view(TimelineScreen, lambda: TimelineScreen(sid))

    def action_inspect(self) -> None:
        from .screens.inspector import InspectorScreen

        sid = self.selected_session_id
        view = self._views.get(sid) if sid else None
        tool = view.table.selected_tool() if view is not None else None
        if sid is None or tool is None:
            self.notify("no tool selected", severity="warning")
            return
        self._toggle_view(InspectorScreen, lambda: InspectorScreen(sid, tool))

    def action_schemas(self) -> None:
        from .screens.schemas import SchemasScreen

        self._toggle_view(SchemasScreen, lambda: SchemasScreen())

    def action_prompts(self) -> None:
        from .screens.prompts import PromptsScreen

        sid = self.selected_session_id
        if sid is None:
            self.notify("no session yet", severity="warning")
            return
        self._toggle_view(PromptsScreen, lambda: PromptsScreen(sid))

    def action_invoke(self) -> None:
        """Call a tool from the terminal: the inspector's tool, else the selected row of the tool table."""
        from .screens.inspector import InspectorScreen
        from .screens.invoke import InvokeScreen, input_schema, is_read_only

        screen = self.screen
        if isinstance(screen, InspectorScreen):
            sid, tool = screen.session_id, screen.tool
        elif screen is self._main:
            sid = self.selected_session_id
            view = self._views.get(sid) if sid else None
            tool = view.table.selected_tool() if view is not None else None
        else:
            return
        if sid is None or tool is None:
            self.notify("no tool selected", severity="warning")
            return
        if self.relay is None:
            self.notify("no relay in this mode (a replay or a fixed feed): there is no page to call", severity="warning")
            return
        if not self.relay.config.allow_invoke:
            self.notify("calling tools from the terminal is off. Restart with: wmcp-top --allow-invoke "
                        "(tools not marked readOnlyHint still ask before each call)",
                        title="x: call a tool", severity="warning", timeout=8)
            return
        session = self.store.sessions.get(sid)
        rec = session.tools.get(tool) if session is not None else None
        if rec is None or not rec.registered:
            self.notify("that tool is not registered in this session now", severity="warning")
            return
        self.push_screen(InvokeScreen(sid, tool, input_schema(rec.descriptor), is_read_only(rec.annotationsSent, rec.annotationsKept)))

    def _toggle_view(self, kind: type, make: Callable[[], Screen]) -> None:
        if isinstance(self.screen, kind):
            self.pop_screen()
            return
        if len(self.screen_stack) > 1:
            self.pop_screen()
        self.push_screen(make())

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        for action in keys.ACTIONS:
            key = keys.KEY_DISPLAY.get(action.key, action.key)
            yield SystemCommand(f"{action.description} ({key})", action.help or action.description,
                                lambda a=action.action: self.call_later(self.run_action, a))
