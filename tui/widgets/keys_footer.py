"""The views' footers. `SteadyFooter`: Textual's Footer, laid out again only when the keys it shows changed.
`KeysFooter` (the dashboard's and most views'): every key on one row from 120 columns, on two rows from 80 to 119
(so d, l, i, w and m are never cut off), and as much as fits in the compact layout."""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer

TWO_ROW_COLUMNS = 6  # keys a row when the footer takes two rows


def shown_keys(screen: Screen) -> tuple[Any, ...]:
    """What a footer on `screen` shows: each shown key's binding as drawn and whether it is enabled, and the command
    palette's. Not the hidden ones: a focus that moved (a view's table focused as it is first shown, on a loaded
    machine after its footer was composed) changes those, and laid out the same keys again."""
    palette = screen.app.COMMAND_PALETTE_BINDING
    return tuple(
        (key, b.binding.key, b.binding.description, b.binding.action, b.binding.group, b.enabled, b.tooltip)
        for key, b in screen.active_bindings.items()
        if b.binding.show or key == palette
    )


class SteadyFooter(Footer):
    """Textual's Footer mounts all its keys again each time the screen says its bindings may have moved: every
    focus change, a view shown or left, a dialog. Doing that for the same keys, several times a switch, was the
    largest part of opening a view and of coming back from one (profiled under a flood of sessions: a third of the
    loop's time while `f` was pressed once a second). This one does it only when what it would show changed."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._told = False  # the screen said what its bindings are (Footer composes no key before that)
        self._composed: tuple[Any, ...] | None = None  # the keys the footer was last composed with
        self._pending = False  # a look at the keys is queued for after the next refresh

    def compose(self) -> ComposeResult:
        self._pending = False  # a look still queued finds these keys
        if self._told and self.is_attached:
            self._composed = shown_keys(self.screen)
        yield from super().compose()

    def bindings_changed(self, screen: Screen) -> None:
        """Footer's own, with one look queued at a time and the keys compared when it runs, not when it was asked
        for: a key that went and came back before the look ran (a hidden view's state settling, on a loaded
        machine) laid the same keys out again."""
        self._told = True
        self._bindings_ready = True
        if not screen.app.app_focus or self._pending:
            return
        if self.is_attached and screen is self.screen:
            self._pending = True
            self.call_after_refresh(self._recompose_if_moved)

    def _recompose_if_moved(self) -> None:
        self._pending = False
        if self.is_attached and (self._composed is None or shown_keys(self.screen) != self._composed):
            self.refresh(recompose=True)  # composed in the footer's own turn: the keys' data binding needs it


class KeysFooter(SteadyFooter):
    def compose(self) -> ComposeResult:
        yield from super().compose()
        if self.app.has_class("-two-row-footer"):
            # Footer puts every key in one grid row (an inline style, so CSS cannot change it): use two rows
            self.styles.grid_size_columns = TWO_ROW_COLUMNS
