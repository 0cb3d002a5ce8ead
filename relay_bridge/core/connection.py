"""One socket's policy, without the socket: when a frame is refused for rate, when the connection is closed, how
long it is not read. The server only executes what this decides (websockets' sans-I/O `protocol.py` is the
model): it reads a message, asks `receive`, applies the frame through the store, tells `applied`, and carries
out the returned `Step` (send the replies, close, pause). No clock of its own and no I/O: `now` and each frame's
cost in loop seconds come in as numbers, so tests/relay/test_connection.py drives it without a socket.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import msgspec

from relay_bridge.core import protocol as p
from relay_bridge.core.ratecap import REFUSED_PAUSE, WIRE_SECONDS_PER_BYTE, SocketGate
from relay_bridge.core.store import Store

# A socket over its rate cap gets at most one `rate_limited` error this often (the rest are counted only):
# answering every refused frame would cost the loop what the cap saves.
RATE_REPLY_EVERY = 0.1
# A socket lets go of the loop once its frames took this long since it last did (seconds).
YIELD_AFTER = 0.002
# A connection that keeps sending frames the relay cannot use is closed with 1008.
INVALID_STREAK_CLOSE = 16
# A connection that keeps naming sessions other sockets own (probing for one to spoil) is closed with 1008.
NOT_OWNER_CLOSE = 64

_SESSION_HINT = re.compile(rb'"session":\s*(?:\{\s*"id":\s*)?"([0-9a-f]{8})"')


@dataclass(frozen=True, slots=True)
class Close:
    code: int
    reason: str


@dataclass(slots=True)
class Step:
    """What the server does next for this socket, in order: send `replies`, then close (when `close`), else
    stop reading it for `pause` seconds (None: read on; 0: let go of the loop once)."""

    replies: list[msgspec.Struct] = field(default_factory=list)
    close: Close | None = None
    pause: float | None = None


class Connection:
    """The policy of connection `conn` of `store`, rate-capped by `gate`."""

    def __init__(self, conn: int, store: Store, gate: SocketGate) -> None:
        self.conn = conn
        self.store = store
        self.gate = gate
        self.streak = 0  # frames in a row the relay could not use
        self._last_refusal_reply = -RATE_REPLY_EVERY
        self._held = 0.0  # loop seconds this socket's frames took since it last let go of the loop

    def receive(self, now: float, message: bytes) -> Step | None:
        """None: apply the frame. A Step: the frame is refused by the rate cap before it is decoded or scanned
        (what to answer, whether to close); the server then asks `refusal_pause` how long to wait."""
        if self.gate.take(now):
            return None
        self.store.count_refusal(self.conn, p.Code.RATE_LIMITED, None, False, None)
        if not self.gate.refused(now):
            # Refused again and again without slowing down: a flood, not an agent (which backs off).
            self.store.counters["refused:rate_abuse"] += 1
            return Step(close=Close(1008, "over the rate cap without slowing down"))
        step = Step()
        if now - self._last_refusal_reply >= RATE_REPLY_EVERY:  # one error a moment is enough to slow an agent
            self._last_refusal_reply = now
            hint = session_hint(message[:4096])
            step.replies.append(p.ErrorFrame(p.Code.RATE_LIMITED, "too many frames; slow down and re-send unacked spans", False, hint))
        return step

    def refusal_pause(self, now: float, spent: float, size: int) -> float:
        """The refusal costs the sender, not the loop: its loop time is charged and the socket is not read for
        a moment, so what it sends meanwhile waits in the kernel (relay_bridge.core.ratecap)."""
        self._held = 0.0
        return max(REFUSED_PAUSE, self.gate.charge(now, spent + size * WIRE_SECONDS_PER_BYTE))

    def applied(self, now: float, replies: list[msgspec.Struct], accepted: bool, unreadable: bool, cost: float, size: int) -> Step:
        """After the store applied (or rejected) one frame: the replies to send, and a close or a pause. `cost`
        is the loop's time for the frame; its bytes are charged on top (what reading them cost)."""
        self.streak = 0 if accepted else self.streak + 1
        if unreadable and self.streak >= INVALID_STREAK_CLOSE:
            last = replies[-1]
            if isinstance(last, p.ErrorFrame):
                last.fatal = True
            return Step([last], Close(1008, "too many invalid frames"))
        if self.store.refused_by_conn.get(self.conn, 0) >= NOT_OWNER_CLOSE:
            return Step([], Close(1008, "frames for sessions this socket does not own"))
        # Pace this socket by what its frames cost the loop. Even at no wait, yield once its frames took a
        # moment: the frames other sockets sent meanwhile go next, not this socket's queue (cheap frames are
        # not worth a loop turn each).
        cost += size * WIRE_SECONDS_PER_BYTE
        wait = self.gate.charge(now, cost)
        self._held += cost
        pause: float | None = None
        if wait > 0 or self._held >= YIELD_AFTER:
            self._held = 0.0
            pause = wait
        return Step(list(replies), None, pause)


def session_hint(raw: bytes) -> str | None:
    """Which session a refused frame named (`"session":"…"`, or a hello's `"session":{"id":"…"`), so the error
    can name it; the store counts it against that session only if the socket owns it. Best effort."""
    match = _SESSION_HINT.search(raw, 0, 4096)
    return match.group(1).decode("ascii") if match else None
