"""Help: every key with its binding id (remappable in the keymap file), and where that file lives."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from .. import keys


def help_renderable(app) -> Table:
    table = Table(box=None, pad_edge=False, show_header=True, header_style="bold", expand=False)
    table.add_column("key")
    table.add_column("what")
    table.add_column("binding id", style="dim")
    current: dict[str, str] = {}
    keymap = getattr(app, "_keymap", {}) or {}
    for action in keys.ACTIONS:
        key = keymap.get(action.id, action.key)
        current[action.id] = ", ".join(keys.KEY_DISPLAY.get(k.strip(), k.strip()) for k in key.split(","))
        table.add_row(Text(current[action.id], style="bold"), Text(action.help or action.description), Text(action.id))
    table.add_row(Text("ctrl+p", style="bold"), Text("command palette: every action, and the theme switcher"), Text("(textual)"))
    table.add_row(Text("mouse", style="bold"), Text("a header click sorts by that column; a tab click switches session"), Text(""))
    table.add_row(Text("esc", style="bold"), Text("close a view or this help; clear the filter"), Text(""))
    table.add_row(Text("x", style="bold"), Text("in the inspector: call the tool (input editor; wmcp-top --allow-invoke)"), Text("wmcp.inspect.invoke"))
    table.add_row(Text("ctrl+r", style="bold"), Text("in the call dialog: validate the input, confirm if not read-only, call"), Text("wmcp.invoke.run"))
    table.add_row(Text("ctrl+g", style="bold"), Text("in the call dialog: back to the generated input"), Text("wmcp.invoke.reset"))
    return table


class HelpScreen(ModalScreen[None]):
    AUTO_FOCUS = "VerticalScroll"  # Down, PgDn, End scroll it (the app focuses nothing by itself)
    BINDINGS = [
        Binding("escape,question_mark,q", "app.pop_screen", "Close", id="wmcp.help.close"),
    ]
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll { width: 90%; max-width: 100; height: 90%; border: round $primary; background: $surface; padding: 0 1; }
    """

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(Text("wmcp-top keys", style="bold"))
            yield Static(help_renderable(self.app))
            path = keys.keymap_path()
            yield Static(Text(f"\nRemap any key by its id in {path}:\n\n  [keys]\n  \"wmcp.pause\" = \"space\"\n\nThemes: --theme NAME, or ctrl+p → Theme. Your own theme files go in {path.parent / 'themes'}."))
