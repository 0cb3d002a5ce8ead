"""The top bar: program, where the relay listens (or what is replayed), session counts, badges."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Label


class TopBar(Horizontal):
    DEFAULT_CSS = """
    TopBar { height: 1; background: $panel; padding: 0 1; }
    TopBar #where { width: 1fr; text-wrap: nowrap; text-overflow: ellipsis; }  /* a cut line says so */
    TopBar .badge { width: auto; padding: 0 1; margin-left: 1; text-style: bold; }
    TopBar #paused { background: $warning; color: $background; display: none; }
    TopBar #paused.on { display: block; }
    TopBar #compact { background: $secondary; color: $background; display: none; }
    TopBar #compact.on { display: block; }
    TopBar #payloads { background: $error; color: $background; display: none; }
    TopBar #payloads.on { display: block; }
    """

    _shown: tuple | None = None

    def compose(self) -> ComposeResult:
        yield Label("wmcp-top", id="where")
        yield Label("compact layout", id="compact", classes="badge")
        # --show-payloads: call bodies of the shown session are held (in memory) for the timeline's detail
        yield Label("PAYLOADS", id="payloads", classes="badge")
        yield Label("PAUSED", id="paused", classes="badge")

    def set_text(self, text: Text) -> None:
        sig = (text.plain, text.spans)
        if sig != self._shown:
            self._shown = sig
            self.query_one("#where", Label).update(text, layout=False)  # one line, as wide as the bar

    def set_paused(self, on: bool) -> None:
        self.query_one("#paused", Label).set_class(on, "on")

    def set_payloads(self, on: bool) -> None:
        self.query_one("#payloads", Label).set_class(on, "on")

    def set_compact(self, on: bool) -> None:
        self.query_one("#compact", Label).set_class(on, "on")
