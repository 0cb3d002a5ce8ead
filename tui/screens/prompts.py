"""A session's Prompt API (`LanguageModel`) sessions and their prompts (issue 8 item 2).

Per prompt session: when it was created and destroyed, how many prompts, their median and worst total time,
errors. Per prompt: kind (prompt / streamed), when, time to first chunk, total, chunk count, characters in and
out, error. Only timings and counts exist: the text of prompts and answers stays in the page.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.widgets import DataTable, Static

from relay_bridge.core.stats import quantile
from relay_bridge.core.store import PromptSession, Session
from relay_bridge.core.units import fmt_count, fmt_ms
from tui import keys
from tui.model.changes import Changes
from tui.model.sanitize import inert
from tui.screens.live import LiveView
from tui.widgets import tables
from tui.widgets.keys_footer import KeysFooter

MAX_ROWS = 400


def prompt_session_line(ps: PromptSession, compact: bool = False) -> Text:
    """One line per prompt session: id, lifetime, prompt count, median / max total, errors."""
    out = Text()
    out.append_text(inert(ps.id, limit=20 if compact else 36))
    if compact:
        out.append(" destroyed" if ps.destroyed_at is not None else " open", style="dim" if ps.destroyed_at is not None else "")
    else:
        out.append(f"  created +{ps.created_at / 1000:.3f}s")
        if ps.destroyed_at is not None:
            out.append(f", destroyed +{ps.destroyed_at / 1000:.3f}s", style="dim")
        else:
            out.append(", open")
    calls = list(ps.calls)
    totals = [c.totalMs for c in calls if c.totalMs is not None]
    streams = sum(1 for c in calls if c.kind == "stream")
    out.append(f"  · {len(calls)} prompt{'s' if len(calls) != 1 else ''}")
    if streams and not compact:
        out.append(f" ({streams} streamed)")
    if totals:
        out.append(f" · p50 {fmt_ms(quantile(sorted(totals), 0.5))}" + (f" · max {fmt_ms(max(totals))}" if not compact else ""))
    errors = sum(1 for c in calls if c.error)
    if errors:
        out.append(f" · {errors} error{'s' if errors != 1 else ''}", style="bold")
    return out


def prompts_signature(session: Session) -> tuple:
    return tuple((ps.id, ps.destroyed_at, len(ps.calls), ps.calls[-1].seq if ps.calls else None) for ps in session.prompts.values())


class PromptsScreen(LiveView[None]):
    KEY_SCOPE = "prompts"
    AUTO_FOCUS = "#prompts"
    BINDINGS = keys.bindings(KEY_SCOPE)
    DEFAULT_CSS = """
    PromptsScreen #title { background: $panel; text-style: bold; padding: 0 1; }
    PromptsScreen #lm-sessions { padding: 0 1; height: auto; max-height: 8; background: $boost; }
    PromptsScreen DataTable { height: 1fr; }
    .-compact PromptsScreen #lm-sessions { max-height: 4; }
    """

    def __init__(self, session_id: str) -> None:
        super().__init__()
        self.session_id = session_id
        self._sig: tuple | None = None

    def compose(self) -> ComposeResult:
        yield Static(id="title")
        yield Static(id="lm-sessions")
        yield tables.Table(cursor_type="row", id="prompts")
        yield KeysFooter(compact=True)  # two rows from 80 to 119 columns: no key is cut off

    def on_mount(self) -> None:
        self.refresh_view()

    def _on_changes(self, changes: Changes) -> None:
        if changes.touches(self.session_id):
            self.refresh_view()

    def refresh_view(self) -> None:
        session = self.app.view_store.sessions.get(self.session_id)
        compact = bool(getattr(self.app, "compact", False))
        title = Text("prompts  ")
        title.append(self.session_id + " ")
        if session is None:
            title.append("(gone)")
            self.query_one("#title", Static).update(title)
            return
        title.append_text(inert(session.info.origin, limit=30 if compact else 50))
        title.append("  (esc: back; timings and counts only, no text)" if not compact else "  (esc: back)", style="dim")
        self.query_one("#title", Static).update(title)
        sig = (prompts_signature(session), compact)
        if sig == self._sig:
            return
        self._sig = sig
        palette = self.app.palette
        head = Text()
        if not session.prompts:
            head.append(
                "no Prompt API sessions yet: the page has not called LanguageModel.create() (or has no LanguageModel)", style=palette.style("muted")
            )
        for i, ps in enumerate(session.prompts.values()):
            if i:
                head.append("\n")
            head.append_text(prompt_session_line(ps, compact))
        self.query_one("#lm-sessions", Static).update(head)
        columns: list[tables.Column] = [("session", "ps"), (Text("#", justify="right"), "seq"), ("kind", "kind")]
        if not compact:
            columns.append((Text("at", justify="right"), "at"))
        columns += [
            (Text("first", justify="right"), "first"),
            (Text("total", justify="right"), "total"),
            (Text("chunks", justify="right"), "chunks"),
            (Text("in", justify="right"), "in"),
            (Text("out", justify="right"), "out"),
            ("error", "error"),
        ]
        rows = [(ps, call) for ps in session.prompts.values() for call in ps.calls]
        rows.sort(key=lambda r: r[1].at)
        rows = rows[-MAX_ROWS:]
        cells_of_rows: list[tables.Row] = []
        for ps, call in rows:
            cells = [
                inert(ps.id, limit=10 if compact else 20),
                Text(str(call.seq), justify="right"),
                Text("stream" if call.kind == "stream" else "prompt"),
            ]
            if not compact:
                cells.append(Text(f"+{call.at / 1000:.3f}s", justify="right"))
            cells += [
                Text(fmt_ms(call.firstChunkMs) if call.firstChunkMs is not None else "–", justify="right"),
                Text(fmt_ms(call.totalMs) if call.totalMs is not None else "–", justify="right"),
                Text(str(call.chunks) if call.chunks is not None else "–", justify="right"),
                Text(fmt_count(call.charsIn) if call.charsIn is not None else "–", justify="right"),
                Text(fmt_count(call.charsOut) if call.charsOut is not None else "–", justify="right"),
                inert(call.error, style=palette.style("error"), limit=60) if call.error else Text(""),
            ]
            cells_of_rows.append((cells, None))
        table = self.query_one("#prompts", DataTable)
        tables.fill(table, columns, cells_of_rows)
        if rows:
            table.move_cursor(row=len(rows) - 1)
