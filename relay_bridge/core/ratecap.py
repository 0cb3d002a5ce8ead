"""How much the relay takes, per socket and per token across all sockets: frames, and the loop's time.

Pure logic (the clock is passed in). One token serves every page of a relay, so the token's caps are the
relay's totals: a page cannot beat them by reconnecting (each new socket starts with an empty reserve) or by
opening many sockets.

Frames: no socket takes more than its own rate; all together take no more than the token's; every socket
earns a small reserve outside the token's rate, so a well-behaved agent is served while a flood from other
sockets is refused. A refused frame costs the loop nothing but its count.

Time: what a frame costs the loop (decoding, storing, logging) is charged after it ran. A socket first spends
its own small reserve of loop time (a well-behaved agent never needs more); beyond it, the token's share of
the loop; a socket that finds the share spent waits before its next frame is read, so the loop always has
time left for the sockets that are within their reserve: their acks come back at once however hard other
sockets push.

Fair shares (docs/limits.md): every page holds the one token, so the token's frame rate is kept per origin (the
socket's Origin header; sockets without one, local tools, share one), and an origin's frames beyond the reserves
also spend that origin's share of the loop (ORIGIN_CPU_SHARE) before the token's: one origin's flood waits on its
own share while another origin's frames go on. A refused frame is charged too: the socket stops being read
for REFUSED_PAUSE (its backlog waits in the kernel, not in the loop), and a socket that keeps being refused
(STRIKES) is closed.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(slots=True)
class Bucket:
    """A token bucket: `rate` a second, at most `burst` saved; starts full unless `tokens` says otherwise.
    Tokens may go below zero (a cost charged after the fact): that is debt, paid back at `rate`."""

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

    def take(self, now: float, n: float = 1.0) -> bool:
        self.refill(now)
        if self.tokens >= n:
            self.tokens -= n
            return True
        return False


# A socket's own reserve of frames, outside the token's rate: an agent's hello, batches and ledger.
RESERVE_PER_SECOND = 50.0
RESERVE_BURST = 100.0
# A socket's own reserve of loop time (seconds a second): far more than an agent's batches cost.
CPU_RESERVE = 0.05
# The share of the loop all sockets beyond their reserves may take together (the rest stays free for acks).
CPU_SHARE = 0.85
CPU_BURST = 0.05
# One origin's share of the loop, beyond its sockets' reserves: one origin's flood leaves the loop free most of
# the time for every other origin and the dashboard (which runs on the same loop).
ORIGIN_CPU_SHARE = 0.35
# What reading a frame costs the loop before the relay's own code sees it (websockets assembling and unmasking
# it, the copies): charged with the frame, so large frames are paced by what they cost, not only by their count.
WIRE_SECONDS_PER_BYTE = 2e-9
# A socket refused by a rate cap is not read for this long (seconds): what it sends meanwhile waits in the kernel.
REFUSED_PAUSE = 0.1
# Refusals a socket may collect (one back a second at STRIKES_PER_SECOND): an agent that backs off on the first
# `rate_limited` (500 ms) is refused at most twice a second and never runs out; a flood is closed in seconds.
STRIKES = 20.0
STRIKES_PER_SECOND = 2.0


def token_buckets(rate: float, burst: float, now: float) -> tuple[Bucket, Bucket]:
    """The token's frame bucket and its share of the loop, shared by every socket."""
    return Bucket(rate, burst, now), Bucket(CPU_SHARE, CPU_BURST, now)


class OriginShare:
    """What the sockets of one origin share: the token's frame rate (one per origin), and a share of the loop."""

    def __init__(self, rate: float, burst: float, now: float) -> None:
        self.frames = Bucket(rate, burst, now)
        self.cpu = Bucket(ORIGIN_CPU_SHARE, CPU_BURST, now)
        self.sockets = 0


class SocketGate:
    """One socket's admission (frames) and pacing (loop time)."""

    def __init__(self, token: tuple[Bucket, Bucket], rate: float, burst: float, now: float, origin: OriginShare | None = None) -> None:
        self.token_frames, self.token_cpu = token
        self.origin_cpu: Bucket | None = None
        if origin is not None:
            self.token_frames, self.origin_cpu = origin.frames, origin.cpu
        self.own = Bucket(rate, burst, now)
        self.strikes = Bucket(STRIKES_PER_SECOND, STRIKES, now)
        self.reserve = Bucket(RESERVE_PER_SECOND, RESERVE_BURST, now, tokens=0.0)  # earned by time connected
        self.cpu_reserve = Bucket(CPU_RESERVE, CPU_RESERVE, now)

    def share(self, origin: OriginShare) -> None:
        """From now on, spend `origin`'s frame rate and loop share (the extension's socket, once its page is known)."""
        self.token_frames, self.origin_cpu = origin.frames, origin.cpu

    def take(self, now: float) -> bool:
        """May this socket's next frame be read? (Refused: not decoded, counted, answered now and then.)"""
        if not self.own.take(now):
            return False
        self.reserve.refill(now)
        if self.token_frames.take(now) or self.reserve.take(now):
            return True
        self.own.tokens = min(self.own.burst, self.own.tokens + 1)  # not admitted: give the socket's token back
        return False

    def refused(self, now: float) -> bool:
        """A frame was refused by a rate cap: False once the socket has run out of strikes (close it)."""
        return self.strikes.take(now)

    def charge(self, now: float, cost: float) -> float:
        """Charge a frame's loop time; return how long this socket waits before its next frame is read."""
        self.cpu_reserve.refill(now)
        if self.cpu_reserve.tokens >= cost:
            self.cpu_reserve.tokens -= cost
            return 0.0
        cost -= max(0.0, self.cpu_reserve.tokens)
        self.cpu_reserve.tokens = min(0.0, self.cpu_reserve.tokens)
        wait = 0.0
        for share in (self.origin_cpu, self.token_cpu):
            if share is not None:
                share.refill(now)
                share.tokens -= cost
                if share.tokens < 0:
                    wait = max(wait, -share.tokens / share.rate)
        return wait
