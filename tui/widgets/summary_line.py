"""The session's one-line cost split: schemas · tools · payloads · host gaps, then the top finding."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.widgets import Static

from relay_bridge.core.store import Session
from relay_bridge.findings import diagnose, from_session
from relay_bridge.findings.inputs import signature
from relay_bridge.findings.text import short_saving
from tui.model.sanitize import inert_str


class SummaryLine(Static):
    DEFAULT_CSS = """
    SummaryLine { height: auto; padding: 0 1; text-style: bold; }
    """

    def __init__(self, **kw) -> None:
        super().__init__("", **kw)
        self._last = ""
        self._sig: tuple[Any, ...] | None = None
        self._top = ""

    def forget(self) -> None:
        self._last = ""
        self._sig = None

    def show(self, session: Session) -> None:
        line = session.stats.summary() + self._top_finding(session)  # numbers, and a tool name made inert
        if line != self._last:
            relayout = len(line) != len(self._last)  # same length, same wrapping: no layout pass needed
            self._last = line
            self._render_line(relayout)

    def _top_finding(self, session: Session) -> str:
        """` · fix first (f): ~21K tok render_preview`: this session's best-ranked finding (its own rules; the
        cross-session duplicates are in the findings view), diagnosed again only when its inputs moved."""
        sig = signature(session)
        if sig != self._sig:
            self._sig = sig
            found = diagnose([from_session(session)], duplicates=False)
            top = found[0] if found else None
            if top is None:
                self._top = ""
            else:
                what = inert_str(" + ".join(top.tools), 32) if top.tools else top.rule
                self._top = f" · fix first (f): {short_saving(top.saving)} {what}"
        return self._top

    def on_resize(self) -> None:
        if self._last:
            self._render_line()

    def _render_line(self, relayout: bool = True) -> None:
        self.update(Text(break_between_parts(self._last, self.content_size.width)), layout=relayout)


def break_between_parts(line: str, width: int) -> str:
    """Break a line too wide for `width` only between its parts (at ` · `), never between a label and its value
    (`host gaps` / `28s`)."""
    if width <= 0 or len(line) <= width:
        return line
    rows: list[str] = []
    for part in line.split(" · "):
        if rows and len(rows[-1]) + 3 + len(part) <= width:
            rows[-1] += " · " + part
        else:
            rows.append(part)
    return "\n".join(rows)
