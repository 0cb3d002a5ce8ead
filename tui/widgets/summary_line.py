"""The session's one-line cost split: schemas · tools · payloads · host gaps, then the top finding.

The top finding comes from the app's diagnosis (tui.model.diagnosis, the findings view's): its result when it
has this session, else the session's rules run at the cost of lookups once its definitions are reviewed, a
flood's in the worker process. Diagnosing a flood's session here, on the loop, took 90 to 110 ms of it each time
one was shown."""

from __future__ import annotations

import time
from typing import Any

from rich.text import Text
from textual.widgets import Static

from relay_bridge.core.store import Session
from relay_bridge.findings.inputs import signature
from relay_bridge.findings.text import short_saving
from tui.model.diagnosis import diagnosis_of
from tui.model.sanitize import inert_str
from tui.widgets.relayout import update_rows

# The top finding follows the numbers at most this often (seconds). Diagnosing a full session is most of what the
# dashboard does per change (a profile under a flood, 2026-12-02: 8 of every 11 of its samples); the numbers on the
# line itself still move with every change.
DIAGNOSE_EVERY = 1.0


class SummaryLine(Static):
    DEFAULT_CSS = """
    SummaryLine { height: auto; padding: 0 1; text-style: bold; }
    """

    def __init__(self, **kw) -> None:
        super().__init__("", **kw)
        self._last = ""
        self._rows = 0  # rows the line took when last drawn (0: not drawn)
        self._sig: tuple[Any, ...] | None = None
        self._top = ""
        self._top_of: str | None = None  # the session the top finding is of
        self._diagnosed_at = float("-inf")
        self._session: Session | None = None
        self._later: Any = None  # the timer that diagnoses what changed within DIAGNOSE_EVERY

    def forget(self) -> None:
        self._last = ""
        self._sig = None
        self._top_of = None

    def show(self, session: Session) -> None:
        self._session = session
        line = session.stats.summary() + self._top_finding(session)  # numbers, and a tool name made inert
        if line != self._last:
            self._last = line
            self._render_line()

    def _top_finding(self, session: Session) -> str:
        """` · fix first (f): ~21K tok render_preview`: this session's best-ranked finding (its own rules; the
        cross-session duplicates are in the findings view), diagnosed again only when its inputs moved."""
        sig = signature(session)
        if sig != self._sig:
            wait = self._diagnosed_at + DIAGNOSE_EVERY - time.monotonic()
            if session.id == self._top_of and wait > 0:
                # Changed again within the interval: diagnosed when it ends (the line shows the last top till then).
                if self._later is None:
                    self._later = self.set_timer(wait, self._diagnose_later)
                return self._top
            self._diagnosed_at = time.monotonic()
            found = diagnosis_of(self.app).own_findings(session, self._reviewed, spawn=lambda work: self.app.run_worker(work, group="findings"))
            if found is None:  # its definitions are being reviewed off the loop: `_reviewed` shows the line again
                if session.id != self._top_of:
                    self._top, self._top_of = "", session.id  # never another session's finding meanwhile
                return self._top
            self._sig, self._top_of = sig, session.id
            top = found[0] if found else None
            if top is None:
                self._top = ""
            else:
                what = inert_str(" + ".join(top.tools), 32) if top.tools else top.rule
                # a security finding has no saving: its severity and rule say why it is first
                why = f"{top.severity} {top.rule.removeprefix('lint.')}" if top.severity else short_saving(top.saving)
                self._top = f" · fix first (f): {why} {what}"
        return self._top

    def _reviewed(self) -> None:
        """The definitions the line waited for are reviewed: its finding now, not held to the interval."""
        if self._later is not None:
            self._later.stop()
        self._diagnosed_at = float("-inf")
        if self.is_attached:
            self._diagnose_later()

    def _diagnose_later(self) -> None:
        self._later = None
        if self._session is not None:
            self.show(self._session)

    def on_resize(self) -> None:
        if self._last:
            self._render_line()

    def _render_line(self) -> None:
        self._rows = update_rows(self, Text(break_between_parts(self._last, self.content_size.width)), self._rows)


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
