"""Sparklines of host gaps and wall times over the session's last 60 calls."""

from __future__ import annotations

from itertools import islice

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Label

from relay_bridge.core.store import Session
from relay_bridge.core.units import fmt_duration, fmt_ms
from tui.widgets.spark_bars import SparkBars

WINDOW = 60


class Sparklines(Horizontal):
    DEFAULT_CSS = """
    Sparklines { height: 2; padding: 0 1; }
    Sparklines Label { width: auto; padding-right: 1; color: $wmcp-muted; }
    Sparklines SparkBars { width: 1fr; height: 2; margin-right: 2; }
    """

    def compose(self) -> ComposeResult:
        yield Label("host gaps", id="gap-label")
        yield SparkBars(id="gaps")
        yield Label("wall", id="wall-label")
        yield SparkBars(id="walls")

    def _label(self, selector: str, text: str) -> None:
        label = self.query_one(selector, Label)
        shown = str(label.content)
        if text != shown:
            label.update(Text(text), layout=len(text) != len(shown))  # as wide as before: no layout pass

    def show(self, session: Session) -> None:
        ring = session.stats.ring
        spans = list(islice(reversed(ring.values()), WINDOW))[::-1]  # the newest WINDOW, without copying the ring
        gaps = [s.gapSincePrevCallMs or 0.0 for s in spans]
        walls = [s.wallMs for s in spans]
        gap_max = max(gaps, default=0.0)
        wall_max = max(walls, default=0.0)
        self._label("#gap-label", f"host gaps ≤{fmt_duration(gap_max)}")
        self._label("#wall-label", f"wall ≤{fmt_ms(wall_max)}")
        self.query_one("#gaps", SparkBars).set_data(gaps)
        self.query_one("#walls", SparkBars).set_data(walls)
