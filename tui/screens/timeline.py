"""A session's timeline: registrations, calls, errors, prompts, reloads, visibility, phases; filterable by category.

Enter opens an entry's detail (tui/screens/entry_detail.py: its facts, and a call's payloads when both sides
opted in); ctrl+l clears the view (only what happens afterwards is listed; again shows everything). The table
lists the newest MAX_ROWS entries and says so when there are more; calls started from the terminal are marked.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.coordinate import Coordinate
from textual.widgets import Checkbox, DataTable, Static

from relay_bridge.core.store import Session, TimelineEntry
from relay_bridge.core.units import fmt_bytes, fmt_ms
from tui import keys
from tui.model.changes import Changes
from tui.model.sanitize import inert, inert_str
from tui.screens.entry_detail import EntryDetailScreen, held_payload
from tui.screens.live import LiveView
from tui.widgets import tables
from tui.widgets.keys_footer import KeysFooter

# The store files every timeline kind under one category (relay_bridge.core.store.category); one box each.
GROUPS = ("tools", "calls", "prompts", "system")
MAX_ROWS = 400
COLUMNS: list[tables.Column] = [("at", "at"), ("kind", "kind"), ("what", "what")]


@dataclass
class Row:
    at: float
    kind: str
    what: Text
    failed: bool = False
    entry: TimelineEntry | None = None


def _detail(detail: dict[str, Any], skip: tuple[str, ...] = ()) -> Text:
    out = Text()
    for k, v in detail.items():
        if k in skip:
            continue
        if out:
            out.append("  ")
        out.append(f"{inert_str(k, limit=64)}=", style="dim")  # keys are page text too (an event's detail)
        out.append_text(inert(v, limit=80))
    return out


def _call(session: Session, entry: Any) -> Text:
    """A call's start, settle or error, told with its span's numbers when the span is still in the buffer."""
    seq = entry.detail.get("seq")
    what = Text()
    what.append(f"#{seq} ")
    what.append_text(inert(entry.detail.get("tool", "?"), limit=48))
    span = session.stats.ring.get(seq) if isinstance(seq, int) else None
    if entry.detail.get("invokedBy") == "terminal" or (span is not None and span.invokedBy == "terminal"):
        what.append("  from the terminal", style="italic")  # not the agent's: no host gap, not in the totals
    if entry.kind == "settle" and span is not None:
        what.append(f"  {fmt_ms(span.wallMs)}  {fmt_bytes(span.resultBytes)}")
        if span.gapSincePrevCallMs is not None:
            what.append(f"  gap {fmt_ms(span.gapSincePrevCallMs)}", style="dim")
        elif span.overlapped:
            what.append("  overlapped", style="dim")
    elif entry.kind == "error" and span is not None:
        what.append("  ")
        what.append_text(inert(span.error or "(no message kept)", limit=120))
    else:
        rest = _detail(entry.detail, ("seq", "tool", "invokedBy"))
        if rest:
            what.append("  ")
            what.append_text(rest)
    return what


PROMPT_KINDS = ("prompt-create", "prompt", "prompt-stream", "prompt-destroy")


def _prompt(entry: Any) -> Text:
    """A Prompt API step: the prompt session, then timings and counts (the text never leaves the page)."""
    d = entry.detail
    what = Text()
    what.append_text(inert(d.get("promptSession", "?"), limit=24))
    if entry.kind == "prompt-create":
        what.append("  session created", style="dim")
        return what
    if entry.kind == "prompt-destroy":
        what.append("  session destroyed", style="dim")
        return what
    if "seq" in d:
        what.append(f" #{d['seq']}")
    if isinstance(d.get("totalMs"), (int, float)):
        what.append(f"  {fmt_ms(d['totalMs'])}")
    if entry.kind == "prompt-stream":
        if isinstance(d.get("firstChunkMs"), (int, float)):
            what.append(f"  first chunk {fmt_ms(d['firstChunkMs'])}")
        if isinstance(d.get("chunks"), int):
            what.append(f"  {d['chunks']} chunks")
    counts = [f"{k} {d[key]} ch" for k, key in (("in", "charsIn"), ("out", "charsOut")) if isinstance(d.get(key), int)]
    if counts:
        what.append("  " + " · ".join(counts), style="dim")
    if d.get("error"):
        what.append("  ")
        what.append_text(inert(d["error"], limit=120))
    return what


def recorded_after(session: Session, marker: TimelineEntry | None) -> set[int] | None:
    """Ids of the entries recorded after `marker` (None: no marker, or it left the buffer, so every entry is)."""
    if marker is None:
        return None
    later: list[int] = []
    for entry in reversed(session.timeline):
        if entry is marker:
            return set(later)
        later.append(id(entry))
    return None


def timeline_window(
    session: Session, shown: set[str] | None = None, after: TimelineEntry | None = None, limit: int = MAX_ROWS
) -> tuple[list[Row], int]:
    """The newest `limit` rows recorded after `after` (None: all), and how many there are in all."""
    later = recorded_after(session, after)
    entries = [e for e in session.timeline_view(shown) if later is None or id(e) in later]
    rows = []
    for entry in entries[-limit:]:
        if entry.kind in ("start", "settle", "error", "toolcancel") and "seq" in entry.detail:
            rows.append(Row(entry.at, entry.kind, _call(session, entry), entry=entry))
        elif entry.kind in PROMPT_KINDS:
            rows.append(Row(entry.at, entry.kind, _prompt(entry), bool(entry.detail.get("error")), entry=entry))
        else:
            rows.append(Row(entry.at, entry.kind, _detail(entry.detail), entry=entry))
    return rows, len(entries)


def timeline_rows(session: Session, shown: set[str] | None = None) -> list[Row]:
    return timeline_window(session, shown)[0]


class KindBox(Checkbox):
    """A filter box whose mark is X when on and blank when off: told apart without colour (NO_COLOR, mono)."""

    def watch_value(self) -> None:
        self.BUTTON_INNER = "X" if self.value else " "
        super().watch_value()  # the -on class and the Changed message


class TimelineScreen(LiveView[None]):
    KEY_SCOPE = "timeline"
    AUTO_FOCUS = "#events"  # focused as composed: a focus() in on_mount takes effect a turn after the first frame
    BINDINGS = keys.bindings(KEY_SCOPE)  # 1-4 toggle GROUPS in order
    DEFAULT_CSS = """
    TimelineScreen #title { background: $panel; text-style: bold; padding: 0 1; }
    TimelineScreen #kinds { height: auto; }
    TimelineScreen Checkbox { width: auto; border: none; padding: 0 1; }
    TimelineScreen DataTable { height: 1fr; }
    """

    def __init__(self, session_id: str) -> None:
        super().__init__()
        self.session_id = session_id
        self.shown = dict.fromkeys(GROUPS, True)
        self._sig: tuple | None = None
        self.since: TimelineEntry | None = None  # ctrl+l: list only entries recorded after this one
        self._rows: list[Row] = []

    def compose(self) -> ComposeResult:
        yield Static(id="title")
        with Horizontal(id="kinds"):
            for n, group in enumerate(GROUPS, 1):
                yield KindBox(f"{n} {group}", True, id=f"k-{group}")
        yield tables.Table(cursor_type="row", id="events")
        yield KeysFooter(compact=True)  # two rows from 80 to 119 columns: no key is cut off

    def on_mount(self) -> None:
        self.refresh_view()

    def action_newest(self) -> None:
        table = self.query_one("#events", DataTable)
        table.move_cursor(row=table.row_count - 1, animate=False)

    def action_oldest(self) -> None:
        self.query_one("#events", DataTable).move_cursor(row=0, animate=False)

    def action_toggle_group(self, group: str) -> None:
        self.query_one(f"#k-{group}", Checkbox).toggle()

    def action_clear(self) -> None:
        """Clear the view (not the record): only entries after now are listed; again shows everything."""
        session = self.app.view_store.sessions.get(self.session_id)
        if self.since is not None or session is None or not session.timeline:
            self.since = None
        else:
            self.since = session.timeline[-1]
        self._sig = None
        self.refresh_view()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """Enter on a row: the entry's detail (facts always; payloads when both sides opted in)."""
        session = self.app.view_store.sessions.get(self.session_id)
        index = event.cursor_row
        entry = self._rows[index].entry if 0 <= index < len(self._rows) else None
        if session is None or entry is None:
            return
        relay = self.app.relay
        self.app.push_screen(EntryDetailScreen(session, entry, relay.payloads if relay is not None else None))

    def _on_changes(self, changes: Changes) -> None:
        if changes.touches(self.session_id):
            self.refresh_view()

    def on_checkbox_changed(self, event: Checkbox.Changed) -> None:
        group = (event.checkbox.id or "k-")[2:]
        self.shown[group] = event.value
        self._sig = None
        self.refresh_view()

    def refresh_view(self) -> None:
        session = self.app.view_store.sessions.get(self.session_id)
        title = Text()
        title.append("timeline  ")
        if session is None:
            title.append(f"{self.session_id} (gone)")
            self.query_one("#title", Static).update(title)
            return
        title.append(session.id + " ")
        title.append_text(inert(session.info.origin, limit=50))
        rows, total = timeline_window(session, {g for g, on in self.shown.items() if on}, self.since)
        if total > len(rows):
            title.append(f"  newest {len(rows)} of {total} entries (export a capture for all)", style="bold")
        if self.since is not None:
            title.append("  cleared (ctrl+l: show all)", style="dim")
        compact = bool(getattr(self.app, "compact", False))
        title.append(
            "  (esc · 1-4 filter · enter)" if compact else "  (enter: detail · ctrl+l: clear · 1-4: kinds · end: newest · esc: back)", style="dim"
        )
        self.query_one("#title", Static).update(title)
        sig = (total, rows[-1].at if rows else None, rows[-1].kind if rows else None, tuple(self.shown.values()), self.since)
        if sig == self._sig:
            return
        self._sig = sig
        self._rows = rows
        table = self.query_one("#events", DataTable)
        # Follow the tail only while the cursor is on the newest event (as `less +F`): a reader of older
        # events stays on the one they read.
        follow = table.row_count == 0 or table.cursor_row >= table.row_count - 1
        reading = None if follow else table.coordinate_to_cell_key(Coordinate(table.cursor_row, 0)).row_key.value
        palette = self.app.palette
        relay = self.app.relay
        payloads = relay.payloads if relay is not None else None
        cells: list[tables.Row] = []
        for r in rows:
            if payloads is not None and r.entry is not None and held_payload(session, r.entry, payloads) is not None:
                r.what.append("  [payload]", style="bold")  # enter shows it
            style = (
                palette.style("error")
                if r.kind in ("error", "toolcancel", "disconnected", "rejected") or r.failed
                else (palette.style("muted") if r.kind in ("start", "prompt-create", "prompt-destroy") else "")
            )
            # keyed by the entry's identity while it is in the timeline
            cells.append(([Text(f"+{r.at / 1000:.3f}s", justify="right"), Text(r.kind, style=style), r.what], str(id(r.entry))))
        # a log view: rows are appended history, rebuilt only when its content changes
        tables.fill(table, COLUMNS, cells)
        if not rows:
            return
        if reading is not None and reading in table.rows:
            table.move_cursor(row=table.get_row_index(reading), animate=False)
        else:
            table.move_cursor(row=len(rows) - 1 if follow else 0, animate=False)
