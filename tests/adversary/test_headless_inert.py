"""Every line a headless command prints is inert by the dashboard's rules (issue 31, item 5): a page's origin
with CR/LF and invisible characters (`ba\\u00adnk.example` prints as `bank.example` in a terminal) never starts a
line of its own and never hides a character, in `open --no-ui`'s announcements, `relay`'s summary lines, the lane
check's differences, `bench`'s and `compare`'s tables. The legitimate page's line is printed whole beside it."""

from __future__ import annotations

import asyncio
import io
import json

from relay_bridge.cli import session_line
from relay_bridge.core import synth
from relay_bridge.core.inert import InertStream
from relay_bridge.lanes.bench.cli import table
from relay_bridge.lanes.compare import SHOWN, render
from relay_bridge.lanes.lanecheck import Difference, LaneCall
from relay_bridge.lanes.open.lane import announce_sessions
from relay_bridge.relay.server import Relay
from tests.liveness import LIVENESS_S, connect
from tests.relay.conftest import recv_json, ws_url

EVIL = "http://ba\u00adnk.example\u200b\r\nwmcp-top open: browser closed\u202e"
FAKE_LINE = "wmcp-top open: browser closed"
TOOL = "trans\u00adfer\u2060\nwrote /etc/passwd"


def printed(lines: list[str]) -> list[str]:
    """What a terminal gets: each line through the headless commands' stream (tui/cli.py's inert_output)."""
    out = io.StringIO()
    stream = InertStream(out)
    for line in lines:
        stream.write(line + "\n")
    return out.getvalue().split("\n")[:-1]


def assert_inert(shown: list[str], n: int) -> None:
    assert len(shown) == n, shown
    for line in shown:
        assert not line.startswith(FAKE_LINE) and not line.startswith("wrote /etc"), line
        assert not any(c in line for c in "\u00ad\u200b\u202e\u2060\r"), ascii(line)


async def test_open_and_relay_lines_show_a_hostile_origin_inert(relay: Relay) -> None:
    said: list[str] = []
    changed, done = asyncio.Event(), asyncio.Event()
    relay.store.wake = changed.set
    watcher = asyncio.ensure_future(announce_sessions(relay.store, changed, done, say=said.append))
    pages = []
    for sid, origin in (("e0e0e0e0", EVIL), ("90000d00", "https://shop.example")):
        ws = await connect(ws_url(relay))  # a local tool: no Origin header, so any origin text gets in
        await recv_json(ws)
        await ws.send(json.dumps(synth.hello(sid, origin, path="/\r\nx\u00ad", agent="evil\u200b/1")))
        assert (await recv_json(ws))["type"] == "ack"
        pages.append(ws)
    async with asyncio.timeout(LIVENESS_S):
        while len(said) < 2:
            changed.set()
            await asyncio.sleep(0.01)
    done.set()
    await watcher
    relay.store.wake = None
    shown = printed(said + [session_line(s) for s in relay.store.sessions.values()])
    assert_inert(shown, 4)
    assert sum("ba\\u00adnk.example\\u200b␍␊wmcp-top open" in line for line in shown) == 2
    assert any(line.startswith("90000d00 https://shop.example/") for line in shown), "the real page's line, whole"
    for ws in pages:
        await ws.close()


def test_lane_check_bench_and_compare_lines_show_a_hostile_tool_name_inert() -> None:
    call = LaneCall(TOOL, 0.0, "ok", 10, 0, "e0e0e0e0")
    lines = [Difference(TOOL, 0, "bytes", call, LaneCall(TOOL, 0.0, "ok", 11, 0, "e0e0e0e0")).line()]
    lines += table([("tool", "calls"), (TOOL, "3"), ("search", "1")]).split("\n")
    metrics = {m: {"base": 1.0, "head": 2.0, "verdict": "regressed"} for m in SHOWN}
    result = {
        "tools": [{"tool": TOOL, "status": "changed", "metrics": metrics, "reasons": ["slower"]}],
        "notes": [],
        "judged": False,
        "regressions": 0,
        "improvements": 0,
        "base": {"format": "a"},
        "head": {"format": "b"},
    }
    lines += render(result).split("\n")
    shown = printed(lines)
    assert_inert(shown, len(lines))
    assert any("trans\\u00adfer\\u2060␊wrote /etc/passwd" in line for line in shown)
    assert any(line.startswith("search") for line in shown)
