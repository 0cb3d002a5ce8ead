"""A real terminal: `wmcp-top` in tmux, read back with capture-pane.

- `wmcp-top --demo --port 0` at 120x36: the table and the summary line appear; `q` exits 0 and the shell is back
  (alternate screen left);
- untrusted names sent by a page over the real socket reach the terminal inert (no ESC, no style change);
- a port in use is one line on stderr and exit code 2, with the terminal restored.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import socket
import threading
from pathlib import Path

import pytest

from relay_bridge.core import synth
from tests.terminal import Tmux, cmd, exited, tmux, write_token  # noqa: F401  (tmux: the fixture)
from tests.wakeups import idle_wakes

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

TOKEN = "fedcba9876543210fedcba9876543210"


def test_demo_in_a_real_terminal_and_q_restores_it(tmux: Tmux) -> None:
    tmux.type(cmd("--demo --port 0"))
    screen = tmux.wait(lambda s: "tool" in s and "calls" in s and "p95" in s and "schemas " in s and "host gaps" in s, what="table and summary line")
    assert tmux.alternate_on()
    assert "relay 127.0.0.1:" in screen and "shop.example 3f2a9c01" in screen
    tmux.wait(lambda s: "search_products" in s or "get_product" in s, what="a tool row")
    tmux.key("q")
    screen = tmux.wait(exited, what="exit")
    assert "EXIT=0" in screen
    assert not tmux.alternate_on()
    assert "schemas " not in screen and "Traceback" not in screen
    tmux.type("tput cols; stty -a | head -1")  # the shell is usable again, at the size we gave it
    screen = tmux.wait(lambda s: "\n120\n" in s or (s.count("120") >= 1 and "speed" in s), what="shell answers")
    assert "120" in screen


def test_untrusted_names_reach_the_terminal_inert(tmux: Tmux, tmp_path: Path) -> None:
    write_token(tmp_path, TOKEN)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    tmux.type(cmd(f"--port {port} --no-log"))
    tmux.wait(lambda s: f"127.0.0.1:{port}" in s and "waiting" in s, what="waiting screen")

    async def page() -> None:
        from tests.liveness import connect

        sid = "a1b2c3d4"
        async with connect(f"ws://127.0.0.1:{port}/relay?t={TOKEN}") as ws:
            frames = [
                synth.hello(sid, "https://evil.example", title="\x1b]0;title\x07"),
                synth.tool(sid, "[bold red]x[/]", 1.0),
                synth.tool(sid, "\x1b[31mred\x1b[0m\x1b[2J", 2.0),
                synth.spans_frame(sid, [synth.span(sid, 0, "[bold red]x[/]", 10.0, 5.0)]),
            ]
            for frame in frames:
                await ws.send(json.dumps(frame))
            while not done.is_set():  # keep the socket open while the terminal is read
                await asyncio.sleep(0.05)

    done = threading.Event()
    thread = threading.Thread(target=asyncio.run, args=(page(),))
    thread.start()
    try:
        screen = tmux.wait(lambda s: "[bold red]x[/]" in s and "␛[31mred␛[0m␛[2J" in s, what="literal names")
        styled = tmux.screen(escapes=True)
        # The name's characters carry the table's own colours only: no red/bold opened by the page.
        line = next(x for x in styled.splitlines() if "[bold red]x[/]" in x)
        assert "\x1b[31m" not in line and "\x1b[1;31m" not in line
        assert "red" in screen and "\x1b" not in screen
    finally:
        done.set()
        thread.join(10)
    tmux.key("q")
    screen = tmux.wait(exited, what="exit")
    assert "EXIT=0" in screen and not tmux.alternate_on()


def test_port_in_use_is_one_line_and_exit_2(tmux: Tmux) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        tmux.type(cmd(f"--port {port}"))
        screen = tmux.wait(exited, what="exit")
    assert f"wmcp-top: port {port} is in use (another wmcp-top?); try --port 0" in screen
    assert "EXIT=2" in screen and "Traceback" not in screen
    assert not tmux.alternate_on()


@pytest.mark.serial
def test_an_idle_dashboard_sleeps_and_a_lone_escape_still_arrives(tmux: Tmux, tmp_path: Path) -> None:
    """With no page connected nothing wakes the process: no timer of the dashboard's, and no input thread
    polling the terminal (tui/quiet_driver.py). Textual's own input thread alone woke it ten times a second,
    the idle ticker and the OTLP check four more. A lone ESC (the parser's timeout, no more polling) still
    takes the help view back to the dashboard. The session log is on, as it is by default."""
    write_token(tmp_path, TOKEN)
    tmux.type(cmd("--port 0"))
    tmux.wait(lambda s: "waiting" in s and "relay 127.0.0.1:" in s, what="waiting screen")
    shell = int(tmux.run("display-message", "-p", "#{pane_pid}").strip())
    children = Path(f"/proc/{shell}/task/{shell}/children").read_text().split()
    assert len(children) == 1, children
    pid = int(children[0])
    woke = idle_wakes(pid, 3.0)
    assert woke <= 3, f"an idle dashboard woke {woke} times in 3 s (before: about 14 a second)"
    tmux.key("?")
    tmux.wait(lambda s: "binding id" in s, what="help view")
    tmux.key("Escape")
    tmux.wait(lambda s: "binding id" not in s and "waiting" in s, what="back on the dashboard after a lone ESC")
    tmux.key("q")
    screen = tmux.wait(exited, what="exit")
    assert "EXIT=0" in screen and not tmux.alternate_on()
