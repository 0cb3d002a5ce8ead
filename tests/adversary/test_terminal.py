"""The attack an attacker holding the token would run on the real dashboard in a real terminal (issue 11).

`wmcp-top --port 0 --no-log` runs in tmux at 120x36; the test reads the relay's port from the top bar and plays,
over real WebSockets on 127.0.0.1 with the token, a victim page and an attacker:

- the attacker's hello for the victim's live session is refused (`session_taken`), its frames for that session
  are refused and counted against its own socket, which is closed after 64 of them; the victim's rows on screen
  do not change, its socket keeps getting acks, and the status view shows the refusals;
- the attacker's own session floods 10,000 spans with distinct hostile names (control characters, CSI, OSC 52,
  OSC 8, a bidi override, C1, Rich markup) and 1,100 registrations: `/healthz` answers throughout, the keys
  (`s`, `?`, `esc`) act, and the terminal shows every hostile name inert: no OSC 52 reached tmux's clipboard, no
  OSC 0 its pane title, no ESC but the dashboard's own colours in `capture-pane -e`, markup shown literally;
  the same holds in the status view (the page-chosen `visibility`) and the timeline (an event's detail keys);
- `q` exits 0 and the shell is back.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from relay_bridge.core import protocol as p
from relay_bridge.core import synth
from relay_bridge.core.connection import NOT_OWNER_CLOSE
from tests.liveness import LIVENESS_S
from tests.terminal import Tmux, exited, tmux, write_token  # noqa: F401  (tmux: the fixture)

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

TOKEN = "a77ac4e2a77ac4e2a77ac4e2a77ac4e2"
VICTIM = "a11ce5e5"
ATTACKER = "bad0bad0"
FORGED = "forged_by_attacker"
FLOOD = 10_000  # spans, each naming a tool of its own
REGISTRATIONS = 1_100  # tool frames, past the per-session cap of 1,024
CLIPBOARD = "SElKQUNLRUQ="  # base64 of "HIJACKED": what an OSC 52 that reached the terminal would copy

# What each hostile name starts with, and how the dashboard must show it.
HOSTILE = [
    (f"\x1b]52;c;{CLIPBOARD}\x07", f"␛]52;c;{CLIPBOARD}␇"),
    ("\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\", "␛]8;;https://evil.example/␛\\click␛]8;;␛\\"),
    ("\u202eexe.txt", "\\u202eexe.txt"),
    ("[red]x[/]", "[red]x[/]"),
    ("[link=https://evil.example]y[/link]", "[link=https://evil.example]y[/link]"),
    ("\x1b[2J\x1b[H\x1b[31m", "␛[2J␛[H␛[31m"),
    ("\x07\x08\r\n", "␇␈␍␊"),
    ("\x9b31m", "\\x9b31m"),
]
SGR = re.compile(r"\x1b\[[0-9;:]*m")


def name(i: int, suffix: str = "") -> str:
    return f"{HOSTILE[i % len(HOSTILE)][0]}{suffix}{i}"


@pytest.fixture
def sockets() -> Iterator[ExitStack]:
    """Closes every socket the test opened, whatever happened."""
    with ExitStack() as stack:
        yield stack


def page(sockets: ExitStack, port: int) -> ClientConnection:
    ws = sockets.enter_context(connect(f"ws://127.0.0.1:{port}/relay?t={TOKEN}", max_size=None, open_timeout=LIVENESS_S))
    assert json.loads(ws.recv(10))["type"] == "welcome"
    return ws


def ask(ws: ClientConnection, frame: dict[str, Any]) -> dict[str, Any]:
    ws.send(json.dumps(frame))
    return json.loads(ws.recv(10))


def ack_of(ws: ClientConnection, frame: dict[str, Any], seq: int | None = None) -> dict[str, Any]:
    """Send a frame and return the ack that answers it, or with `seq` the first ack reaching that seq (the
    answers to earlier frames, refusals included, are read past)."""
    ws.send(json.dumps(frame))
    while True:
        reply = json.loads(ws.recv(20))
        if reply["type"] == "ack" and (seq is None or reply["seq"] >= seq):
            return reply


def healthz(port: int, stop: threading.Event, out: list[float | str]) -> None:
    """`/healthz` every 20 ms until `stop`: each answer's latency, or the error instead."""
    while not stop.is_set():
        started = time.monotonic()
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=LIVENESS_S) as r:
                assert json.loads(r.read())["ok"] is True
            out.append(time.monotonic() - started)
        except Exception as exc:
            out.append(repr(exc))
        stop.wait(0.02)  # a monitor's pace, not a second flood


def flood(ws: ClientConnection, done: threading.Event, acks: list[dict[str, Any]]) -> None:
    """The attacker's own session: 10,000 spans of distinct hostile names, 1,100 registrations, then one batch
    that gives the first eight names three more calls each (so they lead a sort by calls)."""
    try:
        for lo in range(len(HOSTILE), FLOOD, 100):
            spans = [synth.span(ATTACKER, i, name(i), float(i), 1.0) for i in range(lo, min(FLOOD, lo + 100))]
            ws.send(json.dumps(synth.spans_frame(ATTACKER, spans)))
        for i in range(REGISTRATIONS):
            ws.send(json.dumps(synth.tool(ATTACKER, name(i, "t"), 1.0)))
        extra = [synth.span(ATTACKER, FLOOD + k, name(k % len(HOSTILE)), float(FLOOD + k), 2.0) for k in range(3 * len(HOSTILE))]
        acks.append(ack_of(ws, synth.spans_frame(ATTACKER, extra), seq=FLOOD + len(extra) - 1))
    finally:
        done.set()


def line_with(screen: str, text: str) -> str:
    found = [line for line in screen.splitlines() if text in line]
    assert found, f"{text!r} not on screen:\n{screen}"
    return found[0]


@pytest.mark.serial
def test_an_attacker_holding_the_token_cannot_hijack_freeze_or_inject_into_the_dashboard(tmux: Tmux, sockets: ExitStack) -> None:
    write_token(tmux.home, TOKEN)
    tmux.run("set-option", "-g", "set-clipboard", "on")  # an OSC 52 reaching the terminal would make a buffer
    assert shutil.which("wmcp-top", path=tmux.env["PATH"]) == os.path.join(os.path.dirname(sys.executable), "wmcp-top")
    tmux.type("wmcp-top --port 0 --no-log; echo EXIT=$?")  # the installed command, as a user runs it
    screen = tmux.wait(lambda s: re.search(r"relay 127\.0\.0\.1:\d+", s) is not None and "waiting" in s, what="waiting screen")
    port = int(re.search(r"relay 127\.0\.0\.1:(\d+)", screen).group(1))

    # a. The victim's page: its session and its rows.
    victim = page(sockets, port)
    assert ask(victim, synth.hello(VICTIM, title="victim page"))["type"] == "ack"
    victim.send(json.dumps(synth.tool(VICTIM, "victim_search", 1.0)))
    assert ack_of(victim, synth.spans_frame(VICTIM, [synth.span(VICTIM, i, "victim_search", i * 10.0, 5.0) for i in range(5)]))["seq"] == 4
    tmux.wait(lambda s: re.search(r"victim_search +5 +0 ", s) is not None and VICTIM in s, what="the victim's row")

    # b. The attacker tries to take the session, then to write into it, until the relay closes its socket.
    attacker = page(sockets, port)
    taken = ask(attacker, synth.hello(VICTIM, title="hijacked"))
    assert (taken["type"], taken.get("code"), taken["session"]) == ("error", p.Code.SESSION_TAKEN, VICTIM) and "resume" not in taken
    attacks = [
        synth.tool(VICTIM, FORGED, 1.0),
        synth.spans_frame(VICTIM, [synth.span(VICTIM, 5, FORGED, 1.0, 1.0)], floor=10**13 - 1),
        synth.status(VICTIM, "detached", "forged"),
        synth.event(VICTIM, 1.0, "reset"),
        {"type": "bye", "session": VICTIM, "reason": "forged"},
    ]
    refused = 1  # the hello
    with pytest.raises(ConnectionClosed) as closed:
        for k in range(NOT_OWNER_CLOSE + 10):
            refused += 1
            reply = ask(attacker, attacks[k % len(attacks)])
            assert (reply["type"], reply["session"]) == ("error", VICTIM), reply
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1008
    assert refused == NOT_OWNER_CLOSE, f"closed after {refused} refused frames (the hello included)"
    assert ack_of(victim, synth.spans_frame(VICTIM, [synth.span(VICTIM, i, "victim_search", i * 10.0, 5.0) for i in range(5, 8)]))["seq"] == 7
    screen = tmux.wait(lambda s: re.search(r"victim_search +8 +0 ", s) is not None, what="the victim's later calls")
    assert FORGED not in screen and "hijacked" not in screen
    assert "coverage running" in screen and "rejected frames" not in screen and "phase live" in screen
    tmux.key("d")
    screen = tmux.wait(lambda s: "status and troubleshooting" in s, what="status view")
    assert re.search(rf"refused:not_owner {NOT_OWNER_CLOSE}\b", screen), "the refusals are counted against the attacker"
    assert FORGED not in screen
    tmux.key("Escape")
    tmux.wait(lambda s: "status and troubleshooting" not in s and "victim_search" in s, what="back on the dashboard")

    # c. The attacker's own session floods; its tab is on screen while it does.
    flooder = page(sockets, port)
    assert ask(flooder, synth.hello(ATTACKER, title="\x1b]0;pwned\x07", visibility=HOSTILE[0][0]))["type"] == "ack"
    first = [synth.span(ATTACKER, i, name(i), float(i), 1.0) for i in range(len(HOSTILE))]
    assert ack_of(flooder, synth.spans_frame(ATTACKER, first))["seq"] == len(HOSTILE) - 1
    tmux.wait(lambda s: ATTACKER in s, what="the attacker's tab")
    tmux.key("Tab")
    tmux.wait(lambda s: "[red]x[/]3" in s and "victim_search" not in s, what="the attacker's rows")

    stop, done = threading.Event(), threading.Event()
    latencies: list[float | str] = []
    acks: list[dict[str, Any]] = []
    poller = threading.Thread(target=healthz, args=(port, stop, latencies))
    pusher = threading.Thread(target=flood, args=(flooder, done, acks))
    poller.start()
    pusher.start()
    try:
        # d. Keys act while the flood arrives (sort), and once it is all on screen (help and back).
        tmux.key("s")
        tmux.wait(
            lambda s: re.search(r"calls ?▼", s) is not None and not re.search(r"tool ?▲", s), what="sorted by calls"
        )  # the arrow sits in the gap when the column has no room
        assert done.wait(30), "the flood was not taken in within 30 s"
        # The flood is on screen, capped: the eight leading names (4 calls each), the rest counted as hidden.
        screen = tmux.wait(
            lambda s: re.search(r"of ([\d,]+) by calls", s) is not None and re.search(r"\[red\]x\[/\]3 +4 ", s) is not None,
            what="the flood on screen",
        )
        tmux.key("?")
        tmux.wait(lambda s: "wmcp-top keys" in s and "wmcp.sort" in s, what="help")
        tmux.key("Escape")
        tmux.wait(lambda s: "wmcp-top keys" not in s and re.search(r"calls ?▼", s) is not None, what="help closed")
    finally:
        stop.set()
        pusher.join(30)
        poller.join(10)
    assert acks and acks[0]["seq"] == FLOOD + 3 * len(HOSTILE) - 1, acks
    failures = [x for x in latencies if isinstance(x, str)]
    times = sorted(x for x in latencies if isinstance(x, float))
    assert not failures, failures[:3]
    assert len(times) >= 5, f"only {len(times)} /healthz answers during the flood"
    p95 = times[min(len(times) - 1, math.floor(0.95 * len(times)))]
    assert p95 < 1.0, f"/healthz p95 {p95:.3f}s during the flood ({len(times)} answers, max {times[-1]:.3f}s)"
    shown = int(re.search(r"of ([\d,]+) by calls", screen).group(1).replace(",", ""))
    assert FLOOD <= shown <= FLOOD + 1024, screen
    assert re.search(r"rejected frames \d+", screen), "registrations past the cap are refused and counted"

    # e. Every hostile name is shown inert, none acted on the terminal.
    for i, (_, inert) in enumerate(HOSTILE):
        assert re.search(re.escape(f"{inert}{i}") + r" +4 ", screen), f"{inert!r} not shown inert:\n{screen}"
    assert "␛]0;pwned␇" in screen  # the title of the attacker's tab
    styled = tmux.screen(escapes=True)
    assert "\x1b]" not in styled and CLIPBOARD + "\x07" not in styled
    assert "\x1b" not in SGR.sub("", styled), "an escape other than the dashboard's colours reached the terminal"
    assert tmux.run("list-buffers").strip() == "", "an OSC 52 reached the terminal's clipboard"
    assert tmux.run("display-message", "-p", "#{pane_title}").strip() != "pwned", "an OSC 0 set the terminal's title"
    # The markup rows carry the table's own colours only: nothing on their lines that the other rows lack.
    table = set().union(*(SGR.findall(line_with(styled, f"{inert}{i}")) for i, (_, inert) in enumerate(HOSTILE) if i not in (3, 4)))
    for markup in ("[red]x[/]3", "[link=https://evil.example]y[/link]4"):
        assert set(SGR.findall(line_with(styled, markup))) <= table, f"{markup} changed a style:\n{styled}"

    # The status view lists every session with its page-chosen visibility (here the OSC 52), at its end.
    tmux.key("d")
    tmux.wait(lambda s: "status and troubleshooting" in s, what="status view")
    tmux.key("end")
    screen = tmux.wait(lambda s: ATTACKER in s and " · live · " in line_with(s, ATTACKER), what="the attacker's session in the status view")
    assert "live · ␛]52;c;" in line_with(screen, ATTACKER)
    assert "\x1b" not in SGR.sub("", tmux.screen(escapes=True))
    assert tmux.run("list-buffers").strip() == "", "an OSC 52 in the page's visibility reached the terminal's clipboard"
    tmux.key("Escape")
    tmux.wait(lambda s: "status and troubleshooting" not in s and re.search(r"calls ?▼", s) is not None, what="back on the dashboard")

    # The timeline names an event's detail keys, which are page text too: the newest entry, an OSC 52 for a key.
    flooder.send(json.dumps(synth.event(ATTACKER, 10.0 * FLOOD, "custom", **{HOSTILE[0][0]: 1})))
    tmux.key("l")
    screen = tmux.wait(lambda s: f"{HOSTILE[0][1]}=1" in s, what="the event's key inert in the timeline")
    assert "\x1b" not in SGR.sub("", tmux.screen(escapes=True))
    assert tmux.run("list-buffers").strip() == "", "an OSC 52 in an event's key reached the terminal's clipboard"
    tmux.key("Escape")
    tmux.wait(lambda s: re.search(r"calls ?▼", s) is not None and "timeline" not in s, what="back on the dashboard")

    # f. q leaves with 0 and gives the shell back.
    tmux.key("q")
    screen = tmux.wait(exited, what="exit")
    assert "EXIT=0" in screen and "Traceback" not in screen
    assert not tmux.alternate_on()
    tmux.type("echo shell-$((6 * 7))")
    tmux.wait(lambda s: "shell-42" in s, what="the shell answers")
