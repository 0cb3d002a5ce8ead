"""The dashboard's row of session tabs: Textual's Tabs, scrolled to where the dashboard says the row rests.

Textual's Tabs scroll to the active tab from where the tabs are laid out at that moment: nowhere before the first
layout (a `tab` pressed then scrolled nothing), somewhere mid-way during an animation. Here the dashboard works out
where the row rests from its state (tui/model/tab_row.py) and the row is scrolled there, and again whenever its
layout changes until it gets there.
"""

from __future__ import annotations

from collections.abc import Callable

from textual.css.query import NoMatches
from textual.widget import Widget
from textual.widgets import Tabs

SCROLL_SECONDS = 0.2  # as long as Textual's own scroll to a tab


class SessionTabs(Tabs):
    def __init__(self, moved: Callable[[], None], *, id: str | None = None) -> None:
        """`moved` is called when the active tab changes or the row is resized: the dashboard lays the row out."""
        super().__init__(id=id)
        self._moved = moved
        self._rest_x = 0

    def on_mount(self) -> None:
        scroller = self._scroller
        if scroller is not None:  # the tabs' widths reach it at a layout after they change (the first one included)
            self.watch(scroller, "virtual_size", lambda _size: self._seek(), init=False)

    @property
    def _scroller(self) -> Widget | None:
        """Textual's Tabs scroll this container of theirs (None: not composed, the app leaving at start)."""
        try:
            return self.query_one("#tabs-scroll")
        except NoMatches:
            return None

    def _scroll_active_tab(self) -> None:
        # Textual (pinned 8.2.8) calls this when the active tab changes and when the row is resized
        self._moved()

    def rest_at(self, scroll_x: int) -> None:
        """Scroll (animated) to `scroll_x`, where the row rests."""
        self._rest_x = scroll_x
        self._seek()

    def _seek(self) -> None:
        scroller = self._scroller
        if scroller is None:
            return
        moving = self.app.animator.is_being_animated(scroller, "scroll_x")
        if scroller.scroll_target_x != self._rest_x or (scroller.scroll_x != self._rest_x and not moving):
            # after the next refresh, when the scroller knows how far it can scroll (before its layout it cannot
            # at all: the target is clipped to 0 and this runs again when its size arrives)
            scroller.scroll_to(x=self._rest_x, force=True, duration=SCROLL_SECONDS)
