"""How many frames the relay takes, per socket and per token across all sockets.

Pure logic (the clock is passed in). One token serves every page of a relay, so the token's cap is the relay's
total: a page cannot beat it by reconnecting (each new socket starts with an empty reserve) or by opening many
sockets. Within it, no single socket may take more than its own cap, and every socket keeps a small reserve
that a flood from other sockets cannot drain, so a well-behaved agent stays served while others are refused.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(slots=True)
class Bucket:
    """A token bucket: `rate` a second, at most `burst` saved; starts full unless `tokens` says otherwise."""

    rate: float
    burst: float
    stamp: float
    tokens: float = -1.0

    def __post_init__(self) -> None:
        if self.tokens < 0:
            self.tokens = self.burst

    def refill(self, now: float) -> None:
        self.tokens = min(self.burst, self.tokens + max(0.0, now - self.stamp) * self.rate)
        self.stamp = now

    def take(self, now: float) -> bool:
        self.refill(now)
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        return False


# A socket's own reserve, outside the token's cap: enough for an agent's hello, its batches and its ledger.
RESERVE_PER_SECOND = 50.0
RESERVE_BURST = 100.0


class SocketGate:
    """One socket's admission: its own cap, then the token's shared cap or, that drained, its own reserve."""

    def __init__(self, token: Bucket, rate: float, burst: float, now: float) -> None:
        self.token = token
        self.own = Bucket(rate, burst, now)
        self.reserve = Bucket(RESERVE_PER_SECOND, RESERVE_BURST, now, tokens=0.0)  # earned by time connected

    def take(self, now: float) -> bool:
        if not self.own.take(now):
            return False
        self.reserve.refill(now)
        if self.token.take(now):
            return True
        if self.reserve.take(now):
            return True
        self.own.tokens = min(self.own.burst, self.own.tokens + 1)  # not admitted: give the socket's token back
        return False
