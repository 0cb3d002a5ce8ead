"""The base of every view that follows the store: typed access to the app, and the change signal while mounted.

`getters.app(WmcpTopApp)` would import `tui.app` when the class is made, and `tui.app` imports the screens, so
the typed `app` is declared for the type checker only, as Textual's own `MessagePump` declares it; at run time it
is Textual's property (the same object)."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TYPE_CHECKING, TypeVar

from textual import events, on
from textual.screen import ModalScreen, Screen

from tui.model.changes import Changes

if TYPE_CHECKING:
    from textual import getters

    from tui.app import WmcpTopApp

ResultT = TypeVar("ResultT")


class LiveView(Screen[ResultT]):
    """A screen that redraws what a `Changes` touches: subscribed on mount, unsubscribed on unmount."""

    if TYPE_CHECKING:
        app = getters.app(WmcpTopApp)

    # Decorated handlers run beside a subclass's own on_mount/on_unmount (Textual dispatches them per class).
    @on(events.Mount)
    def _follow_changes(self) -> None:
        self.app.changes.subscribe(self, self._on_changes)

    @on(events.Unmount)
    def _stop_following(self) -> None:
        self.app.changes.unsubscribe(self)

    def _on_changes(self, changes: Changes) -> Awaitable[None] | None:
        """Redraw what `changes` touches (every view overrides this; it may be a coroutine)."""
        return None


class AppModal(ModalScreen[ResultT]):
    """A dialog with typed access to the app (it follows no change signal)."""

    if TYPE_CHECKING:
        app = getters.app(WmcpTopApp)
