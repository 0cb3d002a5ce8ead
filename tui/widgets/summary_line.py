"""The session's one-line cost split: schemas · tools · payloads · host gaps."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from relay_bridge.store import Session


class SummaryLine(Static):
    DEFAULT_CSS = """
    SummaryLine { height: auto; padding: 0 1; text-style: bold; }
    """

    def __init__(self, **kw) -> None:
        super().__init__("", **kw)
        self._last = ""

    def forget(self) -> None:
        self._last = ""

    def show(self, session: Session) -> None:
        line = session.stats.summary()  # built from numbers only: no page text
        if line != self._last:
            relayout = len(line) != len(self._last)  # same length, same wrapping: no layout pass needed
            self._last = line
            self._render_line(relayout)

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
