"""The read-only view: what a local program (`wmcp-top mcp`) reads of a relay running in another process.

Two GET endpoints under the relay's usual gates (one loopback `Host`, the token `t=` in constant time), and one
more gate of their own: a request that carries `Origin` or any `Sec-Fetch-*` header comes from a browser, so it is
refused (403) before anything is read. A page that learnt the token still cannot read the view (no CORS header,
and the refusal comes first), nor start a long wait on it. Nothing here writes: no frame, no command, no counter
a page can see.

- `GET /view/capture?t=…`: the capture (`wmcp-top-capture/1`) of the store as it is now: what `E` exports.
- `GET /view/calls?t=…&after=N&wait=S`: the calls settled after cursor N (span records as in report v2, with their
  session), at most CALLS_PER_ANSWER, waiting up to S seconds (at most MAX_WAIT) for the first one. Without
  `after`, the cursor now and no calls. While a reader waits, every session is watched (relay_bridge.core.watching):
  its agent sends at the screen's rate, so a call reaches the reader in about a quarter second, not a second.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import SplitResult, parse_qs

import msgspec
from websockets.http11 import Request, Response

from relay_bridge.core.protocol import Span
from relay_bridge.core.store import Session, Store, ToolRecord
from relay_bridge.core.watching import Watching
from relay_bridge.exports.capture import build_capture
from relay_bridge.exports.report import span_record

# Settled calls the journal remembers (references to spans the store made; the records are built when read); a
# reader further behind is told how many it missed.
JOURNAL_CALLS = 2048
CALLS_PER_ANSWER = 500
# Seconds one answer may wait for a call: under the relay's handshake deadline (10 s), which also bounds a request.
MAX_WAIT = 5.0
# Seconds the sessions stay watched after the last reader's wait ends: a reader that asks again at once (as
# `wmcp-top mcp` does until its count is reached) does not flip every agent's cadence between two waits.
WATCH_GRACE = 1.0

Respond = Callable[..., Response]


class CallJournal:
    """Every settled call as a store observer sees it, numbered by a cursor that only grows."""

    def __init__(self, cap: int = JOURNAL_CALLS) -> None:
        self.cursor = 0
        self._entries: deque[tuple[int, str, Span]] = deque(maxlen=cap)
        # Made only while a reader waits, and set by the next call: a busy page's thousands of calls a second
        # cost the relay no event each.
        self._changed: asyncio.Event | None = None

    def on_span(self, session: Session, span: Span) -> None:
        self.cursor += 1
        self._entries.append((self.cursor, session.id, span))
        if self._changed is not None:
            self._changed.set()
            self._changed = None

    def on_tool(self, session: Session, record: ToolRecord, change: str, at: float) -> None:
        """Registrations are read from the capture; the journal keeps calls only."""

    def since(self, after: int, limit: int = CALLS_PER_ANSWER) -> dict[str, Any]:
        """`{cursor, calls: [{cursor, session, span}], missed}` after `after`; `cursor` is the last one given."""
        oldest = self._entries[0][0] if self._entries else self.cursor + 1
        missed = max(0, min(oldest, self.cursor + 1) - after - 1)
        calls = [{"cursor": c, "session": sid, "span": span_record(span)} for c, sid, span in self._entries if c > after][:limit]
        return {"cursor": calls[-1]["cursor"] if calls else max(after, self.cursor), "calls": calls, "missed": missed}

    async def wait(self, after: int, seconds: float) -> dict[str, Any]:
        """`since(after)`, once a call past `after` settled or `seconds` passed."""
        if self.cursor <= after and seconds > 0:
            if self._changed is None:
                self._changed = asyncio.Event()
            try:
                await asyncio.wait_for(self._changed.wait(), seconds)
            except TimeoutError:
                pass
        return self.since(after)


class View:
    """The relay's read-only view of `store`. `respond` answers a request whose Host and token already passed."""

    def __init__(self, store: Store, watching: Watching) -> None:
        self.store = store
        self.watching = watching
        self.journal = CallJournal()
        store.observers.append(self.journal)
        self._waiting = 0
        self._unwatch: asyncio.TimerHandle | None = None

    async def wait_calls(self, after: int, seconds: float) -> dict[str, Any]:
        """The journal's answer after `after`, waiting up to `seconds` (at most MAX_WAIT) with every session watched."""
        self._waiting += 1
        if self._unwatch is not None:
            self._unwatch.cancel()
            self._unwatch = None
        if self._waiting == 1 and seconds > 0:
            self.watching.show_every("view")
        try:
            return await self.journal.wait(after, min(max(seconds, 0.0), MAX_WAIT))
        finally:
            self._waiting -= 1
            if self._waiting == 0:
                self._unwatch = asyncio.get_running_loop().call_later(WATCH_GRACE, self._hide)

    def _hide(self) -> None:
        self._unwatch = None
        if self._waiting == 0:
            self.watching.hide("view")

    def respond(self, url: SplitResult, request: Request, answer: Respond) -> Response | Awaitable[Response]:
        if any(name.lower() == "origin" or name.lower().startswith("sec-fetch-") for name in request.headers):
            self.store.counters["refused:view_browser"] += 1
            return answer(403, b"forbidden: the view is for local programs, not pages\n")
        query = parse_qs(url.query)
        if url.path == "/view/capture":
            return answer(200, msgspec.json.encode(build_capture(self.store)), "application/json")
        if url.path == "/view/calls":
            after = _number(query, "after")
            wait = _number(query, "wait")
            if after is None:
                return answer(200, msgspec.json.encode({"cursor": self.journal.cursor, "calls": [], "missed": 0}), "application/json")
            return self._calls(max(0, int(after)), wait or 0.0, answer)
        return answer(404, b"not found\n")

    async def _calls(self, after: int, wait: float, answer: Respond) -> Response:
        return answer(200, msgspec.json.encode(await self.wait_calls(after, wait)), "application/json")


def _number(query: dict[str, list[str]], key: str) -> float | None:
    try:
        value = float(query[key][0])
    except (KeyError, ValueError):
        return None
    return value if value == value and abs(value) < 1e15 else None
