"""A session's timeline: registrations, calls, errors, prompts, reloads, visibility, phases; filterable by category."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Checkbox, DataTable, Footer, Static

from relay_bridge.store import Session
from relay_bridge.units import fmt_bytes, fmt_ms

from ..changes import Changes
from ..sanitize import inert

# The store files every timeline kind under one category (relay_bridge.store.category); one box each.
GROUPS = ("tools", "calls", "prompts", "system")
MAX_ROWS = 400


@dataclass
class Row:
    at: float
    kind: str
    what: Text
    failed: bool = False


def _detail(detail: dict[str, Any], skip: tuple[str, ...] = ()) -> Text:
    out = Text()
    for k, v in detail.items():
        if k in skip:
            continue
        if out:
            out.append("  ")
        out.append(f"{k}=", style="dim")
        out.append_text(inert(v, limit=80))
    return out


def _call(session: Session, entry: Any) -> Text:
    """A call's start, settle or error, told with its span's numbers when the span is still in the buffer."""
    seq = entry.detail.get("seq")
    what = Text()
    what.append(f"#{seq} ")
    what.append_text(inert(entry.detail.get("tool", "?"), limit=48))
    span = session.stats.ring.get(seq) if isinstance(seq, int) else None
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
        rest = _detail(entry.detail, ("seq", "tool"))
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


def timeline_rows(session: Session, shown: set[str] | None = None) -> list[Row]:
    rows = []
    for entry in session.timeline_view(shown):
        if entry.kind in ("start", "settle", "error", "toolcancel") and "seq" in entry.detail:
            rows.append(Row(entry.at, entry.kind, _call(session, entry)))
        elif entry.kind in PROMPT_KINDS:
            rows.append(Row(entry.at, entry.kind, _prompt(entry), bool(entry.detail.get("error"))))
        else:
            rows.append(Row(entry.at, entry.kind, _detail(entry.detail)))
    return rows[-MAX_ROWS:]


class TimelineScreen(Screen[None]):
    BINDINGS = [Binding("escape", "app.pop_screen", "Back", id="wmcp.view.back")]
    DEFAULT_CSS = """
    TimelineScreen #title { background: $panel; text-style: bold; padding: 0 1; }
    TimelineScreen #kinds { height: auto; }
    TimelineScreen Checkbox { width: auto; border: none; padding: 0 1; }
    TimelineScreen DataTable { height: 1fr; }
    """

    def __init__(self, session_id: str) -> None:
        super().__init__()
        self.session_id = session_id
        self.shown = {g: True for g in GROUPS}
        self._sig: tuple | None = None

    def compose(self) -> ComposeResult:
        yield Static(id="title")
        with Horizontal(id="kinds"):
            for group in GROUPS:
                yield Checkbox(group, True, id=f"k-{group}")
        yield DataTable(cursor_type="row", id="events")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one("#events", DataTable)
        table.add_column("at", key="at")
        table.add_column("kind", key="kind")
        table.add_column("what", key="what")
        self.app.changes.subscribe(self, self._on_changes)  # type: ignore[attr-defined]
        self.refresh_view()
        table.focus()

    def on_unmount(self) -> None:
        self.app.changes.unsubscribe(self)  # type: ignore[attr-defined]

    def _on_changes(self, changes: Changes) -> None:
        if changes.touches(self.session_id):
            self.refresh_view()

    def on_checkbox_changed(self, event: Checkbox.Changed) -> None:
        group = (event.checkbox.id or "k-")[2:]
        self.shown[group] = event.value
        self._sig = None
        self.refresh_view()

    def refresh_view(self) -> None:
        session = self.app.store.sessions.get(self.session_id)
        title = Text()
        title.append("timeline  ")
        if session is None:
            title.append(f"{self.session_id} (gone)")
            self.query_one("#title", Static).update(title)
            return
        title.append(session.id + " ")
        title.append_text(inert(session.info.origin, limit=50))
        title.append("  (esc: back; the boxes filter by kind)", style="dim")
        self.query_one("#title", Static).update(title)
        rows = timeline_rows(session, {g for g, on in self.shown.items() if on})
        sig = (len(rows), rows[-1].at if rows else None, rows[-1].kind if rows else None, tuple(self.shown.values()))
        if sig == self._sig:
            return
        self._sig = sig
        table = self.query_one("#events", DataTable)
        table.clear()  # a log view: rows are appended history, rebuilt only when its content changes
        palette = self.app.palette
        for r in rows:
            style = palette.style("error") if r.kind in ("error", "toolcancel", "disconnected", "rejected") or r.failed else (palette.style("muted") if r.kind in ("start", "prompt-create", "prompt-destroy") else "")
            table.add_row(Text(f"+{r.at / 1000:.3f}s", justify="right"), Text(r.kind, style=style), r.what)
        if rows:
            table.move_cursor(row=len(rows) - 1)
