"""Calls in flight: a `start` arrived and the span has not. Running time ticks; host cancellations are marked, and
a filled form waiting for the user's submit says so (that wait is not tool time)."""

from __future__ import annotations

import time
from collections.abc import Callable

from rich.text import Text
from textual.widgets import Static

from relay_bridge.core.store import InFlight, Session
from relay_bridge.core.units import fmt_ms
from tui.model.sanitize import inert
from tui.palette import Palette

MAX_SHOWN = 6


def running_ms(session: Session, call: InFlight, clock_ms: Callable[[], float]) -> float:
    """How long `call` has been running: from the page's clock when the session has a time origin (comparable
    across restarts and replays), else from when the relay saw its `start`. A call its session's end closed
    stops counting there."""
    if call.ended_at is not None:
        return max(0.0, call.ended_at - call.invokedAt)
    if session.info.timeOrigin:
        return max(0.0, clock_ms() - (session.info.timeOrigin + call.invokedAt))
    return max(0.0, (time.monotonic() - call.seen_at) * 1000)


def inflight_text(session: Session, palette: Palette, clock_ms: Callable[[], float], limit: int = MAX_SHOWN) -> Text:
    calls = sorted(session.inflight.values(), key=lambda c: c.invokedAt)
    out = Text()
    if not calls:
        out.append("in flight: none", style=palette.style("muted"))
        return out
    ended = sum(1 for c in calls if c.ended_at is not None)
    out.append(f"in flight: {len(calls) - ended}", style=palette.style("inflight"))
    if ended:
        out.append(f" · {ended} ended with the session unsettled", style=palette.style("muted"))
    for call in calls[:limit]:
        ms = running_ms(session, call, clock_ms)
        out.append("\n  ")
        out.append(f"#{call.seq} ", style=palette.style("muted"))
        out.append_text(inert(call.tool, limit=40))
        if call.waiting:
            # A filled form without toolautosubmit: the user has to press submit. Not tool time.
            out.append("  waiting for the user ")
            out.append(fmt_ms(ms), style=palette.style("muted"))
        elif call.ended_at is not None:
            out.append(f"  ended with the session after {fmt_ms(ms)}", style=palette.style("muted"))
        else:
            out.append("  running ")
            out.append(fmt_ms(ms), style=palette.style("slow") if ms >= 1000 else palette.style("inflight"))
        if call.cancelled_at is not None:
            out.append("  ⊘ cancelled by host", style=palette.style("error"))
    if len(calls) > limit:
        out.append(f"\n  … and {len(calls) - limit} more", style=palette.style("muted"))
    return out


class InFlightPane(Static):
    DEFAULT_CSS = """
    InFlightPane { height: auto; max-height: 8; padding: 0 1; }
    """

    def __init__(self, **kw) -> None:
        super().__init__("", **kw)
        self._last = ""

    def forget(self) -> None:
        self._last = ""

    def show(self, session: Session, palette: Palette, clock_ms: Callable[[], float], limit: int = MAX_SHOWN) -> None:
        text = inflight_text(session, palette, clock_ms, limit)
        sig = text.plain + str(text.spans)
        if sig != self._last:
            relayout = text.plain.count("\n") != self._last.count("\n") or not self._last  # running times tick in place
            self._last = sig
            self.update(text, layout=relayout)
