"""The relay's read-only view (relay_bridge.relay.view) on a real relay: the gates, the capture, and the call journal's
wait that a settled call releases."""

from __future__ import annotations

import http.client
import json
import threading
from pathlib import Path
from typing import Any

from relay_bridge.core import synth
from tests.frames import frame
from tests.liveness import LIVENESS_S
from tests.relay_thread import TOKEN, RelayThread

SID = "0a1b2c3d"


def get(relay: RelayThread, path: str, headers: dict[str, str] | None = None, timeout: float = LIVENESS_S) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", relay.port, timeout=timeout)
    try:
        conn.request("GET", path, headers=headers or {})
        answer = conn.getresponse()
        return answer.status, answer.read()
    finally:
        conn.close()


def feed(relay: RelayThread, *frames: dict[str, Any]) -> None:
    def apply() -> None:
        store = relay.store
        if 1 not in store.connections:
            store.connect(1)
        for obj in frames:
            store.apply(1, frame(obj))

    relay.call(apply)


def test_the_view_serves_the_capture_to_the_token_only(relay_server: RelayThread) -> None:
    feed(relay_server, synth.hello(SID, title="a page"), synth.spans_frame(SID, [synth.span(SID, 0, "search", 10.0, 4.0)]))
    status, body = get(relay_server, f"/view/capture?t={TOKEN}")
    assert status == 200
    doc = json.loads(body)
    assert doc["format"] == "wmcp-top-capture/1" and [s["info"]["id"] for s in doc["sessions"]] == [SID]
    assert doc["sessions"][0]["report"]["spans"][0]["tool"] == "search"
    for path in ("/view/capture", "/view/capture?t=" + "0" * 32, "/view/calls?after=0&t=" + TOKEN[:-1]):
        status, body = get(relay_server, path)
        assert (status, body) == (403, b"forbidden: missing or wrong token (run `wmcp-top snippet`)\n"), path


def test_the_view_refuses_other_hosts_and_anything_a_browser_sends(relay_server: RelayThread) -> None:
    path = f"/view/capture?t={TOKEN}"
    assert get(relay_server, path, {"Host": f"attacker.example:{relay_server.port}"})[0] == 403
    for headers in ({"Origin": "http://127.0.0.1:8000"}, {"Origin": "null"}, {"Sec-Fetch-Site": "same-site"}, {"Sec-Fetch-Mode": "no-cors"}):
        status, body = get(relay_server, path, headers)
        assert (status, body) == (403, b"forbidden: the view is for local programs, not pages\n"), headers
    assert relay_server.call(lambda: relay_server.store.counters["refused:view_browser"]) == 4
    assert get(relay_server, f"/view/other?t={TOKEN}")[0] == 404


def test_a_settled_call_releases_a_waiting_reader(relay_server: RelayThread) -> None:
    feed(relay_server, synth.hello(SID))
    status, body = get(relay_server, f"/view/calls?t={TOKEN}")
    assert status == 200 and json.loads(body) == {"cursor": 0, "calls": [], "missed": 0}
    answers: list[dict[str, Any]] = []
    waiting = threading.Thread(target=lambda: answers.append(json.loads(get(relay_server, f"/view/calls?after=0&wait=5&t={TOKEN}")[1])))
    waiting.start()
    relay_server.wait_for(lambda snap: relay_server.call(lambda: len(relay_server.relay.handshakes)) == 1)
    feed(relay_server, synth.spans_frame(SID, [synth.span(SID, 0, "search", 10.0, 4.0), synth.span(SID, 1, "search", 20.0, 4.0, gap=6.0)]))
    waiting.join(10)
    # Released by the calls (a timeout would have answered with none).
    (answer,) = answers
    assert answer["cursor"] == 2 and answer["missed"] == 0
    assert [(c["cursor"], c["session"], c["span"]["seq"]) for c in answer["calls"]] == [(1, SID, 0), (2, SID, 1)]
    assert set(answer["calls"][0]["span"]) == set(json.loads(get(relay_server, f"/view/capture?t={TOKEN}")[1])["sessions"][0]["report"]["spans"][0])
    # A reader past every call waits, then gets none.
    status, body = get(relay_server, f"/view/calls?after=2&wait=0.05&t={TOKEN}")
    assert json.loads(body) == {"cursor": 2, "calls": [], "missed": 0}


def test_sessions_are_watched_while_a_reader_waits(tmp_path: Path) -> None:
    """A waiting reader makes every agent send at the screen's rate; after its wait (and a short grace) they go back
    to the unwatched cadence."""
    relay = RelayThread(tmp_path, watched=False)
    try:
        feed(relay, synth.hello(SID))

        def watched() -> bool:
            return bool(relay.call(lambda: relay.relay.watching.watched(SID)))

        assert not watched()
        answers: list[int] = []
        waiting = threading.Thread(target=lambda: answers.append(get(relay, f"/view/calls?after=0&wait=5&t={TOKEN}")[0]))
        waiting.start()
        relay.wait_for(lambda snap: watched())
        feed(relay, synth.spans_frame(SID, [synth.span(SID, 0, "search", 10.0, 4.0)]))
        waiting.join(10)
        assert answers == [200]
        relay.wait_for(lambda snap: not watched())
    finally:
        relay.close()


def test_nothing_but_get_reaches_the_view(relay_server: RelayThread) -> None:
    feed(relay_server, synth.hello(SID))
    before = json.loads(get(relay_server, f"/view/capture?t={TOKEN}")[1])
    for method in ("POST", "PUT", "DELETE"):
        conn = http.client.HTTPConnection("127.0.0.1", relay_server.port, timeout=LIVENESS_S)
        try:
            conn.request(method, f"/view/capture?t={TOKEN}", body=b'{"sessions": []}', headers={"Content-Type": "application/json"})
            try:
                status = conn.getresponse().status
            except (http.client.RemoteDisconnected, ConnectionResetError):
                status = None  # refused without an answer
        finally:
            conn.close()
        assert status != 200, method
    after = json.loads(get(relay_server, f"/view/capture?t={TOKEN}")[1])
    assert [s["info"] for s in after["sessions"]] == [s["info"] for s in before["sessions"]]
