"""The shown session: summary line, phase and coverage, the tool table, sparklines and calls in flight.

One view serves every tab: `point_at(sid)` forgets what the previous session drew, so sessions that are not
on screen have no widgets at all.
"""

from __future__ import annotations

from typing import Callable

from textual.app import ComposeResult
from textual.containers import Vertical

from relay_bridge.store import Session

from ..palette import Palette
from .inflight import InFlightPane
from .sparklines import Sparklines
from .status_pane import StatusPane
from .summary_line import SummaryLine
from .tool_table import ToolTable


class SessionView(Vertical):
    DEFAULT_CSS = """
    SessionView { height: 1fr; }
    """

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self.session_id: str | None = None

    def compose(self) -> ComposeResult:
        yield SummaryLine(classes="summary")
        yield StatusPane(classes="status")
        yield ToolTable(classes="tools")
        yield Sparklines(classes="sparks")
        yield InFlightPane(classes="inflight")

    @property
    def table(self) -> ToolTable:
        return self.query_one(ToolTable)

    def point_at(self, session_id: str) -> None:
        """Show another session from the next `show`: every part forgets what it drew."""
        self.session_id = session_id
        self.query_one(SummaryLine).forget()
        self.query_one(StatusPane).forget()
        self.table.forget()
        self.query_one(InFlightPane).forget()

    def show(self, session: Session, palette: Palette, clock_ms: Callable[[], float], *, text_filter: str = "",
             compact: bool = False, layout: str = "full") -> None:
        self.query_one(SummaryLine).show(session)
        self.query_one(StatusPane).show(session, palette, with_hints=not compact)
        table = self.table
        table.set_columns_layout(layout)
        registered = {name: rec.registered for name, rec in session.tools.items()}
        table.sync(session.stats.aggregates(), palette, registered, text_filter, session.counted_only())
        if not compact:
            self.query_one(Sparklines).show(session)
        self.query_one(InFlightPane).show(session, palette, clock_ms, limit=2 if compact else 6)

    def tick(self, session: Session, palette: Palette, clock_ms: Callable[[], float], compact: bool) -> None:
        if session.inflight:
            self.query_one(InFlightPane).show(session, palette, clock_ms, limit=2 if compact else 6)
