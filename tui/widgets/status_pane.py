"""Phase, its sentence and hints, coverage, and relay counters (when not zero) for one session."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from relay_bridge.core.store import Session
from tui.model.sanitize import inert
from tui.palette import Palette
from tui.widgets.relayout import update_rows

COVERAGE_WORDS = {"none-observed": "none observed", "running": "running", "incomplete": "incomplete"}


def phase_text(session: Session, palette: Palette, with_hints: bool = True, invoke_on: bool = False) -> Text:
    out = Text()
    phase = session.phase
    kind = "error" if phase in ("disconnected", "detached") else ("ok" if phase in ("measuring", "live") else "slow")
    out.append("phase ", style=palette.style("muted"))
    out.append(phase, style=palette.style(kind))
    if session.status is not None and session.status.message and session.state == "live":
        out.append(" — ")
        out.append_text(inert(session.status.message, limit=200))
    elif session.state == "disconnected":
        out.append(" — the page is gone (tab closed or reloaded, or the network refused); it resumes if it reconnects")
    elif session.state == "ended":
        reason = session.bye_reason or "pagehide"
        out.append(" — the page said goodbye (")
        out.append_text(inert(reason, limit=60))
        out.append(")")
    coverage = session.coverage
    out.append("   coverage ", style=palette.style("muted"))
    out.append(
        COVERAGE_WORDS.get(coverage, coverage),
        style=palette.style("error" if coverage == "incomplete" else "ok" if coverage == "running" else "muted"),
    )
    counters = []
    if session.lost:
        counters.append(f"lost spans {session.lost}")
    if session.counters.rejected:
        counters.append(f"rejected frames {session.counters.rejected}")
    if session.counters.duplicates:
        counters.append(f"duplicates {session.counters.duplicates}")
    if counters:
        out.append("   ")
        out.append(" · ".join(counters), style=palette.style("error"))
    if with_hints and session.status is not None and session.state == "live":
        ours = (INVOKE_ON_HINTS if invoke_on else TERMINAL_HINTS).get(session.status.phase)
        if ours is not None:  # what to press here comes before what to type in the page's console
            out.append("\n  › ", style=palette.style("muted"))
            out.append(ours)
        for hint in session.status.hints[: 3 - (ours is not None)]:
            out.append("\n  › ", style=palette.style("muted"))
            out.append_text(inert(hint, limit=160))
    return out


# The page's hints are written for its console; the terminal's own action comes first where there is one.
TERMINAL_HINTS = {
    "tools-registered": "x calls the selected tool from here (start wmcp-top with --allow-invoke); i inspects it",
    "measuring": "e writes this session's report, t a Chrome trace, w the schema weight",
}
# started with --allow-invoke: the hint does not ask for what is already on
INVOKE_ON_HINTS = TERMINAL_HINTS | {"tools-registered": "x calls the selected tool from here; i inspects it"}


def invoke_allowed(app: object) -> bool:
    relay = getattr(app, "relay", None)
    return bool(relay is not None and relay.config.allow_invoke)


class StatusPane(Static):
    DEFAULT_CSS = """
    StatusPane { height: auto; max-height: 5; padding: 0 1; }
    """

    def __init__(self, **kw) -> None:
        super().__init__("", **kw)
        self._last: Text | None = None
        self._rows = 0  # rows the text took when last drawn (0: not drawn)

    def forget(self) -> None:
        self._last = None

    def show(self, session: Session, palette: Palette, with_hints: bool = True) -> None:
        text = phase_text(session, palette, with_hints, invoke_allowed(self.app))
        if self._last is None or text.plain != self._last.plain or text.spans != self._last.spans:
            self._last = text
            self._rows = update_rows(self, text, self._rows)
