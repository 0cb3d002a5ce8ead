"""The shown session: summary line, phase and coverage, the tool table, sparklines and calls in flight.

One view serves every tab: `point_at(sid)` forgets what the previous session drew, so sessions that are not
on screen have no widgets at all.
"""

from __future__ import annotations

from collections.abc import Callable

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from relay_bridge.core.store import Session
from tui.model.tool_rows import ToolRows, Top
from tui.palette import Palette
from tui.widgets.inflight import InFlightPane
from tui.widgets.sparklines import Sparklines
from tui.widgets.status_pane import StatusPane
from tui.widgets.summary_line import SummaryLine
from tui.widgets.tool_table import ToolTable

ROWS_MAX = 100  # tool rows held in the table (more when the screen is taller): the rest are counted, `/` finds them


def hidden_text(hidden: int, matching: int, column: str, reverse: bool, filtered: bool) -> Text:
    out = Text(no_wrap=True, end="")
    out.append(f"{hidden:,} more tool{'s' if hidden != 1 else ''} not shown", style="bold")
    out.append(f": the first {matching - hidden:,} of {matching:,} by {column}{' (reversed)' if reverse else ''}")
    out.append("; refine the filter with /" if filtered else "; / filters by name")
    return out


class SessionView(Vertical):
    DEFAULT_CSS = """
    SessionView { height: 1fr; }
    SessionView .hidden-rows { height: 1; padding: 0 1; color: $text-muted; display: none; }
    SessionView .hidden-rows.-on { display: block; }
    """

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self.session_id: str | None = None
        self.rows = ToolRows()
        self._palette: Palette | None = None
        self._counted: dict[str, int] = {}
        self._hidden = ""

    def compose(self) -> ComposeResult:
        yield SummaryLine(classes="summary")
        yield StatusPane(classes="status")
        yield ToolTable(classes="tools")
        yield Static("", classes="hidden-rows")
        yield Sparklines(classes="sparks")
        yield InFlightPane(classes="inflight")

    @property
    def table(self) -> ToolTable:
        return self.query_one(ToolTable)

    def point_at(self, session_id: str) -> None:
        """Show another session from the next `show`: every part forgets what it drew."""
        self.session_id = session_id
        self.rows = ToolRows()
        self._counted = {}
        self.query_one(SummaryLine).forget()
        self.query_one(StatusPane).forget()
        self.table.forget()
        self.query_one(InFlightPane).forget()

    def show(
        self,
        session: Session,
        palette: Palette,
        clock_ms: Callable[[], float],
        *,
        text_filter: str = "",
        compact: bool = False,
        layout: str = "full",
        sort: tuple[str, bool] = ("tool", False),
    ) -> None:
        self.query_one(SummaryLine).show(session)
        self.query_one(StatusPane).show(session, palette, with_hints=not compact)
        table = self.table
        table.set_columns_layout(layout)
        changed = self.rows.update(session.stats)
        if palette is not self._palette:
            self._palette, changed = palette, None  # a new theme: every shown cell is drawn again
        counted = session.counted_only()
        if counted != self._counted:
            self._counted, changed = counted, None  # the page's ledger moved: redraw the shown rows
        column, reverse = sort
        top = self.rows.top(column, reverse, max(ROWS_MAX, table.size.height), text_filter)
        tools = session.tools

        def registered(name: str) -> bool:
            rec = tools.get(name)
            return rec.registered if rec is not None else True

        table.sync(top.rows, palette, registered, changed, counted)
        self._show_hidden(top, column, reverse, bool(text_filter))
        if not compact:
            self.query_one(Sparklines).show(session)
        self.query_one(InFlightPane).show(session, palette, clock_ms, limit=2 if compact else 6)

    def _show_hidden(self, top: Top, column: str, reverse: bool, filtered: bool) -> None:
        note = self.query_one(".hidden-rows", Static)
        text = hidden_text(top.hidden, top.matching, column, reverse, filtered) if top.hidden else None
        plain = text.plain if text is not None else ""
        if plain != self._hidden:
            shown_before = bool(self._hidden)
            self._hidden = plain
            note.set_class(text is not None, "-on")
            if text is not None:
                # One row whatever it says (it does not wrap): a new count needs no layout pass, only showing it does.
                note.update(text, layout=not shown_before)

    def tick(self, session: Session, palette: Palette, clock_ms: Callable[[], float], compact: bool) -> None:
        if session.inflight:
            self.query_one(InFlightPane).show(session, palette, clock_ms, limit=2 if compact else 6)
