"""`wmcp-top bench` on a terminal draws a rich progress bar, a new one per pass (armed, then unarmed)."""

from __future__ import annotations

import io

from rich.console import Console

from tui.widgets.bench_progress import RichBenchProgress


def test_rich_bar_counts_calls_per_pass() -> None:
    console = Console(file=io.StringIO(), record=True, force_terminal=True, width=100)
    progress = RichBenchProgress(console)
    for done, tool in [(0, "search"), (2, "search"), (3, "get_item"), (4, "")]:
        progress(tool, done, 4)
    progress.label = "unarmed "
    progress("search", 1, 4)
    progress("", 4, 4)
    text = console.export_text()
    assert "bench" in text and "4/4" in text
    assert "unarmed bench" in text
    assert progress._progress is None  # each pass's bar is closed when it completes
