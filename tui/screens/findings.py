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
import weakref
from typing import Any, NamedTuple

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
# Rows the table shows, best first: a flood's thousand findings took a quarter second of the loop to lay out, and
# no one reads past the first screens (the summary says how many there are; `diagnose` lists them all).
MAX_ROWS = 100
SLICE_TOOLS = 4096  # tools snapshot a turn of the loop (about 3 ms) when the work goes off the loop


def _diagnose(changed: list[SessionInput], everyone: list[SessionInput] | None) -> tuple[dict[str, list[Finding]], Catalog | None]:
    """Pure and thread-safe (immutable snapshots in): the changed sessions' own findings, and the cross-tool
    analysis of every session when `everyone` is given."""
    own = {s.id: diagnose([s], duplicates=False) for s in changed}
    return own, catalog(everyone) if everyone is not None else None


class Diagnosed:
    """What the view has worked out, kept across its openings (one per app), so pressing `f` again diagnoses only
    what moved since. Per session: its signature, the snapshot taken then, its registered tools' signature, its
    own findings; and the last cross-tool analysis. Written only when results are shown: a view left while its
    worker ran leaves nothing half-done."""

    def __init__(self) -> None:
        self.sigs: dict[str, tuple] = {}
        self.inputs: dict[str, SessionInput] = {}
        self.tool_sigs: dict[str, tuple] = {}
        self.own: dict[str, list[Finding]] = {}
        self.catalog: Catalog | None = None


_KNOWN: weakref.WeakKeyDictionary[Any, Diagnosed] = weakref.WeakKeyDictionary()


class Taken(NamedTuple):
    sid: str
    sig: tuple
    snap: SessionInput
    tools: tuple  # its registered tools' signature
    tools_moved: bool


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
        self._layout: bool | None = None  # the layout last shown; None: nothing shown yet
        self._known = Diagnosed()  # replaced on mount by the app's own (kept across openings)
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
        self._known = _KNOWN.setdefault(self.app, self._known)
        sessions = list(self.app.view_store.sessions.values())
        if sum(len(s.tools) for s in sessions) <= INLINE_TOOLS:  # small: all of it now, shown at once
            taken = [t for s in sessions if (t := self._take(s)) is not None]
            plan = self._plan(sessions, taken)
            if plan is not None:
                self._show(taken, plan[2], *_diagnose(plan[0], plan[1]))
            return
        self._busy = self.pending = True
        self._show_summary(len(sessions))
        self.run_worker(self._off_loop(sessions), group="findings")

    def _take(self, s: Any) -> Taken | None:
        """A session's snapshot when its inputs moved since they were last diagnosed (else None)."""
        sig = signature(s)
        if self._known.sigs.get(s.id) == sig:
            return None
        tools = tools_signature(s)
        return Taken(s.id, sig, from_session(s), tools, self._known.tool_sigs.get(s.id) != tools)  # immutable snapshot

    def _plan(self, sessions: list[Any], taken: list[Taken]) -> tuple[list[SessionInput], list[SessionInput] | None, set[str]] | None:
        """What to diagnose: the changed sessions, every session when the catalog moved (else None), and the
        sessions gone; None when nothing moved and the view already shows the rest."""
        self._origins = {s.id: s.info.origin for s in sessions}
        gone = set(self._known.inputs) - {s.id for s in sessions}
        known = self._known
        catalog_moved = bool(gone) or any(t.tools_moved for t in taken) or known.catalog is None
        if not taken and not catalog_moved and self._layout == self.compact:
            return None
        everyone = None
        if catalog_moved:
            fresh = {t.sid: t.snap for t in taken}
            everyone = [fresh.get(s.id) or known.inputs[s.id] for s in sessions if s.id in fresh or s.id in known.inputs]
        return [t.snap for t in taken], everyone, gone

    async def _off_loop(self, sessions: list[Any]) -> None:
        """Snapshots a slice of SLICE_TOOLS tools a turn of the loop (so no turn is held long), then the rules in a
        worker thread."""
        try:
            taken, done = [], 0
            for s in sessions:
                t = self._take(s)
                if t is not None:
                    taken.append(t)
                    done += len(t.snap.tools)
                if done >= SLICE_TOOLS:
                    done = 0
                    await asyncio.sleep(0)
            plan = self._plan(sessions, taken)
            found = await asyncio.to_thread(_diagnose, plan[0], plan[1]) if plan is not None else None
        finally:
            self._busy = self.pending = False
        if plan is not None and found is not None:
            self._show(taken, plan[2], *found)
        else:
            self._show_summary(len(self._known.inputs))
        if self._again:
            self._again = False
            self.refresh_view()

    def _leaving(self) -> bool:
        """Whether the view is being taken down (escape pressed while the worker ran): nothing left to show."""
        return not self.is_attached or not self.query("#title")

    def _show(self, taken: list[Taken], gone: set[str], own: dict[str, list[Finding]], found: Catalog | None) -> None:
        known = self._known
        for sid in gone:
            for held in (known.sigs, known.inputs, known.tool_sigs, known.own):
                held.pop(sid, None)
        for t in taken:
            known.sigs[t.sid], known.inputs[t.sid], known.tool_sigs[t.sid] = t.sig, t.snap, t.tools
        known.own.update(own)
        if found is not None:
            known.catalog = found
        if self._leaving():
            return
        self._layout = self.compact
        inputs = known.inputs
        cross = [f for f in known.catalog.findings if all(sid in inputs for sid in f.sessions)] if known.catalog else []
        self.findings = ranked([f for sid in inputs for f in known.own.get(sid, [])] + cross)
        title = Text("findings  ")
        title.append(
            "(esc: back)" if self.compact else "what to fix first: attacks, then what each fix saves (esc: back)",
            style="dim",
        )
        self.query_one("#title", Static).update(title)
        self._show_summary(len(inputs))
        self._show_table()
        self._show_detail()

    def _show_summary(self, sessions: int) -> None:
        if self._leaving():
            return
        palette = self.app.palette
        out = Text()
        n = len(self.findings)
        if self.pending:
            tools = sum(len(s.tools) for s in self.app.view_store.sessions.values())
            out.append(f"diagnosing {sessions} sessions ({fmt_count(tools)} tools) off the screen's path… ", style=palette.style("muted"))
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
        self.query_one("#detail", Static).update(out)
