"""A real relay on 127.0.0.1 in a background thread, for tests that drive it from outside its loop
(Playwright's sync API, plain websockets clients in other threads)."""

from __future__ import annotations

import asyncio
import html
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit, urlunsplit

import msgspec

from relay_bridge.core.store import Store
from relay_bridge.exports.capture import diagnosis_facts
from relay_bridge.exports.report import build_report, span_facts
from relay_bridge.relay.server import Relay, RelayConfig
from tests.liveness import LIVENESS_S

TOKEN = "0123456789abcdef0123456789abcdef"


def session_view(session: Any) -> dict[str, Any]:
    """A plain-dict picture of one session, safe to read from another thread."""
    return {
        "id": session.id,
        "info": msgspec.to_builtins(session.info),
        "agent": session.agent,
        "state": session.state,
        "phase": session.phase,
        "coverage": session.coverage,
        "lost": session.lost,
        "acked": session.acked,
        "hellos": session.hellos,
        "spans": [dict(msgspec.to_builtins(s)) for s in session.spans()],
        "facts": {s.seq: span_facts(s) for s in session.spans()},
        "diagnosis": {seq: diagnosis_facts(f) for seq, f in session.facts.items()},
        "tools": {
            name: {
                "schemaBytes": r.schemaBytes,
                "registered": r.registered,
                "rejected": r.rejected,
                "internal": r.internal,
                "annotationsSent": r.annotationsSent,
                "annotationsKept": r.annotationsKept,
                "descriptor": msgspec.json.decode(r.descriptor) if r.descriptor else None,
                "kind": r.kind,
                "form": msgspec.to_builtins(r.form) if r.form is not None else None,
            }
            for name, r in session.tools.items()
        },
        "inflight": {c.seq: {"tool": c.tool, "cancelled": c.cancelled_at is not None, "waiting": c.waiting} for c in session.inflight.values()},
        "navigated_from": session.navigated_from,
        "navigated_to": session.navigated_to,
        "counted": session.counted_only(),
        "counters": msgspec.to_builtins(session.counters),
        "aggregates": session.stats.aggregates(),
        "totals": session.stats.totals_dict(),
        "summary": session.stats.summary(),
        "timeline": [{"at": e.at, "kind": e.kind, "detail": dict(e.detail)} for e in session.timeline],
        "status": msgspec.to_builtins(session.status) if session.status else None,
        "report": build_report(session),
    }


def agent_tag(url: str) -> str:
    """The script tag `wmcp-top snippet` prints, for an agent URL in the tests' shorthand (`t=` in its query, as
    RelayThread.http_url writes it): the token moves to the tag's data-wmcp attribute, out of the URL."""
    parts = urlsplit(url)
    query = parse_qs(parts.query)
    token = query.pop("t", [""])[0]
    src = urlunsplit(parts._replace(query=urlencode(query, doseq=True)))
    handed = f' data-wmcp="{html.escape(token, quote=True)}"' if token else ""
    return f'<script src="{html.escape(src, quote=True)}"{handed}></script>'


class RelayThread:
    def __init__(self, tmp: Path, port: int = 0, token: str = TOKEN, watched: bool = True, **config: Any) -> None:
        """`watched`: the test reads every session as it comes, a viewer like an exporter (relay_bridge.core.watching),
        so agents keep the watched cadence; False: nobody watches, agents send at the unwatched one."""
        self.tmp = tmp
        self.token = token
        self.watched = watched
        self._config = config
        self.port = port
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="relay", daemon=True)
        self.thread.start()
        self.relay: Relay | None = None
        self.start()

    def call(self, fn: Callable[[], Any]) -> Any:
        """Run `fn` on the relay's loop and return its result (the store is single-threaded)."""

        async def run() -> Any:
            return fn()

        return asyncio.run_coroutine_threadsafe(run(), self.loop).result(LIVENESS_S)

    def start(self, store: Store | None = None) -> None:
        config = RelayConfig(port=self.port, token=self.token, log_dir=self.tmp / "logs", **self._config)
        self.relay = Relay(config, store)
        if self.watched:
            self.relay.watching.show_every("test")
        asyncio.run_coroutine_threadsafe(self.relay.start(), self.loop).result(LIVENESS_S)
        self.port = self.relay.port

    def stop(self) -> None:
        if self.relay is not None:
            asyncio.run_coroutine_threadsafe(self.relay.stop(), self.loop).result(LIVENESS_S)

    def restart(self, fresh: bool = True) -> None:
        """Stop and listen again on the same port; `fresh` starts with an empty store, as a killed relay would."""
        old = self.relay.store if self.relay else None
        self.stop()
        self.start(None if fresh else old)

    def close(self) -> None:
        self.stop()
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)

    @property
    def store(self) -> Store:
        assert self.relay is not None
        return self.relay.store

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/relay?t={self.token}"

    def http_url(self, path: str) -> str:
        sep = "&" if "?" in path else "?"
        return f"http://127.0.0.1:{self.port}{path}{sep}t={self.token}"

    def snapshot(self) -> dict[str, Any]:
        def build() -> dict[str, Any]:
            store = self.store
            return {
                "sessions": {sid: session_view(s) for sid, s in store.sessions.items()},
                "counters": store.counter_view(),
            }

        return self.call(build)

    def wait_for(self, predicate: Callable[[dict[str, Any]], Any], timeout: float = LIVENESS_S, interval: float = 0.02) -> dict[str, Any]:
        """Poll snapshot() until predicate(snapshot) is truthy; fail with the last snapshot's gist."""
        deadline = time.monotonic() + timeout
        snap = self.snapshot()
        while not predicate(snap):
            if time.monotonic() > deadline:
                raise AssertionError(f"relay condition not met in {timeout}s; counters={snap['counters']}\n{gist(snap)}")
            time.sleep(interval)
            snap = self.snapshot()
        return snap


def gist(snap: dict[str, Any], last: int = 16) -> str:
    """Each session as a failure message needs it (a check's log is often all there is to go on): its state, the
    calls in flight, the spans' seqs and the newest timeline entries' kinds."""
    lines = []
    for sid, s in snap["sessions"].items():
        inflight = {seq: ("waiting" if c.get("waiting") else "running") for seq, c in s.get("inflight", {}).items()}
        spans = [sp["seq"] for sp in s.get("spans", [])][-last:]
        kinds = [e["kind"] for e in s.get("timeline", [])][-last:]
        status = s.get("status") or {}
        lines.append(
            f"  {sid} {s.get('state')} phase={s.get('phase')} acked={s.get('acked')} hellos={s.get('hellos')}: inflight={inflight} spans={spans} timeline[-{last}:]={kinds}"
            f" coverage={status.get('coverage')} reasons={[r[:60] for r in status.get('reasons', [])]}"
        )
    return "\n".join(lines) or "  no sessions"
