"""Help: every key with its binding id (remappable in the keymap file), and where that file lives."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from tui import keys


def help_renderable(app) -> Table:
    table = Table(box=None, pad_edge=False, show_header=True, header_style="bold", expand=False)
    table.add_column("key")
    table.add_column("what")
    table.add_column("binding id", style="dim")
    keymap = getattr(app, "_keymap", {}) or {}
    # every key of every view, from the one key table, in its order: a heading where the scope changes
    scope = None
    for action in keys.ACTIONS:
        if action.scope != scope:
            scope = action.scope
            table.add_row(Text(""), Text(keys.SCOPE_TITLES.get(scope, scope), style="bold underline"), Text(""))
        key = keymap.get(action.id, action.key)
        shown = ", ".join(keys.KEY_DISPLAY.get(k.strip(), k.strip()) for k in key.split(","))
        table.add_row(Text(shown, style="bold"), Text(action.help or action.description), Text(action.id))
    table.add_row(Text(""), Text("textual", style="bold underline"), Text(""))
    table.add_row(Text("ctrl+p", style="bold"), Text("command palette: every action, and the theme switcher"), Text("(textual)"))
    table.add_row(Text("mouse", style="bold"), Text("a header click sorts by that column; a tab click switches session"), Text(""))
    table.add_row(Text("esc", style="bold"), Text("close a view or this help; clear the filter"), Text(""))
    return table


class HelpScreen(ModalScreen[None]):
    AUTO_FOCUS = "VerticalScroll"  # Down, PgDn, End scroll it (the app focuses nothing by itself)
    KEY_SCOPE = "help"
    BINDINGS = keys.bindings(KEY_SCOPE)
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll { width: 90%; max-width: 100; height: 90%; border: round $primary; background: $surface; padding: 0 1; }
    """

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(Text("wmcp-top keys", style="bold"))
            yield Static(help_renderable(self.app))
            path = keys.keymap_path()
            yield Static(
                Text(
                    f'\nRemap any key by its id in {path}:\n\n  [keys]\n  "wmcp.pause" = "space"\n\nThemes: --theme NAME, or ctrl+p → Theme. Your own theme files go in {path.parent / "themes"}.'
                )
            )
