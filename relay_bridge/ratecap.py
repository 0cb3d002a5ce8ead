"""How much the relay takes, per socket and per token across all sockets: frames a second and bytes a second.

Pure logic (the clock is passed in). One token serves every page of a relay, so the token's cap is the relay's
total: a page cannot beat it by reconnecting (each new socket starts with an empty reserve) or by opening many
sockets. Within it, no single socket may take more than its own cap, and every socket earns a small reserve
that a flood from other sockets cannot drain, so a well-behaved agent stays served while others are refused.
Bytes are capped as well as frames: decoding is what costs the loop time, and a refused frame costs almost
nothing, so a flood of 1 MiB frames cannot hold the loop for the well-behaved agent's ack.
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


@dataclass(slots=True)
class Allowance:
    """Frames and bytes together: a frame passes only if both buckets have room for it."""

    frames: Bucket
    bytes: Bucket

    @classmethod
    def of(cls, frames: float, frame_burst: float, byte_rate: float, byte_burst: float, now: float, full: bool = True) -> Allowance:
        start = -1.0 if full else 0.0
        return cls(Bucket(frames, frame_burst, now, start), Bucket(byte_rate, byte_burst, now, start))

    def has(self, now: float, size: int) -> bool:
        self.frames.refill(now)
        self.bytes.refill(now)
        # A frame bigger than the whole burst passes when the bucket is full (and drives it negative).
        return self.frames.tokens >= 1 and (self.bytes.tokens >= size or self.bytes.tokens >= self.bytes.burst)

    def spend(self, size: int) -> None:
        self.frames.tokens -= 1
        self.bytes.tokens -= size


# A socket's own reserve, outside the token's cap: enough for an agent's hello, its batches and its ledger.
RESERVE_PER_SECOND = 50.0
RESERVE_BURST = 100.0
RESERVE_BYTES_PER_SECOND = 512 * 1024
RESERVE_BYTES_BURST = 1024 * 1024


class SocketGate:
    """One socket's admission: its own cap, then the token's shared cap or, that spent, its own reserve."""

    def __init__(self, token: Allowance, own: Allowance, now: float) -> None:
        self.token = token
        self.own = own
        self.reserve = Allowance.of(RESERVE_PER_SECOND, RESERVE_BURST, RESERVE_BYTES_PER_SECOND, RESERVE_BYTES_BURST, now, full=False)

    def take(self, now: float, size: int) -> bool:
        if not self.own.has(now, size):
            return False
        for pool in (self.token, self.reserve):
            if pool.has(now, size):
                pool.spend(size)
                self.own.spend(size)
                return True
        return False
