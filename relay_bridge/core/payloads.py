"""Payloads held for the terminal's call detail (`--show-payloads`): the arguments and result of a call, and the
text of a Prompt API step, as the page sent them on opt-in `payload` frames.

Two-sided opt-in: the page's agent sends payload frames only under `capturePayloads: true`, and the terminal
keeps them only under `--show-payloads`. Even then they live here alone: in memory, for the one session the
screen shows (changing the shown session drops them), bounded in count and characters (oldest dropped first),
never in the store, the session log, an export or a capture. Pure: no I/O.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

from relay_bridge.core.protocol import Payload

MAX_ENTRIES = 200
MAX_CHARS = 2 * 1024 * 1024  # all held text together (each text is already capped by the page)


@dataclass(frozen=True, slots=True)
class Held:
    arguments: str | None
    result: str | None
    error: str | None

    @property
    def chars(self) -> int:
        return sum(len(t) for t in (self.arguments, self.result, self.error) if t)


# (prompt session or "" for a tool call, seq)
Key = tuple[str, int]


class PayloadView:
    def __init__(self, max_entries: int = MAX_ENTRIES, max_chars: int = MAX_CHARS) -> None:
        self.max_entries = max_entries
        self.max_chars = max_chars
        self.session: str | None = None
        self._held: OrderedDict[Key, Held] = OrderedDict()
        self.chars = 0
        self.dropped = 0  # held once, then pushed out by the bounds
        self.ignored = 0  # for a session the screen does not show

    def show(self, session: str | None) -> None:
        """The screen now shows `session`: what was held for another is dropped."""
        if session != self.session:
            self.session = session
            self.clear()

    def clear(self) -> None:
        self._held.clear()
        self.chars = 0

    def add(self, frame: Payload) -> bool:
        if frame.session != self.session:
            self.ignored += 1
            return False
        held = Held(frame.arguments, frame.result, frame.error)
        key = (frame.promptSession or "", frame.seq)
        old = self._held.pop(key, None)
        if old is not None:
            self.chars -= old.chars
        self._held[key] = held
        self.chars += held.chars
        while self._held and (len(self._held) > self.max_entries or self.chars > self.max_chars):
            _, gone = self._held.popitem(last=False)
            self.chars -= gone.chars
            self.dropped += 1
        return True

    def call(self, session: str, seq: int) -> Held | None:
        return self._held.get(("", seq)) if session == self.session else None

    def prompt(self, session: str, prompt_session: str, seq: int) -> Held | None:
        return self._held.get((prompt_session, seq)) if session == self.session else None

    def __len__(self) -> int:
        return len(self._held)
