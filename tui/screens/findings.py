"""Findings (issue 35): what to fix first, ranked by what each fix saves, over every session, live.

The rules are relay_bridge.findings (pure; formulas in docs/diagnosis.md). This view diagnoses again only the
sessions whose inputs moved (relay_bridge.findings.inputs.signature, O(1) a session, checked on the app's
coalesced change notices, at most 4 times a second), and runs the cross-tool analysis (bounded and shared fairly
between origins: relay_bridge.findings.schema.catalog) only when registered tools changed. On the loop it only
takes immutable snapshots of the sessions that moved; when they hold more than INLINE_TOOLS tools the rules run
in a worker thread, so no page's catalog holds the screen or another page's acks (tests/bench/
test_findings_flood.py). Tool names and origins are page text: shown through sanitize.inert.
"""

from __future__ import annotations

import asyncio
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import DataTable, Footer, Static

from relay_bridge.core.units import fmt_bytes, fmt_count
from relay_bridge.findings import Finding, SessionInput, diagnose, from_session, ranked, total_tokens
from relay_bridge.findings.images import MAX_SIDE, PIXELS_PER_TOKEN, QUALITY
from relay_bridge.findings.inputs import signature, tools_signature
from relay_bridge.findings.schema import Catalog, catalog
from relay_bridge.findings.text import evidence_text, saving_text, short_saving
from tui.model.changes import Changes
from tui.model.sanitize import inert
from tui.screens.live import LiveView
from tui.widgets import tables

MIN_DO_WIDTH = 16  # the table's "what to do" column takes the width left; the detail below has the whole line
# Up to this many tools to diagnose (in the sessions that moved) the rules run on the loop (a few ms, and the view
# shows them at once); beyond it, in a worker thread, the view saying so meanwhile.
INLINE_TOOLS = 512
SLICE_TOOLS = 4096  # tools snapshot a turn of the loop (about 3 ms) when the work goes off the loop


def _diagnose(changed: list[SessionInput], everyone: list[SessionInput] | None) -> tuple[dict[str, list[Finding]], Catalog | None]:
    """Pure and thread-safe (immutable snapshots in): the changed sessions' own findings, and the cross-tool
    analysis of every session when `everyone` is given."""
    own = {s.id: diagnose([s], duplicates=False) for s in changed}
    return own, catalog(everyone) if everyone is not None else None


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
        self._layout: bool | None = None
        # per session: its signature, the snapshot taken then, its registered tools' signature, its own findings
        self._sigs: dict[str, tuple] = {}
        self._inputs: dict[str, SessionInput] = {}
        self._tool_sigs: dict[str, tuple] = {}
        self._own: dict[str, list[Finding]] = {}
        self._catalog: Catalog | None = None
        self._busy = False  # a worker thread is diagnosing
        self._again = False  # something moved while it did: diagnose again when it is done
        self.pending = False  # the view shows earlier findings (or none yet) while the worker runs

    def compose(self) -> ComposeResult:
        yield Static(id="title")
        yield Static(id="summary")
        yield DataTable(cursor_type="row", id="findings", zebra_stripes=False)
        with VerticalScroll(id="detail-box"):
            yield Static(id="detail")
        yield Footer()

    def on_mount(self) -> None:
        self.refresh_view()
        self.query_one("#findings", DataTable).focus()

    def _on_changes(self, changes: Changes) -> None:
        if changes.touches(None):
            self.refresh_view()

    @property
    def compact(self) -> bool:
        return bool(getattr(self.app, "compact", False))

    def refresh_view(self) -> None:
        if self._busy:
            self._again = True
            return
        sessions = list(self.app.view_store.sessions.values())
        if sum(len(s.tools) for s in sessions) <= INLINE_TOOLS:  # small: all of it now, shown at once
            moved = [self._take(s) for s in sessions]
            changed, everyone = self._forget_and_plan(sessions, moved)
            if changed is not None:
                self._show(*_diagnose(changed, everyone))
            return
        self._busy = self.pending = True
        self._show_summary(len(self._inputs))
        self.run_worker(self._off_loop(sessions), group="findings")

    def _take(self, s: Any) -> tuple[SessionInput | None, bool]:
        """A session's snapshot when its inputs moved (else None), and whether its registered tools did."""
        sig = signature(s)
        if self._sigs.get(s.id) == sig:
            return None, False
        self._sigs[s.id] = sig
        snap = from_session(s)  # immutable: safe to diagnose off the loop
        self._inputs[s.id] = snap
        tools = tools_signature(s)
        if self._tool_sigs.get(s.id) == tools:
            return snap, False
        self._tool_sigs[s.id] = tools
        return snap, True

    def _forget_and_plan(
        self, sessions: list[Any], moved: list[tuple[SessionInput | None, bool]]
    ) -> tuple[list[SessionInput] | None, list[SessionInput] | None]:
        """What to diagnose: the changed sessions (None: nothing moved) and, when the catalog moved, every session."""
        ids = {s.id for s in sessions}
        gone = set(self._inputs) - ids
        for sid in gone:
            for held in (self._sigs, self._inputs, self._tool_sigs, self._own):
                held.pop(sid, None)
        self._origins = {s.id: s.info.origin for s in sessions}
        changed = [snap for snap, _ in moved if snap is not None]
        catalog_moved = bool(gone) or any(tools for _, tools in moved) or self._catalog is None
        if not changed and not catalog_moved and self._layout == self.compact:
            return None, None
        return changed, list(self._inputs.values()) if catalog_moved else None

    async def _off_loop(self, sessions: list[Any]) -> None:
        """Snapshots a slice of SLICE_TOOLS tools a turn of the loop (so no turn is held long), then the rules in a
        worker thread."""
        try:
            moved, done = [], 0
            for s in sessions:
                moved.append(self._take(s))
                done += len(s.tools) if moved[-1][0] is not None else 0
                if done >= SLICE_TOOLS:
                    done = 0
                    await asyncio.sleep(0)
            changed, everyone = self._forget_and_plan(sessions, moved)
            found = await asyncio.to_thread(_diagnose, changed, everyone) if changed is not None else None
        finally:
            self._busy = self.pending = False
        if found is not None:
            self._show(*found)
        else:
            self._show_summary(len(self._inputs))
        if self._again:
            self._again = False
            self.refresh_view()

    def _leaving(self) -> bool:
        """Whether the view is being taken down (escape pressed while the worker ran): nothing left to show."""
        return not self.is_attached or not self.query("#title")

    def _show(self, own: dict[str, list[Finding]], found: Catalog | None) -> None:
        self._own.update(own)
        if found is not None:
            self._catalog = found
        self._layout = self.compact
        if self._leaving():
            return
        cross = [f for f in self._catalog.findings if all(sid in self._inputs for sid in f.sessions)] if self._catalog else []
        self.findings = ranked([f for sid in self._inputs for f in self._own.get(sid, [])] + cross)
        title = Text("findings  ")
        title.append("(esc: back)" if self.compact else "what to fix first, ranked by what each fix saves (esc: back)", style="dim")
        self.query_one("#title", Static).update(title)
        self._show_summary(len(self._inputs))
        self._show_table()
        self._show_detail()

    def _show_summary(self, sessions: int) -> None:
        if self._leaving():
            return
        palette = self.app.palette
        out = Text()
        n = len(self.findings)
        if self.pending:
            tools = sum(len(s.tools) for s in self._inputs.values())
            out.append(f"diagnosing {sessions} sessions ({fmt_count(tools)} tools) off the screen's path… ", style=palette.style("muted"))
        if not n:
            out.append(f"no findings in {sessions} session{'s' if sessions != 1 else ''} yet", style=palette.style("muted"))
        else:
            out.append(f"{n} finding{'s' if n != 1 else ''} in {sessions} session{'s' if sessions != 1 else ''}")
            out.append(f" · together ~{fmt_count(total_tokens(self.findings))} tok", style=palette.style("slow"))
        cover = self._catalog.coverage if self._catalog is not None else None
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
        self.query_one("#summary", Static).update(out)

    def _show_table(self) -> None:
        table = self.query_one("#findings", DataTable)
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
        for n, f in enumerate(self.findings, 1):
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
        table = self.query_one("#findings", DataTable)
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
            out.append("\nsaves ", style="bold")
            out.append(saving_text(f.saving), style=palette.style("slow"))
            if f.saving.bytes:
                out.append(f" · {fmt_bytes(f.saving.bytes)}")
            if f.at:
                out.append("\nat ", style="bold")
                out.append_text(inert(f.at.get("path", ""), limit=80))
                out.append(" · constraint ")
                out.append_text(inert(f.at.get("constraint", ""), limit=40))
            out.append("\nevidence ", style="bold")
            out.append(evidence_text(f).replace(", ", " · "))
        self.query_one("#detail", Static).update(out)
