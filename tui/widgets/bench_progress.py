"""A rich progress bar for `wmcp-top bench` on a terminal (relay_bridge draws plain text; it never imports rich)."""

from __future__ import annotations

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn


class RichBenchProgress:
    """Called as progress(tool, done, total) by relay_bridge.lanes.bench; `label` names the pass ("unarmed ")."""

    def __init__(self, console: Console | None = None) -> None:
        self.console = console or Console(stderr=True)
        self.label = ""
        self._progress: Progress | None = None
        self._task: TaskID | None = None
        self._label_shown: str | None = None

    def __call__(self, tool: str, done: int, total: int) -> None:
        if self._progress is None or self._label_shown != self.label:
            self.close()
            self._progress = Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[tool]}", markup=False),
                TimeElapsedColumn(),
                console=self.console,
                transient=False,
            )
            self._progress.start()
            self._task = self._progress.add_task(f"{self.label}bench", total=total, tool="")
            self._label_shown = self.label
        assert self._task is not None
        self._progress.update(self._task, completed=done, total=total, tool=tool[:40])
        if done >= total and not tool:
            self.close()

    def close(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None
