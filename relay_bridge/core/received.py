"""Which seqs of one session the relay stored: a contiguous prefix plus ranges above it.

Calls settle in any seq order (a slow call settles after faster, later ones), so the spans of a session
arrive with holes that fill later. `acked` is the highest seq below which nothing is missing (or the agent's
`floor` said nothing more will come); `ranges` holds what arrived above it, as disjoint [lo, hi] pairs, so
memory follows the number of holes, not of spans. Pure: no I/O, no clock.
"""

from __future__ import annotations

from bisect import bisect_right

# Holes kept open at most. A page that leaves more seqs missing than this (thousands of calls that never
# settle, or a broken agent) has the lowest holes given up: a span arriving later for one counts as a
# duplicate.
MAX_RANGES = 1024
# Ranges an `ack` carries back (the agent needs no more to know what to re-send and what was lost).
ACK_RANGES = 64


class Received:
    __slots__ = ("abandoned", "acked", "ranges")

    def __init__(self) -> None:
        self.acked = -1
        self.ranges: list[list[int]] = []  # ascending, disjoint, not touching, every lo > acked + 1
        self.abandoned = 0  # holes given up on to stay under MAX_RANGES

    def has(self, seq: int) -> bool:
        if seq <= self.acked:
            return True
        if not self.ranges:
            return False
        i = bisect_right(self.ranges, [seq, float("inf")]) - 1
        return i >= 0 and self.ranges[i][1] >= seq

    def add(self, seq: int) -> bool:
        """Record `seq`; False when it was already there (a duplicate)."""
        r = self.ranges
        if seq == self.acked + 1:  # in order: the common case, no search
            self.acked = r.pop(0)[1] if r and r[0][0] == seq + 1 else seq
            return True
        if self.has(seq):
            return False
        i = bisect_right(r, [seq, float("inf")])  # r[i-1].lo <= seq < r[i].lo
        joins_left = i > 0 and r[i - 1][1] == seq - 1
        joins_right = i < len(r) and r[i][0] == seq + 1
        if joins_left and joins_right:
            r[i - 1][1] = r[i][1]
            del r[i]
        elif joins_left:
            r[i - 1][1] = seq
        elif joins_right:
            r[i][0] = seq
        else:
            r.insert(i, [seq, seq])
        self._settle()
        if len(r) > MAX_RANGES:
            self.acked = r.pop(0)[1]
            self.abandoned += 1
            self._settle()
        return True

    def floor(self, floor: int) -> None:
        """The agent holds nothing below `floor` it could still send: stop waiting for those seqs."""
        if floor - 1 <= self.acked:
            return
        self.acked = floor - 1
        while self.ranges and self.ranges[0][1] <= self.acked:
            self.ranges.pop(0)
        if self.ranges and self.ranges[0][0] <= self.acked:
            self.ranges[0][0] = self.acked + 1
        self._settle()

    def _settle(self) -> None:
        if self.ranges and self.ranges[0][0] == self.acked + 1:
            self.acked = self.ranges.pop(0)[1]

    def above(self) -> list[tuple[int, int]]:
        """The first ACK_RANGES ranges above `acked`, for the agent."""
        return [(lo, hi) for lo, hi in self.ranges[:ACK_RANGES]]
