"""`wmcp-top open URL --check-lanes`: the page agent and the DevTools Protocol lane watch the same page; on exit
every call where they differ is printed and the exit code says whether any did."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
from collections.abc import Iterator

import pytest

from tests.browser.conftest import PageServer

CALLS = 4  # what forms.html?drive=1 calls


@pytest.fixture(scope="module")
def form_pages() -> Iterator[PageServer]:
    server = PageServer()
    yield server
    server.close()


def run_open(url: str, chromium: str) -> tuple[int, list[str]]:
    """Run the command until both lanes printed every call, then stop it as a user would (Ctrl-C)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "relay_bridge.lanes.open", url, "--headless", "--port", "0", "--check-lanes", "--browser", chromium],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: list[str] = []
    guard = threading.Timer(120, proc.kill)  # a stuck browser ends the read loop (and fails the test), never hangs it
    guard.start()
    try:
        assert proc.stdout is not None
        seen = {"agent": 0, "cdp": 0}
        for line in proc.stdout:
            lines.append(line.rstrip("\n"))
            parts = line.split()
            if len(parts) > 1 and parts[0] == "call":
                seen[parts[1]] += 1
            if seen["cdp"] >= CALLS and (seen["agent"] >= CALLS or "perf=0" in url):
                break
        proc.send_signal(signal.SIGINT)
        rest, _ = proc.communicate(timeout=60)
        lines += rest.splitlines()
        return proc.returncode, lines
    finally:
        guard.cancel()
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)


def test_check_lanes_agrees_on_form_calls(chromium: str, form_pages: PageServer) -> None:
    code, lines = run_open(form_pages.url("forms.html", drive="1"), chromium)
    assert code == 0, lines
    assert lines[-1].endswith(f"page agent {CALLS} call(s), DevTools lane {CALLS} call(s): the lanes agree"), lines
    assert sum(1 for line in lines if line.startswith("call agent book_table")) == 2
    assert not any(line.startswith("differs:") for line in lines)


def test_check_lanes_reports_calls_the_agent_missed_and_exits_1(chromium: str, form_pages: PageServer) -> None:
    # ?perf=0 switches the page agent off for the page: the DevTools lane alone sees the calls.
    code, lines = run_open(form_pages.url("forms.html", drive="1", perf="0"), chromium)
    assert code == 1, lines
    differs = [line for line in lines if line.startswith("differs:")]
    assert len(differs) == CALLS, lines
    assert "differs: book_table call #1: only the DevTools lane saw it (error, 0 B)" in differs
    assert lines[-1].endswith(f"page agent 0 call(s), DevTools lane {CALLS} call(s): {CALLS} difference(s)"), lines


JSON_TEXT_PAGE = """<!doctype html><meta charset="utf-8"><title>json text</title><script>
(async () => {
  const mc = document.modelContext
  const catalog = { items: Array.from({ length: 50 }, (_, i) => ({ id: i, name: "item " + i })) }
  // JSON text returned as a string, pretty-printed: the DevTools lane receives it parsed, whitespace gone
  await mc.registerTool({ name: "big_catalog", description: "every item", execute: () => JSON.stringify(catalog, null, 2) })
  const tool = (await mc.getTools()).find((t) => t.name === "big_catalog")
  await mc.executeTool(tool, {})
})()
</script>"""


def test_a_string_of_json_text_is_labelled_not_comparable_and_exits_0(chromium: str, tmp_path) -> None:
    """Issue 49: exit 1, "differs: big_catalog call #0: 300558 B (agent) vs 213550 B (DevTools)", for the DevTools
    lane's documented limit (it re-serialises JSON text a tool returned as a string)."""
    from tests.lanes.helpers import SiteServer

    (tmp_path / "index.html").write_text(JSON_TEXT_PAGE)
    site = SiteServer(tmp_path)
    proc = subprocess.Popen(
        [sys.executable, "-m", "relay_bridge.lanes.open", site.url, "--headless", "--port", "0", "--check-lanes", "--browser", chromium],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    guard = threading.Timer(120, proc.kill)
    guard.start()
    lines: list[str] = []
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line.rstrip("\n"))
            if any(x.startswith("call agent big_catalog") for x in lines) and any(x.startswith("call cdp big_catalog") for x in lines):
                break
        proc.send_signal(signal.SIGINT)
        rest, _ = proc.communicate(timeout=60)
        lines += rest.splitlines()
    finally:
        guard.cancel()
        site.close()
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    assert proc.returncode == 0, lines
    assert not any(line.startswith("differs:") for line in lines), lines
    label = next(line for line in lines if line.startswith("not comparable: big_catalog call #0: "))
    assert "the page returned JSON text as a string, which the DevTools lane receives parsed" in label
    assert lines[-1].endswith("the lanes agree (1 string result(s) not comparable by bytes: the DevTools lane re-serialises JSON text)"), lines
