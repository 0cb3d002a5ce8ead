"""The wmcp-top Textual app: the relay, the feed, themes, the keymap, exports and which view is shown.

The relay runs on this app's asyncio loop (started in `on_mount`, stopped in `on_unmount`). The store never
calls the UI: a Coalescer hands the app the ids of sessions that changed, at most four times a second, and
the app publishes them as one `Changes` on its `changes` signal. The dashboard (tui/screens/dashboard.py, the
default screen) and every pushed view subscribe to it and pull what they show from the store.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.command import CommandPalette
from textual.driver import Driver
from textual.filter import LineFilter, Monochrome, NoColor
from textual.reactive import reactive
from textual.screen import Screen
from textual.signal import Signal
from textual.widget import Widget

from relay_bridge.cli import start_relay, write_json
from relay_bridge.core.store import Session, Store, StoreSnapshot
from relay_bridge.errors import UsageError
from relay_bridge.exports.capture import build_capture
from relay_bridge.exports.report import build_report
from relay_bridge.exports.trace import trace_document
from relay_bridge.findings.document import session_findings
from relay_bridge.relay.hold import FrameHold
from relay_bridge.relay.notify import Coalescer
from relay_bridge.relay.paths import data_dir
from relay_bridge.relay.server import Relay, RelayConfig
from tui import keys, starting
from tui.model.changes import Changes
from tui.model.diagnosis import close_diagnosis
from tui.model.sanitize import inert_str
from tui.palette import Palette
from tui.screens.dashboard import DashboardScreen
from tui.themes import APP_VARIABLES, DEFAULT_THEME, load_themes

Feed = Callable[["WmcpTopApp"], Awaitable[None]]
REFRESH_INTERVAL = 0.25  # at most 4 screen updates a second
# A session just shown (a tab switch): its agent answers the watch within a round trip, in a few frames (its status,
# its spans, its ledger); for this long, that many flushes carrying its changes are drawn at once.
SHOWN_HURRY = (0.5, 3)
OTLP_CHECK_INTERVAL = 0.5
COMPACT_WIDTH, COMPACT_HEIGHT = 80, 24
TWO_ROW_FOOTER_WIDTH = 120  # under this (and not compact) the dashboard's footer takes two rows to show every key
NARROW_WIDTH = 100  # under this the tool table drops min and max rather than scroll sideways
FINDINGS_SCREEN = "findings"  # the installed findings view's name
# Seconds a key holds the app's background work (`input_quiet`) at most (its answer painted ends it sooner): longer
# than the relay's frame hold, as the work waits for nobody (under the flood on a loaded machine, a press of `f`
# took up to 0.96 s to be painted).
QUIET_MAX = 1.0


async def tmux_load_buffer(text: str) -> bool:
    """Put `text` in the paste buffer of the tmux server $TMUX names; whether that worked."""
    try:
        proc = await asyncio.create_subprocess_exec(
            "tmux", "load-buffer", "-", stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL
        )
    except OSError:
        return False
    try:
        # Off the loop's path, so a slow tmux only delays the toast: a loaded machine took over 3 s.
        await asyncio.wait_for(proc.communicate(text.encode()), 15)
    except TimeoutError:
        if proc.returncode is None:  # it may have ended as the wait ran out: killing it then raised
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
        await proc.wait()
        return False
    return proc.returncode == 0


class WmcpTopApp(App[int]):
    TITLE = "wmcp-top"
    CSS_PATH = "app.tcss"
    # ctrl+c quits from every screen; in the command palette its search box took the key (copy) and nothing
    # happened: a priority binding that acts only while the palette is open (check_action)
    BINDINGS = [*keys.bindings(), Binding("ctrl+c", "quit_from_palette", show=False, priority=True)]
    ENABLE_COMMAND_PALETTE = True
    AUTO_FOCUS = None  # each screen says what takes focus (the dashboard: the table, when its tab opens)

    paused: reactive[bool] = reactive(False, init=False)  # freeze every view; data is still recorded

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
        self.open_handle: Any = None  # `wmcp-top open`: the browser (relay_bridge.lanes.open.lane.OpenHandle)
        self.compact = False
        self.table_layout = "full"  # compact / narrow / full: which tool-table columns fit
        self.palette = Palette(no_color=self.no_color)
        self.coalescer: Coalescer | None = None
        # Every view subscribes here on mount (and unsubscribes on unmount): what changed in the store.
        self.changes: Signal[Changes] = Signal(self, "changes")
        self._held = Changes()  # what changed while paused
        self._moment: StoreSnapshot | None = None  # while paused: the store as it was at `p`
        self._moment_ms = 0.0
        self._feed_task: asyncio.Task[None] | None = None
        self.theme_errors: list[str] = []
        self._no_color = NoColor()
        self.keymap_problems: list[str] = []
        self.on_first_paint: Callable[[], None] | None = None  # once the first screen is drawn (tui/run.py)
        # after the findings' diagnosis took in a large body of long-lived state (tui/model/diagnosis.py, tui/run.py)
        self.on_settled: Callable[[], None] | None = None
        self.on_grown: Callable[[], None] | None = None  # and between its slices meanwhile
        # Held by a key until its answer is painted, as the relay's page frames are: the findings' diagnosis waits
        # on it between slices (`input_quiet`).
        self.quiet_hold = FrameHold()
        self._input_at = float("-inf")  # time.monotonic() of the last key or click (`since_input`)

    # -- setup --------------------------------------------------------------------------------------------

    def get_driver_class(self) -> type[Driver]:
        """On Linux and macOS, Textual's driver with an input thread that sleeps until a key (tui/quiet_driver.py);
        a driver named in TEXTUAL_DRIVER, and Windows, keep Textual's choice."""
        chosen = super().get_driver_class()
        if (chosen.__module__, chosen.__name__) == ("textual.drivers.linux_driver", "LinuxDriver"):
            from tui.quiet_driver import QuietLinuxDriver

            return QuietLinuxDriver
        return chosen

    def get_line_filters(self) -> Sequence[LineFilter]:
        """NO_COLOR means no colour: Textual's own choice for a true-colour terminal is greys (Monochrome); ours
        is the terminal's default colours, with emphasis kept (bold, reverse: see app.tcss :nocolor)."""
        filters = super().get_line_filters()
        if not self.no_color:
            return filters
        return [self._no_color if isinstance(f, Monochrome) else f for f in filters]

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return dict(APP_VARIABLES)

    def get_default_screen(self) -> Screen:
        return DashboardScreen()

    @property
    def dashboard(self) -> DashboardScreen:
        """The default screen: views and help are pushed on top of it."""
        screen = self.screen_stack[0] if self.screen_stack else self.screen
        assert isinstance(screen, DashboardScreen)
        return screen

    async def on_mount(self) -> None:
        # A Ctrl-C while the dashboard started (tui/starting.py) ends it once its first screen is up, with the
        # shell's code for a Ctrl-C: ending it here, the screen still mounting found its widgets gone.
        if starting.release():
            self.call_after_refresh(self.exit, None, 130)
        self._setup_themes()
        keymap, self.keymap_problems = keys.load_keymap(self.keymap_file)
        if keymap:
            self.set_keymap(keymap)
        for problem in self.keymap_problems + self.theme_errors:
            self.notify(inert_str(problem), severity="warning", markup=False, timeout=8)
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
        self._publish(Changes(frozenset(self.store.sessions), True, True))
        if self.relay is not None and self.relay.otlp is not None:
            # Only with --otlp: a timer that wakes the process costs an idle dashboard CPU for nothing.
            self.set_interval(OTLP_CHECK_INTERVAL, self._check_otlp)
        if self.probe is not None:
            self.probe.watch_loop(asyncio.get_running_loop())
        if self.feed is not None:
            self._feed_task = asyncio.create_task(self._run_feed())
        if self.on_first_paint is not None:
            self.call_after_refresh(self.on_first_paint)
        self.call_after_refresh(self._prepare_findings)

    async def _run_feed(self) -> None:
        assert self.feed is not None
        try:
            await self.feed(self)
        except asyncio.CancelledError:
            raise
        except UsageError as exc:  # the lane could not start (no browser, no DevTools endpoint): one line, exit 2
            self.startup_error = str(exc)
            self.exit(return_code=2)
        except Exception as exc:
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
        except Exception:
            variables = dict(APP_VARIABLES)
        self.palette = Palette.from_variables(variables, self.no_color)

    def watch_theme(self, theme: str) -> None:
        self._update_palette()
        if self.is_running and self.coalescer is not None:
            self._publish(Changes(frozenset(self.store.sessions), True, True))

    async def on_unmount(self) -> None:
        await self.shutdown()

    async def shutdown(self) -> None:
        if self._feed_task is not None:
            self._feed_task.cancel()
            try:
                await self._feed_task
            except (asyncio.CancelledError, Exception):
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
        await close_diagnosis(self)

    # -- input first -------------------------------------------------------------------------------------

    def input_arrived(self) -> None:
        """A key or click, told from the terminal's input thread (tui/quiet_driver.py): the relay holds page
        frames until its answer is painted, or for a fifth of a second (relay_bridge/relay/hold.py), and the app's
        background work waits as long, or for QUIET_MAX."""
        relay = self.relay
        if relay is not None:
            relay.frames.hold()
        self.quiet_hold.hold(QUIET_MAX)
        self._input_at = time.monotonic()  # a float store: atomic across threads

    def since_input(self) -> float:
        """Seconds since the last key or click: the findings' diagnosis does its full collection of the heap once
        they are a few (tui/model/diagnosis.py)."""
        return time.monotonic() - self._input_at

    async def run_action(self, action: Any, default_namespace: Any = None, namespaces: Any = None) -> bool:
        try:
            return await super().run_action(action, default_namespace, namespaces)
        finally:
            if self.quiet_hold.held or (self.relay is not None and self.relay.frames.held):
                self.call_after_refresh(self._input_answered)  # after the paint that shows what the action did

    def _input_answered(self) -> None:
        if self.relay is not None:
            self.relay.frames.release()
        self.quiet_hold.release()

    async def input_quiet(self) -> None:
        """Returns when no key waits for its answer on screen (at once, mostly): background work awaits it
        between its slices (tui/model/diagnosis.py)."""
        await self.quiet_hold.wait()

    # -- store -> views -----------------------------------------------------------------------------------

    def _on_store_change(self, dirty: set[str], relay: bool) -> None:
        self._publish(Changes(frozenset(dirty), relay))

    def _publish(self, changes: Changes) -> None:
        """Tell every subscribed view what changed; while paused, hold it until `p` again."""
        if self.paused:
            self._held = self._held | changes
            return
        self.changes.publish(changes)

    @property
    def view_store(self) -> Store | StoreSnapshot:
        """What the views show: the store, or while paused the one moment `p` was pressed (every view and every
        tab the same moment, opened before the pause or after)."""
        return self._moment if self._moment is not None else self.store

    def view_clock_ms(self) -> float:
        """The clock the views show times with (running calls): stopped at the moment while paused."""
        return self._moment_ms if self._moment is not None else self.clock_ms()

    def watch_paused(self, paused: bool) -> None:
        if paused:
            self._moment, self._moment_ms = self.store.snapshot(), self.clock_ms()
            # what the coalescer had not handed over yet is in the moment too: show it all, once
            self.changes.publish(Changes(frozenset(self._moment.sessions), True, True))
            return
        self._moment = None
        held, self._held = self._held, Changes()
        self._publish(held | Changes(frozenset(self.store.sessions), True, True))

    @property
    def selected_session_id(self) -> str | None:
        return self.dashboard.selected_session_id

    @property
    def selected_session(self) -> Session | None:
        sid = self.selected_session_id
        return self.store.sessions.get(sid) if sid else None

    def _check_otlp(self) -> None:
        """The exporter works off the loop; its state (ok / unreachable, drops) reaches the views from here."""
        otlp = self.relay.otlp.stats if self.relay is not None and self.relay.otlp is not None else None
        if otlp is None:
            return
        sig = (otlp.state, otlp.exported, otlp.dropped, otlp.last_error)
        if sig == self._otlp_sig:
            return
        self._otlp_sig = sig
        self._publish(Changes(relay=True))

    # -- layout -------------------------------------------------------------------------------------------

    def on_resize(self, event: Any) -> None:
        self._update_compact(event.size.width, event.size.height)

    def _update_compact(self, width: int, height: int) -> None:
        compact = width < COMPACT_WIDTH or height < COMPACT_HEIGHT
        two_rows = not compact and width < TWO_ROW_FOOTER_WIDTH
        if two_rows != self.has_class("-two-row-footer"):
            self.set_class(two_rows, "-two-row-footer")
            for footer in self.query("KeysFooter"):
                footer.refresh(recompose=True)
        layout = "compact" if compact else ("narrow" if width < NARROW_WIDTH else "full")
        if compact == self.compact and layout == self.table_layout:
            return
        self.table_layout = layout
        if compact != self.compact:
            self.compact = compact
            self.set_class(compact, "-compact")
        if self.is_running and self.coalescer is not None:
            self.changes.publish(Changes(frozenset(self.store.sessions), True, True))  # a layout, even paused

    # -- actions ------------------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "quit_from_palette":
            return isinstance(self.screen, CommandPalette)  # elsewhere ctrl+c reaches the focused widget first
        # the dialog may hold a tool's result: it goes into no file and no other view
        return not (action in self.NOT_WHILE_CALLING and self._invoke_open())

    NOT_WHILE_CALLING = frozenset(
        {
            "screenshot",
            "export_report",
            "export_capture",
            "export_trace",
            "invoke",
            "status",
            "timeline",
            "inspect",
            "schemas",
            "findings",
            "prompts",
            "copy_snippet",
            "help",
        }
    )

    def _invoke_open(self) -> bool:
        from tui.screens.invoke import ConfirmCall, InvokeScreen

        return any(isinstance(s, (InvokeScreen, ConfirmCall)) for s in self.screen_stack)

    def action_help(self) -> None:
        from tui.screens.help import HelpScreen

        self.push_screen(HelpScreen())

    def action_pause(self) -> None:
        self.paused = not self.paused

    def action_list_key(self, key: str) -> None:
        """j/k/g/G: the key every list and pane already knows (↓ ↑ home end), so each keeps its own meaning of it.
        A DataTable's home/end scroll sideways; its first and last rows are ctrl+home/ctrl+end."""
        from textual.widgets import DataTable

        if isinstance(self.focused, DataTable) and key in ("home", "end"):
            key = f"ctrl+{key}"
        self.simulate_key(key)

    def _stamp(self) -> str:
        return time.strftime("%Y%m%d-%H%M%S")

    def _export_path(self, stem: str, suffix: str) -> Path:
        """`DIR/<stem>-<stamp><suffix>`, never an existing file: two exports in one second get `-2`, `-3`."""
        base = f"{stem}-{self._stamp()}"
        path = self.export_dir / f"{base}{suffix}"
        n = 1
        while path.exists():
            n += 1
            path = self.export_dir / f"{base}-{n}{suffix}"
        return path

    def _export(self, stem: str, doc: Any) -> Path | None:
        path = self._export_path(stem, ".json")
        try:
            write_json(path, doc)
        except OSError as exc:
            self.notify(inert_str(f"could not write {path}: {exc.strerror or exc}"), severity="error", markup=False)
            return None
        # paused, the export is the moment on screen (the views' store), and the notice says so
        moment = " (the paused moment, as shown)" if self._moment is not None else ""
        self.notify(inert_str(f"wrote {path}{moment}"), title="export", markup=False, timeout=6)
        return path

    def _no_sessions(self) -> bool:
        if self.store.sessions:
            return False
        self.notify("no sessions yet: nothing to export", severity="warning")
        return True

    def action_export_report(self) -> Path | None:
        sid = self.selected_session_id
        session = self.view_store.sessions.get(sid) if sid else None  # what is shown: the paused moment too
        if session is None:
            self.notify("no session selected", severity="warning")
            return None
        path = self._export(f"report-{session.id}", build_report(session))
        if path is not None:  # report v2 is closed: the findings go beside it, in a document of their own
            self._export(f"findings-{session.id}", session_findings([session]))
        return path

    def action_export_capture(self) -> Path | None:
        if self._no_sessions():
            return None
        return self._export("capture", build_capture(self.view_store))

    def action_export_trace(self) -> Path | None:
        if self._no_sessions():
            return None
        sessions = [(f"{s.info.origin} {s.id}", s.info.timeOrigin, s.spans(), list(s.inflight.values())) for s in self.view_store.sessions.values()]
        return self._export("trace", trace_document(sessions))

    async def action_quit_from_palette(self) -> None:
        await self.run_action("quit")

    def action_screenshot(self, filename: str | None = None, path: str | None = None) -> None:
        """ctrl+s, and Textual's own palette entry: both go through the payload check of `export_screenshot`."""
        self.save_svg()

    def save_svg(self) -> None:
        """Write what the screen shows, less the notifications: they are hidden for the refresh the picture is
        taken after (a toast such as the last export's "wrote ..." sat over the sparklines), then shown again."""
        if getattr(self.screen, "holds_payload", False):  # tui/screens/entry_detail.py: a body is on screen
            self.notify("no screenshot while a payload is shown: it would write the body to a file", severity="warning")
            return
        racks = list(self.screen.query("ToastRack"))  # the notifications' layer, by its type's name (Textual does not export it)
        for rack in racks:
            rack.display = False
        self.screen.refresh(layout=True)
        self.call_after_refresh(self._write_svg, racks)

    def _write_svg(self, racks: list[Widget]) -> None:
        try:  # an unusable export dir is a toast, like e/E/t: never an exception that takes the relay down
            self.export_dir.mkdir(parents=True, exist_ok=True)
            path = self._export_path("wmcp-top", ".svg")
            saved = self.save_screenshot(path.name, str(self.export_dir))
        except OSError as exc:
            self.notify(inert_str(f"could not save the screenshot in {self.export_dir}: {exc.strerror or exc}"), severity="error", markup=False)
            return
        finally:
            for rack in racks:
                rack.display = True
        self.notify(inert_str(f"wrote {saved}"), title="screenshot", markup=False, timeout=6)

    async def action_copy_snippet(self) -> None:
        if self.relay is None:
            self.notify("no relay in this mode: nothing to paste", severity="warning")
            return
        tag = self.relay.snippet.script_tag
        self.copy_to_clipboard(tag)  # OSC 52: the terminal puts it on the clipboard if it allows that
        if not os.environ.get("TMUX"):
            self.notify("copied the script tag to the clipboard (OSC 52)", timeout=3)
        elif await tmux_load_buffer(tag):  # tmux passes OSC 52 on only with `set-clipboard on`: its buffer too
            self.notify("copied the script tag into tmux's paste buffer (prefix ] pastes it) and sent it by OSC 52", timeout=5)
        else:
            self.notify(
                "sent the script tag by OSC 52, which tmux passes to the clipboard only with `set-clipboard on`", severity="warning", timeout=8
            )

    def action_status(self) -> None:
        from tui.screens.status import StatusScreen

        self._toggle_view(StatusScreen, lambda: StatusScreen())

    def action_timeline(self) -> None:
        from tui.screens.timeline import TimelineScreen

        sid = self.selected_session_id
        if sid is None:
            self.notify("no session yet", severity="warning")
            return
        self._toggle_view(TimelineScreen, lambda: TimelineScreen(sid))

    def action_inspect(self) -> None:
        from tui.screens.inspector import InspectorScreen

        sid = self.selected_session_id
        tool = self.dashboard.selected_tool() if sid else None
        if sid is None or tool is None:
            self.notify("no tool selected", severity="warning")
            return
        self._toggle_view(InspectorScreen, lambda: InspectorScreen(sid, tool))

    def action_schemas(self) -> None:
        from tui.screens.schemas import SchemasScreen

        self._toggle_view(SchemasScreen, lambda: SchemasScreen())

    def _prepare_findings(self) -> None:
        """Build the findings view once the dashboard is drawn, so that the first `f` costs what the next ones do
        (building it took five times as long as showing it: its widgets, their styles and its footer's keys, a
        frame or more after the rest). Pushed and taken off in the same turn of the loop: it is never drawn."""
        from tui.screens.findings import FindingsScreen

        if len(self.screen_stack) != 1 or self.is_screen_installed(FINDINGS_SCREEN):
            return  # a view was opened first: the findings view is built when `f` asks for it
        self.install_screen(FindingsScreen(), FINDINGS_SCREEN)
        self.push_screen(FINDINGS_SCREEN)
        self.pop_screen()

    def action_findings(self) -> None:
        """The findings view is built once and kept (an installed screen): each press shows it again with what
        moved since. A view built on every press cost its widgets, its footer's keys mounted a frame or more later
        and the cycle collector's walks of them: most of what opening took under a flood."""
        from tui.screens.findings import FindingsScreen

        if not self.is_screen_installed(FINDINGS_SCREEN):
            self.install_screen(FindingsScreen(), FINDINGS_SCREEN)
        self._toggle_view(FindingsScreen, lambda: FINDINGS_SCREEN)

    def action_prompts(self) -> None:
        from tui.screens.prompts import PromptsScreen

        sid = self.selected_session_id
        if sid is None:
            self.notify("no session yet", severity="warning")
            return
        self._toggle_view(PromptsScreen, lambda: PromptsScreen(sid))

    def action_invoke(self) -> None:
        """Call a tool from the terminal: the inspector's tool, else the selected row of the tool table."""
        from tui.screens.inspector import InspectorScreen
        from tui.screens.invoke import InvokeScreen, input_schema, is_read_only

        screen = self.screen
        sid: str | None
        tool: str | None
        if isinstance(screen, InspectorScreen):
            sid, tool = screen.session_id, screen.tool
        elif screen is self.dashboard:
            sid = self.selected_session_id
            tool = self.dashboard.selected_tool() if sid else None
        else:
            return
        if sid is None or tool is None:
            self.notify("no tool selected", severity="warning")
            return
        if self.relay is None:
            self.notify("no relay in this mode (a replay or a fixed feed): there is no page to call", severity="warning")
            return
        if not self.relay.config.allow_invoke:
            self.notify(
                "calling tools from the terminal is off. Restart with: wmcp-top --allow-invoke "
                "(tools not marked readOnlyHint still ask before each call)",
                title="x: call a tool",
                severity="warning",
                timeout=8,
            )
            return
        session = self.store.sessions.get(sid)
        rec = session.tools.get(tool) if session is not None else None
        if rec is None or not rec.registered:
            self.notify("that tool is not registered in this session now", severity="warning")
            return
        self.push_screen(InvokeScreen(sid, tool, input_schema(rec.descriptor), is_read_only(rec.annotationsSent, rec.annotationsKept)))

    def _toggle_view(self, kind: type, make: Callable[[], Screen | str]) -> None:
        """Close the view of `kind` when it is shown, else open it (a new screen, or the name of an installed one)
        in place of the one shown."""
        if isinstance(self.screen, kind):
            self.pop_screen()
            self.tell_watching()
            return
        if len(self.screen_stack) > 1:
            self.pop_screen()
        self.push_screen(make())
        self.tell_watching()

    def tell_watching(self) -> None:
        """Tell the relay which sessions are on screen (relay_bridge.core.watching): the dashboard's tab and the
        session of the view open on it. Their agents send at the screen's rate, every other one once a second."""
        if self.relay is None:
            return
        shown = {sid for sid in [self.dashboard.selected_session_id, *(getattr(s, "session_id", None) for s in self.screen_stack)] if sid}
        if self.relay.watching.show("dashboard", shown) and self.coalescer is not None:
            self.coalescer.hurry(shown, *SHOWN_HURRY)  # what their agents send now is drawn as it comes

    # Textual's own entries that one of ours replaces (its Screenshot also fails outside a web driver).
    REPLACED_SYSTEM_COMMANDS = frozenset({"Quit", "Screenshot"})

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        for command in super().get_system_commands(screen):
            if command.title not in self.REPLACED_SYSTEM_COMMANDS:
                yield command
        on_dashboard = isinstance(screen, DashboardScreen)
        view = getattr(screen, "KEY_SCOPE", None)
        for action in keys.ACTIONS:
            if not action.palette or action.native or (action.scope == "dashboard" and not on_dashboard):
                continue
            if action.scope not in ("app", "dashboard") and action.scope != view:
                continue  # a view's keys are commands on that view only ("view": back, which esc does)
            key = keys.KEY_DISPLAY.get(action.key, action.key)
            name = action.action if action.scope == "app" or action.action.startswith("app.") else f"screen.{action.action}"
            yield SystemCommand(
                f"{action.description} ({key})", action.help or action.description, lambda a=name: self.call_later(self.run_action, a)
            )
