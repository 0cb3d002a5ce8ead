"""Benchmark: what the descriptor depth check (`protocol.nested_deeper_than`) costs a tool frame, at the largest
descriptor the relay takes (MAX_DESCRIPTOR_BYTES, 64 KiB), in the shapes that cost it most.

A page chooses its descriptors, so the check's worst case is what a page holding the token can make the relay
spend per frame. Two baselines in the same run: msgspec decoding the same frame with no check (what the frame
costs without it), and a reference check that walks the brackets in a Python loop (the way this replaced, which
cost 2 to 4 ms a frame of brackets). Both ways must agree; on every large descriptor it takes, the check must cost
less than the loop, and over them all under two thirds of it (it costs about a third; a text dense in strings
holding brackets, about half). The loop is the baseline because it scales with the machine as the check does: a
fixed time would measure the VM. Each way takes the best of three rounds, taking turns.

  pytest tests/bench/test_descriptor_depth.py -m bench -s     (WMCP_BENCH_SECONDS sets the run's length, default 3)
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable

import msgspec
import pytest

from relay_bridge.core import protocol as p
from relay_bridge.core import synth
from tests.bench import judge

SECONDS = min(float(os.environ.get("WMCP_BENCH_SECONDS", "3")), 10.0)
LIMIT = p.MAX_DESCRIPTOR_DEPTH
ROOM = p.MAX_DESCRIPTOR_BYTES - 200  # the descriptor's own keys
SMALL = 4096  # a real schema: both ways cost a few µs


def _props(n: int) -> bytes:
    properties = {f"field_{i}": {"type": "string", "description": f"what field {i} holds"} for i in range(n)}
    return json.dumps({"name": "t", "inputSchema": {"type": "object", "properties": properties}}).encode()


def _fill(unit: bytes) -> bytes:
    """A JSON array of `unit`, as many as fit the descriptor cap."""
    return b"[" + b",".join([unit] * (ROOM // (len(unit) + 1))) + b"]"


SHAPES: dict[str, bytes] = {
    "a real schema, 30 fields": _props(30),
    "a schema of 64 KiB, 900 fields": _props(900),
    "64 KiB of [] pairs": _fill(b"[]"),
    "64 KiB of 63-deep blocks": _fill(b"[" * (LIMIT - 1) + b"]" * (LIMIT - 1)),
    "64 KiB of brackets in strings": _fill(b'"[{[{[{[{\\"\\\\]}]}"'),
    "500 levels (refused)": b"[" * 500 + b"]" * 500,
}


_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_BRACKET = bytes(b for b in range(256) if b not in b"[]{}")


def _loop_deeper_than(raw: bytes, limit: int) -> bool:
    """The way the check replaced: strings dropped by a regex, then the brackets counted in a Python loop."""
    depth = 0
    for b in _JSON_STRING.sub(b"", raw).translate(None, _NOT_BRACKET):
        depth += 1 if b in b"[{" else -1
        if depth > limit:
            return True
    return False


def _frame(descriptor: bytes) -> bytes:
    frame = synth.tool("de9e0002", "shape", 1.0, schema={"type": "object"})
    frame["descriptor"] = "DESCRIPTOR"
    return json.dumps(frame).replace('"DESCRIPTOR"', descriptor.decode()).encode()


_plain = msgspec.json.Decoder(p.AgentFrame)


def _per_call(fn: Callable[[], object], budget: float) -> float:
    fn()
    n, start = 0, time.perf_counter()
    while time.perf_counter() - start < budget:
        fn()
        n += 1
    return (time.perf_counter() - start) / n * 1e6


@pytest.mark.bench
def test_the_depth_check_costs_less_than_a_loop_over_the_brackets() -> None:
    budget = SECONDS / (len(SHAPES) * 3 * 3)
    rows = []
    for name, raw in SHAPES.items():
        frame = _frame(raw)
        assert len(raw) <= p.MAX_DESCRIPTOR_BYTES, name
        ways = {
            "decode": lambda: _plain.decode(frame),
            "check": lambda: p.nested_deeper_than(raw, LIMIT),
            "loop": lambda: _loop_deeper_than(raw, LIMIT),
        }
        best = {way: float("inf") for way in ways}
        for _ in range(3):  # taking turns: a burst from elsewhere lands on no way alone
            for way, fn in ways.items():
                best[way] = min(best[way], _per_call(fn, budget))
        deeper = p.nested_deeper_than(raw, LIMIT)
        rows.append((name, len(raw), deeper, _loop_deeper_than(raw, LIMIT), best))
    print()
    print(f"the descriptor depth check (limit {LIMIT}), µs a frame, best of 3 rounds:")
    print("  descriptor                            bytes  refused   decode, no check     check   Python loop")
    for name, size, deeper, _, best in rows:
        print(f"  {name:<34} {size:8,d}  {'yes' if deeper else 'no':>7} {best['decode']:17.1f} {best['check']:9.1f} {best['loop']:13.1f}")
    for name, _size, deeper, reference, _best in rows:
        assert deeper == reference, f"{name}: the check says {deeper}, the loop {reference}"
        assert deeper == name.endswith("(refused)"), name
    # a refused one ends the loop at its 65th bracket, a small one the count: the large ones are timed
    large = [(name, best) for name, size, deeper, _, best in rows if not deeper and size > SMALL]
    check, loop = sum(b["check"] for _, b in large), sum(b["loop"] for _, b in large)
    print(f"  the large descriptors together: check {check:,.0f} µs, loop {loop:,.0f} µs ({loop / check:.1f} times)")
    judge.time_targets(
        [
            *(judge.at_most(f"{name}: the check's µs (under the loop's)", best["check"], best["loop"], ".1f") for name, best in large),
            judge.at_most("the large ones' check x 1.5, µs (under the loop's)", check * 1.5, loop, ",.0f"),
        ]
    )
