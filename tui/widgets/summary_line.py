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
            self.update(Text(line), layout=relayout)
