"""open end to end: Chromium with WebMCP on, the agent injected before any page script, spans in the relay."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from relay_bridge.core import protocol as p
from relay_bridge.lanes.open.lane import open_browser
from relay_bridge.relay.server import Relay, RelayConfig
from tests.lanes.helpers import wait_store
from tests.lines import Lines
from tests.liveness import LIVENESS_S


def accepted(text: str) -> p.AgentFrame:
    """The frame `text` decodes to; these tests only send valid frames."""
    frame = p.decode(text)
    assert not isinstance(frame, p.Rejection), frame
    return frame


pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parents[2]
TOKEN = "00112233445566778899aabbccddeeff"


async def test_open_injects_the_agent_before_page_scripts(chromium: str, site) -> None:
    relay = Relay(RelayConfig(port=0, token=TOKEN))
    await relay.start()
    handle = None
    try:
        handle = await open_browser(site.url, relay, True, browser=chromium)
        # every one of the page's registrations was seen: the agent ran before the page's own script
        await wait_store(relay.store, lambda st: any(len([t for t in s.tools.values() if t.registered]) == 12 for s in st.sessions.values()))
        got = await handle.page.evaluate("""async () => {
            await window.__fixtureReady;
            const mc = document.modelContext, tools = await mc.getTools();
            const out = [];
            for (const name of ["get_price", "ping_empty"]) out.push(await mc.executeTool(tools.find(t => t.name === name), {amount: 1, currency: "EUR"}));
            return out;
        }""")
        assert got[1] == "Operation succeeded"
        await wait_store(relay.store, lambda st: any(s.stats.totals.calls == 2 for s in st.sessions.values()))
        [session] = [s for s in relay.store.sessions.values() if s.stats.totals.calls == 2]
        assert sorted(sp.tool for sp in session.spans()) == ["get_price", "ping_empty"]
        assert session.info.origin == site.url.rsplit("/", 1)[0]
        # issue 34: no empty session of the new tab's about:blank (`null … ended`, which replay opened on)
        assert [s.info.origin for s in relay.store.sessions.values()] == [session.info.origin]
        # closing the page (the user closing the window) is seen, and close() then ends the browser
        await handle.page.close()
        await asyncio.wait_for(handle.closed.wait(), LIVENESS_S)
        await handle.close()
        assert not handle.browser.is_connected()
    finally:
        if handle is not None:
            await handle.close()
        await relay.stop()


def test_open_cli_headless_then_sigterm_closes_both(chromium: str, site, tmp_path: Path) -> None:
    env = dict(os.environ, WMCP_CHROMIUM=chromium)
    proc = subprocess.Popen(
        [sys.executable, "-m", "relay_bridge.lanes.open", site.url, "--headless", "--port", "0", "--report-on-exit", str(tmp_path)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    out, errs = Lines(proc.stdout), Lines(proc.stderr)
    try:
        # Each line within 60 s (a loaded CI machine); a failure names what the CLI wrote meanwhile.
        first = out.until(lambda line: True, timeout=60)
        assert first.startswith("wmcp-top open: ") and "agent injected" in first, first + errs.rest(1)
        line = out.until(lambda line: True, timeout=60)
        assert "new session" in line and "wmcp-top-agent" in line, line
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)
    rest, err = out.rest(), errs.rest()
    assert proc.returncode == 0, err
    assert "stopping" in rest and (tmp_path / "capture.json").exists()
    assert len(list(tmp_path.glob("*.json"))) >= 2


async def test_a_session_that_said_hello_before_anyone_listened_is_still_announced() -> None:
    """On a loaded machine a page's agent can say hello while `open` is still launching Chromium, and then be
    quiet. Its session must still get its line (it once waited for a change that a quiet page never makes)."""
    from relay_bridge.core import synth
    from relay_bridge.core.store import Store
    from relay_bridge.lanes.open.lane import announce_sessions

    said: list[str] = []
    heard = asyncio.Event()

    def say(line: str) -> None:
        said.append(line)
        heard.set()

    async def next_line() -> str:
        async with asyncio.timeout(LIVENESS_S):
            await heard.wait()
        heard.clear()
        return said[-1]

    store = Store()
    store.apply(1, accepted(json.dumps(synth.hello("0a0b0c0d"))))  # before anyone listens; nothing changes after
    changed, stop = asyncio.Event(), asyncio.Event()
    store.wake = changed.set
    loop = asyncio.ensure_future(announce_sessions(store, changed, stop, say=say))
    assert (await next_line()).startswith("0a0b0c0d ")
    store.apply(2, accepted(json.dumps(synth.hello("1a1b1c1d"))))  # a later one wakes it
    assert (await next_line()).startswith("1a1b1c1d ")
    stop.set()
    async with asyncio.timeout(LIVENESS_S):
        await loop
    assert len(said) == 2 and all("new session" in line for line in said), said


def test_ctrl_c_on_open_no_ui_is_a_clean_stop(chromium: str, site, tmp_path: Path) -> None:
    """Issue 34: Ctrl-C (SIGINT to the whole process group, Playwright's driver too) printed `Future exception was
    never retrieved … Connection closed while reading from the driver`."""
    env = dict(os.environ, WMCP_CHROMIUM=chromium, WMCP_TOP_HOME=str(tmp_path), PYTHONUNBUFFERED="1")
    proc = subprocess.Popen(
        [sys.executable, "-m", "tui.cli", "open", site.url, "--no-ui", "--headless", "--port", "0", "--no-log"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    out, errs = Lines(proc.stdout), Lines(proc.stderr)
    try:
        first = out.until(lambda line: True, timeout=60)
        assert first.startswith("wmcp-top open: "), first + errs.rest(1)
        line = out.until(lambda line: "new session" in line, timeout=60)
        assert site.url.rsplit("/", 1)[0] in line and "null" not in line, line  # the page's, not about:blank's
    finally:
        os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does
        proc.wait(30)
    rest, err = out.rest(), errs.rest()
    assert proc.returncode == 0 and "stopping" in rest, (proc.returncode, rest, err)
    assert "never retrieved" not in err and "Traceback" not in err and "Connection closed" not in err, err
    assert "new session" not in rest or "null" not in rest, rest


def test_open_without_chromium_names_apt_get(tmp_path: Path) -> None:
    env = dict(os.environ, WMCP_CHROMIUM=str(tmp_path / "nope"))
    out = subprocess.run(
        [sys.executable, "-m", "relay_bridge.lanes.open", "http://127.0.0.1:9/", "--headless", "--port", "0", "--no-log"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("wmcp-top: ") and "apt-get install -y chromium" in lines[0]


async def test_the_readmes_own_page_call_runs_as_written(chromium: str, site) -> None:
    """The README's step 4 (issue 49: executeTool takes the tool object, not a name): its console line, pasted as
    it stands, makes one measured call and moves the phase to measuring."""
    from tests.test_docs import readme_execute_line

    relay = Relay(RelayConfig(port=0, token=TOKEN))
    await relay.start()
    handle = None
    try:
        handle = await open_browser(site.url, relay, True, browser=chromium)
        await wait_store(relay.store, lambda st: any(len([t for t in s.tools.values() if t.registered]) == 12 for s in st.sessions.values()))
        await handle.page.evaluate(f"async () => {{ await window.__fixtureReady; {readme_execute_line()} }}")
        await wait_store(relay.store, lambda st: any(s.stats.totals.calls == 1 and s.phase == "measuring" for s in st.sessions.values()))
    finally:
        if handle is not None:
            await handle.close()
        await relay.stop()


@pytest.mark.parametrize(("policy", "kept"), [("name", "Error"), ("none", None)])
async def test_open_sends_less_of_an_error_when_told(chromium: str, site, policy: str, kept: str | None) -> None:
    """README: the error message leaves the page by default; `open --error-policy name|none` sends less."""
    relay = Relay(RelayConfig(port=0, token=TOKEN))
    await relay.start()
    handle = None
    try:
        handle = await open_browser(site.url, relay, True, browser=chromium, error_policy=policy)
        await wait_store(relay.store, lambda st: any(len([t for t in s.tools.values() if t.registered]) == 12 for s in st.sessions.values()))
        await handle.page.evaluate("""async () => {
            await window.__fixtureReady;
            const mc = document.modelContext;
            try { await mc.executeTool((await mc.getTools()).find((t) => t.name === "flaky_lookup"), {}) } catch {}
        }""")
        await wait_store(relay.store, lambda st: any(s.stats.totals.calls == 1 for s in st.sessions.values()))
        [span] = [sp for s in relay.store.sessions.values() for sp in s.spans()]
        assert span.isError and span.error == kept
        assert all("backend unavailable" not in str(sp) for s in relay.store.sessions.values() for sp in s.spans())
    finally:
        if handle is not None:
            await handle.close()
        await relay.stop()
