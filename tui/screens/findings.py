"""Findings (issue 35): what to fix first, ranked by what each fix saves, over every session, live.

The rules are relay_bridge.findings (pure; formulas in docs/diagnosis.md). What the view works out is the app's
(tui.model.diagnosis.Diagnosis, kept across openings): a session is diagnosed again only when its inputs moved,
a definition reviewed once by content, a flood's definitions reviewed in a worker process and the rules run on
the loop a session a turn, smallest origins first. The view itself is one screen the app keeps (built while the
dashboard is idle; `f` shows it again): it paints at once with what is known, its rows a frame later when they
moved, and is redrawn as the rest fills in (tests/bench/test_findings_flood.py). Tool names and origins are page
text: shown through sanitize.inert.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import DataTable, Static

from relay_bridge.core.units import fmt_bytes, fmt_count
from relay_bridge.findings import Finding, total_tokens
from relay_bridge.findings.images import MAX_SIDE, PIXELS_PER_TOKEN, QUALITY
from relay_bridge.findings.text import evidence_text, saving_text, short_saving
from tui.model.changes import Changes
from tui.model.diagnosis import Diagnosis, diagnosis_of
from tui.model.sanitize import inert
from tui.screens.live import LiveView
from tui.widgets import tables
from tui.widgets.keys_footer import SteadyFooter

MIN_DO_WIDTH = 16  # the table's "what to do" column takes the width left; the detail below has the whole line
# Rows the table shows, best first: a flood's thousand findings took a quarter second of the loop to lay out, and
# no one reads past the first screens (the summary says how many there are; `diagnose` lists them all).
MAX_ROWS = 100


class FindingsScreen(LiveView[None]):
    BINDINGS = [Binding("escape,q", "app.pop_screen", "Back", id="wmcp.view.back")]
    DEFAULT_CSS = """
    FindingsScreen #title { background: $panel; text-style: bold; padding: 0 1; }
    FindingsScreen #summary { padding: 0 1; height: auto; background: $boost; }
    FindingsScreen #findings { height: auto; max-height: 60%; min-height: 4; }
    FindingsScreen #detail-box { height: 1fr; padding: 0 1; border-top: solid $panel; }
    """

    def __init__(self) -> None:
        super().__init__()
        self.findings: list[Finding] = []
        self._origins: dict[str, str] = {}
        # what the table last showed: the diagnosis's version, the layout, the width, the theme's palette
        self._drawn: tuple[Any, ...] | None = None
        self._summary: Text | None = None  # what the summary last showed
        self._known = Diagnosis()  # replaced on mount by the app's own
        self._rows_later = False  # the rows are drawn a frame after the rest
        self._styled: tuple[Any, ...] | None = None  # what the view's styles were last applied under
        self._title = Static(id="title")
        self._summary_line = Static(id="summary")
        self._table = tables.SteadyTable(cursor_type="row", id="findings", zebra_stripes=False)
        self._detail = Static(id="detail")

    @property
    def pending(self) -> bool:
        """The view shows what is known (or nothing yet) while the rest is worked out."""
        return self._known.pending

    def compose(self) -> ComposeResult:
        yield self._title
        yield self._summary_line
        yield self._table
        with VerticalScroll(id="detail-box"):
            yield self._detail
        yield SteadyFooter()

    def on_mount(self) -> None:
        self._known = diagnosis_of(self.app)
        self._known.shown = self._show
        self._table.focus()  # not AUTO_FOCUS: focused as composed, its footer was once laid out cramped

    def on_screen_resume(self, event: events.ScreenResume) -> None:
        """Shown (the app keeps this one view: tui/app.py `action_findings`). What is known first, then what moved
        since it was last shown: the first frame waits for no diagnosis, and its rows for no other part."""
        # Textual applies a shown screen's styles again (this handler runs before the Screen's own): 5 ms of a
        # press's 20 to 30 on the loop, for nothing unless the theme or the classes the app's CSS matches on moved
        # while the view was closed.
        styled = (self.app.theme, self.app.classes, self.app.pseudo_classes, self.classes)
        if styled == self._styled:
            event.refresh_styles = False
        self._styled = styled
        self.app.changes.subscribe(self, self._on_changes)
        table = self._table
        if table.row_count and table.cursor_row:
            table.move_cursor(row=0, animate=False)  # each opening starts at what to fix first
        self._show(opening=True)
        self.call_after_refresh(self.refresh_view)

    def on_screen_suspend(self) -> None:
        """Closed, or covered by a dialog: it follows the store again when shown (and catches up then)."""
        self.app.changes.unsubscribe(self)

    def on_unmount(self) -> None:
        if self._known.shown == self._show:
            self._known.shown = None

    def _on_changes(self, changes: Changes) -> None:
        if changes.touches(None):
            self.refresh_view()

    @property
    def compact(self) -> bool:
        return bool(getattr(self.app, "compact", False))

    def refresh_view(self) -> None:
        if self._hidden():
            return
        self._known.update(lambda: list(self.app.view_store.sessions.values()), spawn=lambda work: self.app.run_worker(work, group="findings"))
        self._show()

    def _hidden(self) -> bool:
        """Not on top of the screen (closed, under a dialog), or being taken down with the app (its parts removed
        first): nothing is drawn until it is shown again."""
        return self.app.screen is not self or not all(part.is_attached for part in (self._title, self._summary_line, self._table, self._detail))

    def _show(self, opening: bool = False) -> None:
        """What is known now; the table only when it moved (a flood's table is the costliest part)."""
        if self._hidden():
            return
        known = self._known
        drawn = (known.version, self.compact, getattr(self.app, "table_layout", "full"), self.size.width, self.app.palette)
        if drawn != self._drawn:
            self._drawn = drawn
            self.findings = known.findings()
            self._origins = {sid: s.origin for sid, s in known.inputs.items()}
            title = Text("findings  ")
            title.append(
                "(esc: back)" if self.compact else "what to fix first: attacks, then what each fix saves (esc: back)",
                style="dim",
            )
            self._title.update(title)
            if opening and self.findings:
                # The view paints first (title, summary, keys), its rows a frame later: a screenful of rows is
                # most of what drawing the view costs (about 35 ms under a flood's findings).
                if not self._rows_later:
                    self._rows_later = True
                    self.call_after_refresh(self._show_rows)
            else:
                self._show_rows()
        self._show_summary(len(known.inputs))

    def _show_rows(self) -> None:
        self._rows_later = False
        if self._hidden():
            self._drawn = None  # closed before its rows were drawn: drawn whole when shown again
            return
        self._show_table()
        self._show_detail()

    def _show_summary(self, sessions: int) -> None:
        palette = self.app.palette
        out = Text()
        n = len(self.findings)
        if self.pending:
            live = self.app.view_store.sessions
            tools = sum(len(s.tools) for s in live.values())
            out.append(
                f"diagnosing {len(live)} sessions ({fmt_count(tools)} tools) off the screen's path, {sessions} done… ",
                style=palette.style("muted"),
            )
        if not n:
            out.append(f"no findings in {sessions} session{'s' if sessions != 1 else ''} yet", style=palette.style("muted"))
        else:
            out.append(f"{n} finding{'s' if n != 1 else ''} in {sessions} session{'s' if sessions != 1 else ''}")
            high = sum(1 for f in self.findings if f.severity == "high")
            if high:
                out.append(f" · {high} high-severity", style=palette.style("error"))
            out.append(f" · together ~{fmt_count(total_tokens(self.findings))} tok", style=palette.style("slow"))
            if n > MAX_ROWS:
                out.append(f" · the first {MAX_ROWS} shown (wmcp-top diagnose lists all)", style=palette.style("muted"))
        cover = self._known.catalog.coverage if self._known.catalog is not None else None
        if cover is not None and not cover["complete"]:
            out.append(
                f"\nduplicates: compared {fmt_count(cover['compared'])} of {fmt_count(cover['tools'])} tool definitions "
                f"(at most {fmt_count(cover['limits']['tools'])}, shared between origins)",
                style=palette.style("muted"),
            )
        if not self.compact:
            out.append(
                f"\ntokens: ceil(bytes / 4); images ranked by that byte rule, with ceil(w x h / {PIXELS_PER_TOKEN}) "
                f"beside it (JPEG q{QUALITY}, long side <= {MAX_SIDE} px) · docs/diagnosis.md",
                style=palette.style("muted"),
            )
        if out != self._summary:  # an update lays the screen out again
            self._summary = out
            self._summary_line.update(out)

    def _show_table(self) -> None:
        table = self._table
        keep = table.cursor_row if table.row_count else 0
        # compact: no rule or session columns; narrow (under 100 columns): no session column
        layout = "compact" if self.compact else getattr(self.app, "table_layout", "full")
        palette = self.app.palette
        columns: list[tables.Column] = [("#", "rank"), (Text("saves", justify="right"), "saves")]
        if layout != "compact":
            columns.append(("rule", "rule"))
        columns.append(("tool", "tool"))
        if layout == "full":
            columns.append(("session", "session"))
        rows: list[tuple[list[Text], str]] = []
        for n, f in enumerate(self.findings[:MAX_ROWS], 1):
            if f.severity:  # a security finding: its severity where a saving would be
                saves = Text(f.severity, justify="right", style=palette.style("error" if f.severity in ("high", "error") else "slow"))
            else:
                saves = Text(short_saving(f.saving), justify="right", style=palette.style("slow" if f.saving.tokens else "muted"))
            tool = inert(" + ".join(f.tools), limit=18 if layout == "compact" else 32) if f.tools else Text("(session)", style=palette.style("muted"))
            cells: list[Text] = [Text(str(n), justify="right"), saves]
            if layout != "compact":
                cells.append(Text(f.rule))
            cells.append(tool)
            if layout == "full":
                cells.append(Text(f.session or f"{len(f.sessions)} sessions"))
            rows.append((cells, str(n)))
        # what is left of the width goes to "what to do" (cells are padded by one column each side)
        used = sum(
            max([Text(c[0]).cell_len if isinstance(c[0], str) else c[0].cell_len] + [r[0][i].cell_len for r in rows]) + 2
            for i, c in enumerate(columns)
        )
        width = max(MIN_DO_WIDTH, self.size.width - used - 5)  # and a vertical scrollbar
        columns.append(("what to do", "do"))
        for (cells, _), f in zip(rows, self.findings, strict=False):
            cells.append(Text(f.do if len(f.do) <= width else f.do[: width - 1] + "…"))
        tables.fill(table, columns, rows)
        if rows:
            table.move_cursor(row=min(keep, len(rows) - 1))

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_detail()

    def selected(self) -> Finding | None:
        table = self._table
        if not table.row_count or not self.findings:
            return None
        return self.findings[min(table.cursor_row, len(self.findings) - 1)]

    def _show_detail(self) -> None:
        palette = self.app.palette
        f = self.selected()
        out = Text()
        if f is None:
            out.append("Findings come from what the pages report: a few calls are enough for most rules.", style=palette.style("muted"))
        else:
            out.append(f.rule, style="bold")
            out.append("  ")
            out.append_text(inert(" + ".join(f.tools), limit=80) if f.tools else Text("the whole session"))
            if f.sessions:  # drawn from several sessions: every one of them, with its origin
                for sid in f.sessions:
                    out.append(f"\n  {sid} ")
                    out.append_text(inert(self._origins.get(sid, ""), limit=60))
            else:
                out.append(f"  {f.session} ")
                out.append_text(inert(self._origins.get(f.session, ""), limit=60))
            out.append("\n")
            out.append(f.do)
            if f.severity:
                out.append(f"\n{f.severity} ", style="bold " + palette.style("error" if f.severity in ("high", "error") else "slow"))
                out.append(f.reason)  # our words: the rule's, never the page's text
                out.append("\nat ", style="bold")
                out.append_text(inert(f.at.get("pointer", "") or "(the whole definition)", limit=80))
                out.append(" · source ", style="bold")
                out.append(f.source, style=palette.style("muted"))
            else:
                out.append("\nsaves ", style="bold")
                out.append(saving_text(f.saving), style=palette.style("slow"))
                if f.saving.bytes:
                    out.append(f" · {fmt_bytes(f.saving.bytes)}")
            if "path" in f.at:
                out.append("\nat ", style="bold")
                out.append_text(inert(f.at.get("path", ""), limit=80))
                out.append(" · constraint ")
                out.append_text(inert(f.at.get("constraint", ""), limit=40))
            out.append("\nevidence ", style="bold")
            out.append(evidence_text(f).replace(", ", " · "))
        self._detail.update(out)
