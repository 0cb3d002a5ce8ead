"""Who watches which session: the viewers' side of the uplink's cadence (issue 33, decision 2).

Every frame a page sends costs its browser about a millisecond of CPU, whatever it carries. A session nobody
looks at needs its spans kept, not shown at once: its agent may send once a second. So each viewer says what
it shows, by name: the dashboard its current tab and the view open on it (`show("dashboard", {sid})`), an
OpenTelemetry exporter or `open --check-lanes` every session (`show_every`). A session is watched while any
viewer shows it, at the shortest interval any of them asks for. The relay (server.py) tells each agent with a
`watch` frame after its hello's ack and whenever this changes (`on_change`).

Sans-I/O: no sockets, no clock; the server does the sending.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from relay_bridge.core import (
    protocol as p,  # The screen's need: the dashboard repaints at most 4 times a second (frame -> screen p95 <= 300 ms); the agent's
)

# own batch window (50 ms after a quiet spell, 250 ms while busy) is at most this.
WATCHED_MS = 250
# A session nobody shows: at most one frame a second (sooner only when the agent's buffer reaches its mark).
UNWATCHED_MS = 1000


class Watching:
    """The viewers and what each shows. `on_change()` runs after every change that may alter a session's state."""

    def __init__(self, unwatched_ms: int = UNWATCHED_MS) -> None:
        self.unwatched_ms = unwatched_ms
        # viewer -> (the sessions it shows, None for every session; the interval it needs, ms)
        self._views: dict[str, tuple[frozenset[str] | None, int]] = {}
        self.on_change: Callable[[], None] | None = None

    def show(self, viewer: str, sessions: Iterable[str], interval_ms: int = WATCHED_MS) -> bool:
        """`viewer` now shows exactly `sessions` (an empty set: none). False when it showed them already."""
        return self._set(viewer, (frozenset(sessions), interval_ms))

    def show_every(self, viewer: str, interval_ms: int = WATCHED_MS) -> None:
        """`viewer` reads every session (an exporter, a lane check)."""
        self._set(viewer, (None, interval_ms))

    def hide(self, viewer: str) -> None:
        """`viewer` shows nothing any more (it closed)."""
        if self._views.pop(viewer, None) is not None and self.on_change is not None:
            self.on_change()

    def _set(self, viewer: str, view: tuple[frozenset[str] | None, int]) -> bool:
        if self._views.get(viewer) == view:
            return False  # the same tab redrawn: nothing to tell anyone
        self._views[viewer] = view
        if self.on_change is not None:
            self.on_change()
        return True

    def interval(self, session: str) -> int | None:
        """The shortest interval a viewer showing `session` asks for; None when nobody shows it."""
        wanted = [ms for shown, ms in self._views.values() if shown is None or session in shown]
        return min(wanted) if wanted else None

    def watched(self, session: str) -> bool:
        return self.interval(session) is not None

    def frame(self, session: str) -> p.Watch:
        """The `watch` frame that tells `session`'s agent its state."""
        ms = self.interval(session)
        return p.Watch(session, ms is not None, self.unwatched_ms if ms is None else ms)
