"""What changed in the store, as one notice every view subscribes to.

The relay's Coalescer drains the store's dirty set at most four times a second; the app turns each drain into
one `Changes` and publishes it on its `changes` signal (a Textual `Signal`). The dashboard and every pushed
view subscribe when mounted and unsubscribe when unmounted, so a view pulls only what changed and nothing
calls a view it does not know about.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Changes:
    dirty: frozenset[str] = frozenset()  # sessions whose state changed
    relay: bool = False  # relay-wide state: counters, connections, OTLP
    redraw: bool = False  # theme, layout or paused state changed: redraw what is shown even if no data did

    def __or__(self, other: Changes) -> Changes:
        return Changes(self.dirty | other.dirty, self.relay or other.relay, self.redraw or other.redraw)

    def touches(self, session_id: str | None) -> bool:
        """Whether a view of `session_id` (or of the relay as a whole, for None) has anything to redraw."""
        if self.redraw:
            return True
        if session_id is None:
            return self.relay or bool(self.dirty)
        return session_id in self.dirty
