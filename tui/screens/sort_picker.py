"""Sort by: a column picker (htop's F6 or `>`), so any column is one choice away instead of up to ten `s` presses."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.screen import ModalScreen
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from tui import keys


class SortPicker(ModalScreen[str | None]):
    """The shown columns, the current one highlighted; enter picks one (its result), esc keeps the sort."""

    KEY_SCOPE = "sort"
    BINDINGS = keys.bindings(KEY_SCOPE)
    DEFAULT_CSS = """
    SortPicker { align: center middle; }
    SortPicker > OptionList { width: 24; height: auto; max-height: 90%; border: round $primary; }
    """

    def __init__(self, columns: list[tuple[str, str]], current: str) -> None:
        super().__init__()
        self.columns = columns  # (key, label) in table order
        self.current = current

    def compose(self) -> ComposeResult:
        picker = OptionList(*(Option(label, id=key) for key, label in self.columns))
        picker.border_title = "sort by"
        yield picker

    def on_mount(self) -> None:
        picker = self.query_one(OptionList)
        keys_shown = [key for key, _ in self.columns]
        picker.highlighted = keys_shown.index(self.current) if self.current in keys_shown else 0
        picker.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_close(self) -> None:
        self.dismiss(None)
