"""What feeds the app besides live pages: the demo client, a replayed file, and a fixed demo store.

- `demo_feed(seed, speed)`: the demo scenario sent over a real WebSocket to the app's own relay;
- `replay_feed(path, speed)`: a session log or capture applied step by step (in real time x speed, or all at
  once with speed 0) through the store's own `apply`, as the relay would;
- `demo_store(seconds, seed)`: the demo's first N seconds applied straight to a store under a frozen clock, so
  snapshot tests and screenshots see the same pixels on every run.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from relay_bridge.core import protocol as p
from relay_bridge.core.store import Store
from relay_bridge.lanes import demo
from relay_bridge.relay.replay import ReplayError, apply_step, close_all, read_steps

if TYPE_CHECKING:
    from tui.app import WmcpTopApp


def demo_feed(seed: int = demo.DEFAULT_SEED, speed: float = 1.0):
    async def feed(app: WmcpTopApp) -> None:
        assert app.relay is not None, "the demo needs the app's relay"
        await demo.run_demo(app.relay.snippet.ws_url, seed, speed)

    return feed


def replay_feed(path: Path, speed: float = 0.0):
    steps = read_steps(path)  # raises ReplayError before the UI starts

    async def feed(app: WmcpTopApp) -> None:
        prev: float | None = None
        for i, step in enumerate(steps):
            if speed > 0 and prev is not None and step.t > prev:
                await asyncio.sleep((step.t - prev) / 1000 / speed)
            elif i % 200 == 199:
                await asyncio.sleep(0)  # let the screen breathe during an all-at-once replay
            prev = step.t
            note = apply_step(app.store, step)
            if note is not None:
                app.notify(note, title="replay", timeout=8)
        close_all(app.store)  # nothing can arrive after the last step: calls still open end with their session
        app.notify(f"replay finished: {len(steps)} steps", timeout=4)

    return feed


class FrozenClock:
    """A relay_bridge.core.store Clock that only moves when told: fixed feeds give the same pixels every run."""

    def __init__(self, epoch_ms: float) -> None:
        self.epoch_ms = epoch_ms

    def time(self) -> float:
        return self.epoch_ms / 1000

    def monotonic(self) -> float:
        return self.epoch_ms / 1000

    def ms(self) -> float:
        return self.epoch_ms


def demo_store(seconds: float = 30.0, seed: int = demo.DEFAULT_SEED, buffer: int = 500) -> tuple[Store, FrozenClock]:
    """The demo's first `seconds`, applied as the relay would (one connection per top-level session), with
    every clock frozen at the scenario's time `seconds`. Returns the store and the clock to give the app."""
    origin = demo.FIXED_TIME_ORIGIN
    clock = FrozenClock(origin)
    store = Store(buffer=buffer, clock=clock)
    conns: dict[str, int] = {}
    for t, frame in demo.frames_until(seconds, seed, origin):
        clock.epoch_ms = origin + t * 1000
        key = demo.route(frame)
        if frame["type"] == "disconnect":
            conn = conns.pop(key, None)
            if conn is not None:
                store.disconnect(conn)
            continue
        if key not in conns:
            if frame["type"] != "hello":
                continue
            conns[key] = len(conns) + 1
            store.connect(conns[key])
        decoded = p.decode(json.dumps(frame))
        if isinstance(decoded, p.Rejection):  # pragma: no cover - the demo only builds valid frames
            raise ValueError(decoded.message)
        store.apply(conns[key], decoded)
    clock.epoch_ms = origin + seconds * 1000
    store.drain_changes()
    return store, clock


__all__ = ["FrozenClock", "ReplayError", "demo_feed", "demo_store", "replay_feed"]


def frozen_demo_app(seconds: float = 30.0, seed: int = demo.DEFAULT_SEED, **kw: Any) -> WmcpTopApp:
    """The app showing the demo's first `seconds`, every clock frozen: same pixels on every run (snapshot
    tests, `scripts/screenshots.py`)."""
    from tui.app import WmcpTopApp

    store, clock = demo_store(seconds, seed)
    kw.setdefault("source_label", f"demo feed, seed {seed}, at {seconds:g}s")
    return WmcpTopApp(store=store, clock=clock.ms, **kw)
