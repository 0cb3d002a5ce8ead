"""The dashboard: the top bar, one tab per session, the shown session's view, the filter and the footer.

It is the app's default screen (`WmcpTopApp.get_default_screen`). It subscribes to the app's `changes` signal
and redraws only what a change touches:

- one `SessionView` for the session on screen: switching tabs points it at another session, so a hidden
  session costs nothing per refresh (no widgets, no timers, no layout), however many there are;
- a tab label is rebuilt only when its words change (state, origin, layout);
- while another view is pushed on top, changes are merged and applied once when the dashboard shows again.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.css.query import NoMatches
from textual.timer import Timer
from textual.widgets import Input, Static, Tab, Tabs

from relay_bridge import __version__
from relay_bridge.core.store import Session
from relay_bridge.relay.extension import is_extension_agent
from tui import keys
from tui.model.changes import Changes
from tui.model.sanitize import inert
from tui.model.tab_row import TAB_GUTTER, TabRow, tab_row
from tui.screens.live import LiveView
from tui.widgets.keys_footer import KeysFooter
from tui.widgets.session_pane import SessionView
from tui.widgets.session_tabs import SessionTabs
from tui.widgets.tool_table import ToolTable, columns_for
from tui.widgets.topbar import TopBar
from tui.widgets.waiting import WaitingPanel, waiting_text

if TYPE_CHECKING:
    pass

TICK_INTERVAL = 0.5  # calls in flight: their running time ticks on screen (a timer only while there are some)


def origin_host(origin: str) -> str:
    for prefix in ("https://", "http://"):
        if origin.startswith(prefix):
            return origin[len(prefix) :]
    return origin


def session_state_word(session: Session) -> str:
    if session.state == "live":
        return "hidden" if session.info.visibility == "hidden" else "live"
    return session.state  # disconnected | ended


def tab_label(session: Session, compact: bool = False, with_title: bool = False) -> Text:
    """`with_title`: another session has the same origin, so the page's title tells the tabs apart."""
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
    if with_title and session.info.title and not compact:
        label.append(" ")
        label.append_text(inert(session.info.title, limit=20))
    if session.info.context != "top" and not compact:
        label.append(f" {session.info.context}")
    elif session.info.context == "relayed":
        label.append(" rel")
    label.append(f" {state}", style="bold" if state in ("live", "hidden") else "dim")
    return label


def label_key(session: Session, compact: bool, with_title: bool = False) -> tuple[Any, ...]:
    """Everything a tab label is made of: the label is rebuilt only when this changes."""
    return (session_state_word(session), session.agent, session.info.origin, session.info.context, compact, with_title and session.info.title)


def shared_origins(sessions: Any) -> set[str]:
    """Origins that more than one shown session has (their tabs also show the page title)."""
    seen: set[str] = set()
    shared: set[str] = set()
    for session in sessions:
        (shared if session.info.origin in seen else seen).add(session.info.origin)
    return shared


def pane_id(sid: str) -> str:
    return f"s-{sid}"


class DashboardScreen(LiveView[None]):
    BINDINGS = keys.bindings("dashboard")
    AUTO_FOCUS = None  # the session's table takes focus when its tab opens; the filter only when asked

    def __init__(self) -> None:
        super().__init__()
        self.text_filter = ""
        self.sort_key = "tool"
        self.sort_reverse = False
        self._labels: dict[str, tuple[Any, ...]] = {}  # session id -> label_key shown on its tab
        self._row = TabRow(0, 0, 0, "", 0)  # where the tab row rests and what its overflow mark says
        self._cursor: dict[str, str] = {}  # session id -> the tool row the cursor was on when it was left
        self._pending = Changes()  # merged while another view covers this one
        self._lock = asyncio.Lock()
        self._dismissed: set[str] = set()  # ended or disconnected sessions whose tabs D closed
        self._shared: set[str] = set()  # origins of more than one tab
        self._ticker: Timer | None = None  # armed only while the shown session has calls in flight

    def compose(self) -> ComposeResult:
        yield TopBar(id="topbar")
        yield WaitingPanel(id="waiting")
        with Vertical(id="sessions"):
            with Horizontal(id="tabrow"):
                yield SessionTabs(self._lay_tab_row, id="tabs")
                yield Static("", id="more-tabs")
            yield SessionView(id="view")
        yield Input(placeholder="filter tools by name (enter keeps it, esc clears)", id="filter")
        yield KeysFooter(compact=True)

    async def on_mount(self) -> None:
        self.query_one("#filter", Input).display = False
        self.query_one("#sessions").display = False
        self.watch(self.app, "paused", self._paused_changed, init=False)
        await self._apply(Changes(frozenset(self.app.view_store.sessions), True, True))

    # -- what is shown ------------------------------------------------------------------------------------

    @property
    def tabs(self) -> SessionTabs:
        return self.query_one("#tabs", SessionTabs)

    @property
    def tab_row(self) -> TabRow:
        """Where the tab row rests and what its overflow mark says (shown from the moment it changes)."""
        return self._row

    @property
    def view(self) -> SessionView:
        return self.query_one("#view", SessionView)

    @property
    def selected_session_id(self) -> str | None:
        try:
            active = self.tabs.active
        except NoMatches:
            return None
        return active[2:] if active.startswith("s-") else None

    def selected_tool(self) -> str | None:
        return self.view.table.selected_tool() if self.view.session_id is not None else None

    def session_ids(self) -> list[str]:
        """The sessions that have a tab, in tab order."""
        return list(self._labels)

    # -- changes ------------------------------------------------------------------------------------------

    async def _on_changes(self, changes: Changes) -> None:
        if self.app.screen is not self:
            self._pending = self._pending | changes  # covered by a view: catch up when shown again
            return
        await self._apply(changes)

    async def on_screen_resume(self) -> None:
        self.app.tell_watching()  # a view closed: its session may no longer be on screen
        pending, self._pending = self._pending, Changes()
        if pending != Changes():
            await self._apply(pending)
        self._lay_tab_row()  # the terminal may have been resized under the view
        self._arm_ticker()

    async def _apply(self, changes: Changes) -> None:
        if self.app._exit or not self.is_attached:
            return  # shutting down
        try:
            async with self._lock:
                await self._apply_locked(changes)
        except NoMatches:
            if self.app._exit or not self.is_running:
                return  # the widgets went away under us: the app is closing
            raise

    async def _apply_locked(self, changes: Changes) -> None:
        app = self.app
        store = app.view_store
        tabs = self.tabs
        # a dismissed session's tab comes back if its page does (a reconnect makes it live again)
        self._dismissed = {sid for sid in self._dismissed if sid in store.sessions and store.sessions[sid].state != "live"}
        listed = {sid: s for sid, s in store.sessions.items() if sid not in self._dismissed}
        shared = shared_origins(listed.values())
        relabel = shared != self._shared
        self._shared = shared
        new = [sid for sid in listed if sid not in self._labels]
        gone = [sid for sid in self._labels if sid not in listed]
        for sid in gone:
            del self._labels[sid]
            self._cursor.pop(sid, None)
            await tabs.remove_tab(pane_id(sid))
        for sid in new:
            session = store.sessions[sid]
            with_title = session.info.origin in shared
            self._labels[sid] = label_key(session, app.compact, with_title)
            await tabs.add_tab(Tab(Content.from_text(tab_label(session, app.compact, with_title)), id=pane_id(sid)))
        if new:
            shown = store.sessions.get(self.selected_session_id or "")
            if shown is not None and shown.state != "live":
                # the tab on screen has ended (about:blank before `open` navigates, a reloaded page): follow the
                # newest live session rather than keep showing a finished one
                live = [sid for sid in new if store.sessions[sid].state == "live"]
                if live:
                    tabs.active = pane_id(live[-1])
        if new or gone:
            has = bool(self._labels)
            self.query_one("#sessions").display = has
            self.query_one("#waiting", WaitingPanel).display = not has
        labels = self._labels if changes.redraw or relabel else changes.dirty
        active = self.selected_session_id
        relabelled = False  # a tab's new label is a new width: the row is laid out again
        with app.batch_update():
            for sid in list(labels):
                labelled = store.sessions.get(sid)
                if labelled is not None and sid in self._labels:
                    relabelled = self._set_label(labelled) or relabelled
            if active is not None and (changes.touches(active) or active in new):
                self._show(active)
            self._update_topbar()
        if new or gone or relabel or relabelled or changes.redraw:
            self._lay_tab_row()
        if app.probe is not None and active is not None and active in changes.dirty:
            painted = store.sessions.get(active)
            if painted is not None:
                self.call_after_refresh(app.probe.painted, active, painted.acked)

    def _set_label(self, session: Session) -> bool:
        """Whether the session's tab got a new label."""
        with_title = session.info.origin in self._shared
        key = label_key(session, self.app.compact, with_title)
        if self._labels.get(session.id) == key:
            return False
        self._labels[session.id] = key
        tab = self.tabs.get_tab(pane_id(session.id))
        if tab is None:
            return False
        tab.label = Content.from_text(tab_label(session, self.app.compact, with_title))
        return True

    def _show(self, sid: str) -> None:
        """Bring the view to session `sid` (pointing it there first when another session was shown)."""
        app = self.app
        session = app.view_store.sessions.get(sid)
        if session is None:
            return
        view = self.view
        if app.relay is not None and app.relay.payloads is not None:
            app.relay.payloads.show(sid)  # payloads are held for the shown session only
        if view.session_id != sid:
            if view.session_id is not None:
                left = view.table.selected_tool()
                if left is not None:
                    self._cursor[view.session_id] = left
            view.point_at(sid)
        table = view.table
        if (table.sort_key, table.sort_reverse) != (self.sort_key, self.sort_reverse):
            table.set_sort(self.sort_key, self.sort_reverse)
        view.show(
            session,
            app.palette,
            app.view_clock_ms,
            text_filter=self.text_filter,
            compact=app.compact,
            layout=app.table_layout,
            sort=(self.sort_key, self.sort_reverse),
        )
        remembered = self._cursor.pop(sid, None)
        if remembered is not None:
            table.move_to(remembered)
        self._arm_ticker()

    def _update_topbar(self) -> None:
        app = self.app
        store = app.view_store
        text = Text(no_wrap=True, end="")
        text.append("wmcp-top", style="bold")
        where = Text(no_wrap=True, end="")
        if app.relay is not None:
            where.append(f" · relay 127.0.0.1:{app.relay.port}")
        elif app.source_label:
            where.append(" · ")
            where.append_text(inert(app.source_label, limit=40))
        if not app.compact:
            text.append(f" {__version__}")
            text.append_text(where)
        # the sessions with a tab (those D closed are not on screen any more)
        tabbed = [s for sid, s in store.sessions.items() if sid not in self._dismissed]
        live = sum(1 for s in tabbed if s.state == "live")
        n = len(tabbed)
        text.append(f" · {n} session{'s' if n != 1 else ''}" + (f", {live} live" if n else ""))
        shown = store.sessions.get(self.selected_session_id or "")
        if shown is not None:  # the tools the shown page offers the agent now (the internal report tool aside)
            tools = sum(1 for r in shown.tools.values() if r.registered and not r.internal)
            text.append(f" · {tools} tool{'s' if tools != 1 else ''}")
        counters = store.counters
        extra = []
        if counters.get("rejected"):
            extra.append(f"rejected {counters['rejected']}")
        if counters.get("lost"):
            extra.append(f"lost {counters['lost']}")
        if counters.get("refused:token"):  # a page with an old tag (d and the first screen say which)
            extra.append(f"token refused {counters['refused:token']}")
        if extra:
            text.append(" · " + " · ".join(extra), style=app.palette.style("error"))
        otlp = app.relay.otlp.stats if app.relay is not None and app.relay.otlp is not None else None
        if otlp is not None and otlp.state == "unreachable":
            text.append(" · ")
            text.append(f"OTLP down, {otlp.dropped} dropped" if not app.compact else f"OTLP✗{otlp.dropped}", style=app.palette.style("error"))
        if self.text_filter:
            text.append(" · filter ")
            text.append_text(inert(self.text_filter, limit=20))
        if app.compact:  # where last: a narrow bar cuts the line's end (it cut "4 sessions" to "4")
            text.append_text(where)
        bar = self.query_one(TopBar)
        bar.set_text(text)
        bar.set_paused(app.paused)
        bar.set_compact(app.compact)
        bar.set_payloads(app.relay is not None and app.relay.payloads is not None)
        waiting = self.query_one("#waiting", WaitingPanel)
        if waiting.display:
            waiting.update(waiting_text(app.relay.snippet if app.relay else None, app.source_label, app.size.width - 4, app.store.token_refusals))

    def _shown_inflight(self) -> Session | None:
        """The shown session while it has calls in flight whose running time ticks on screen, else None."""
        app = self.app
        if app.paused or app.screen is not self or self.view.session_id is None:
            return None
        session = app.store.sessions.get(self.view.session_id)
        return session if session is not None and session.inflight else None

    def _arm_ticker(self) -> None:
        """Tick the running times only while there are some to show: an idle dashboard has no timer waking it
        (each wake-up costs CPU even when the callback does nothing)."""
        if self._ticker is None and self._shown_inflight() is not None:
            self._ticker = self.set_timer(TICK_INTERVAL, self._tick)

    def _tick(self) -> None:
        self._ticker = None
        session = self._shown_inflight()
        if session is not None:
            app = self.app
            self.view.tick(session, app.palette, app.clock_ms, app.compact)
            self._arm_ticker()

    def _paused_changed(self, paused: bool) -> None:
        self.query_one(TopBar).set_paused(paused)
        self._arm_ticker()

    @on(Tabs.TabActivated, "#tabs")
    def _tab_activated(self, event: Tabs.TabActivated) -> None:
        if self.app._exit:
            return  # a tab change delivered while the app closes
        sid = self.selected_session_id
        if sid is None:
            return
        self.app.tell_watching()  # first: its agent sends what it holds now, while this tab is drawn
        with self.app.batch_update():
            self._show(sid)  # paused: the session as it was at the moment of the pause (app.view_store)
            self._update_topbar()  # it counts the shown session's tools
        if self.app.screen is self and not self.query_one("#filter", Input).has_focus:
            self.view.table.focus()

    # -- keys ---------------------------------------------------------------------------------------------

    def action_filter(self) -> None:
        field = self.query_one("#filter", Input)
        field.display = True
        field.value = self.text_filter
        field.focus()

    @on(Input.Changed, "#filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        self.text_filter = event.value
        if not self.app.paused:
            self._redraw_shown()

    @on(Input.Submitted, "#filter")
    def _filter_done(self, event: Input.Submitted) -> None:
        self.query_one("#filter", Input).display = False
        self.view.table.focus()

    def key_escape(self) -> None:
        """Esc clears the filter: the one being typed, or the one kept with enter (as the help says)."""
        field = self.query_one("#filter", Input)
        if not field.display and not self.text_filter:
            return
        field.display = False
        with field.prevent(Input.Changed):
            field.value = ""
        self.text_filter = ""
        self._redraw_shown()
        self.view.table.focus()

    def _redraw_shown(self) -> None:
        sid = self.selected_session_id
        if sid is not None:
            with self.app.batch_update():
                self._show(sid)
                self._update_topbar()

    def _set_sort(self, key: str, reverse: bool) -> None:
        self.sort_key, self.sort_reverse = key, reverse  # the header's ▲/▼ says which (no toast: cheap to repaint)
        if not self.app.paused:
            sid = self.selected_session_id
            if sid is not None:
                self._show(sid)
        probe = self.app.probe
        if probe is not None:
            self.call_after_refresh(probe.key_painted)

    def action_sort(self) -> None:
        cols = [c.key for c in columns_for(self.app.table_layout)]
        i = cols.index(self.sort_key) if self.sort_key in cols else -1
        self._set_sort(cols[(i + 1) % len(cols)], self.sort_reverse)

    def action_sort_by(self) -> None:
        from tui.screens.sort_picker import SortPicker

        def picked(key: str | None) -> None:
            if key is not None:  # the picked column, in the direction in use (S reverses it)
                self._set_sort(key, self.sort_reverse)

        columns = [(c.key, c.label) for c in columns_for(self.app.table_layout)]
        self.app.push_screen(SortPicker(columns, self.sort_key), picked)

    def action_sort_reverse(self) -> None:
        self._set_sort(self.sort_key, not self.sort_reverse)

    @on(ToolTable.HeaderSelected)
    def _header_clicked(self, event: ToolTable.HeaderSelected) -> None:
        key = event.column_key
        self._set_sort(key, not self.sort_reverse if key == self.sort_key else False)

    def action_next_session(self) -> None:
        self.tabs.action_next_tab()

    async def action_dismiss_ended(self) -> None:
        """Close the tabs of sessions that ended or disconnected (their data stays: exports, replay, the log)."""
        store = self.app.view_store
        done = {sid for sid in self._labels if store.sessions[sid].state != "live"}
        if not done:
            self.app.notify("no ended session to dismiss", timeout=3)
            return
        self._dismissed |= done
        await self._apply(Changes(frozenset(), True, True))
        self.app.notify(f"dismissed {len(done)} ended session{'s' if len(done) != 1 else ''}", timeout=3)

    def on_resize(self) -> None:
        self._lay_tab_row()

    def _lay_tab_row(self) -> None:
        """Scroll the tab row to where it rests with the selected tab in sight, and say beside it how many tabs
        are out of sight: `+N ›` on the right, `‹ +N` on the left, `‹L R›` on both sides (tab, shift+tab or a
        click reach them; a tab cut by an edge counts as out of sight). Both follow from the tabs' labels, the
        selected tab and the terminal's width (tui/model/tab_row.py), whether the row is laid out yet, moving,
        or covered by a view: called whenever one of those changes."""
        try:
            tabs, mark = self.tabs, self.query_one("#more-tabs", Static)
        except NoMatches:
            return  # not composed: the app is leaving at start (port in use)
        shown = list(tabs.query("#tabs-list > Tab").results(Tab))
        selected = next((i for i, tab in enumerate(shown) if tab.id == tabs.active), None)
        row = tab_row([tab.label.cell_length + TAB_GUTTER for tab in shown], selected, self.app.size.width)
        if row != self._row:  # an update is a layout pass of the whole screen: only when it changes
            self._row = row
            mark.update(row.mark)
            if row.mark:
                mark.styles.width = row.mark_width  # the cells the row's view was counted without
            mark.display = bool(row.mark)
        tabs.rest_at(row.scroll_x)

    def action_prev_session(self) -> None:
        self.tabs.action_previous_tab()
