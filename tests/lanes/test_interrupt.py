"""Ctrl-C while `wmcp-top open` and `wmcp-top bench` start, and half-way through a bench, typed into a real terminal
(tests/pty_child.py): SIGINT reaches the program and everything in its process group, Playwright's driver too.
Each instant is chosen by a state of the program (a module mapped, the driver or Chromium started, a line or a
progress count shown), never by a delay. Issue 49: the imports printed a KeyboardInterrupt traceback (and once
in a few tries crashed), the driver's end a "Connection closed" traceback, Chromium's end "cannot open URL"
(blaming the URL), and bench lost every call it had made."""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.pty_child import PtyChild

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parents[2]

# Where start-up is when the key is pressed: each a condition on the running program.
INSTANTS: dict[str, Callable[[PtyChild], bool]] = {
    # the program's imports are under way (msgspec's extension module is among the first)
    "importing": lambda c: c.maps("msgspec"),
    # Playwright's driver (node) has been started
    "driver": lambda c: any("run-driver" in line for line in c.descendants()),
    # Chromium has been started by the driver
    "chromium": lambda c: any("chromium" in line and "run-driver" not in line for line in c.descendants()),
}
NOISE = ("Traceback", "never retrieved", "Connection closed", "cannot open", "KeyboardInterrupt", "would not start", "Target page")


def _start(argv: list[str], chromium: str, home: Path) -> PtyChild:
    env = dict(os.environ, WMCP_CHROMIUM=chromium, WMCP_TOP_HOME=str(home), TERM="xterm-256color")
    # `python -m tui` is what the installed `wmcp-top` runs (tui/__main__.py)
    return PtyChild([sys.executable, "-m", "tui", *argv], env=env, cwd=ROOT)


def _clean(text: str) -> None:
    for word in NOISE:
        assert word not in text, f"{word!r} shown after Ctrl-C:\n{text}"


# The dashboard form owns the terminal once its imports are done (its ctrl+c is a key): only the imports are its start.
OPEN_CASES = [("--no-ui", instant) for instant in INSTANTS] + [("dashboard", "importing")]


@pytest.mark.parametrize(("form", "instant"), OPEN_CASES)
def test_ctrl_c_while_open_starts_is_one_quiet_stop(chromium: str, site, tmp_path: Path, form: str, instant: str) -> None:
    argv = ["open", site.url, "--headless", "--port", "0", "--no-log", *(["--no-ui"] if form == "--no-ui" else [])]
    child = _start(argv, chromium, tmp_path)
    child.wait_for(lambda: INSTANTS[instant](child), what=instant)
    child.ctrl_c()
    code = child.finish()
    _clean(child.text)
    assert code in (130, 0), (code, child.text)
    if "interrupted" not in child.text:  # a launch the Ctrl-C came too late to stop is stopped as a running one
        assert instant == "importing" or "stopping" in child.text, child.text


def test_ctrl_c_once_the_page_is_watched_stops_with_0(chromium: str, site, tmp_path: Path) -> None:
    child = _start(["open", site.url, "--headless", "--port", "0", "--no-log", "--no-ui"], chromium, tmp_path)
    child.wait_for(lambda: "new session" in child.text, what="the page's session")
    child.ctrl_c()
    assert child.finish() == 0, child.text
    _clean(child.text)
    assert "wmcp-top open: stopping" in child.text


@pytest.mark.parametrize("instant", ["driver", "chromium"])
def test_ctrl_c_while_bench_starts_writes_nothing_and_says_so(chromium: str, site, tmp_path: Path, instant: str) -> None:
    out = tmp_path / "bench.json"
    child = _start(["bench", site.url, "--runs", "5", "--json", str(out)], chromium, tmp_path)
    child.wait_for(lambda: INSTANTS[instant](child), what=instant)
    child.ctrl_c()
    assert child.finish() == 130, child.text
    _clean(child.text)
    assert "interrupted before any tool's calls were measured" in child.text
    assert not out.exists()


def _halfway(text: str) -> bool:
    """The progress bar shows some calls done and some to go ("80/440")."""
    return any(0 < int(done) < int(total) for done, total in re.findall(r"(\d+)/(\d+)", text))


def test_ctrl_c_half_way_through_bench_keeps_what_was_measured(chromium: str, site, tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    child = _start(["bench", site.url, "--runs", "60", "--json", str(out)], chromium, tmp_path)
    child.wait_for(lambda: _halfway(child.text), what="calls under way")
    child.ctrl_c()
    assert child.finish() == 130, child.text
    _clean(child.text)
    said = re.search(r"interrupted \(Ctrl-C\) after (\d+) of (\d+) calls", child.text)
    assert said is not None, child.text
    made, planned = int(said[1]), int(said[2])
    assert 0 < made < planned, child.text
    doc = json.loads(out.read_text())
    assert {row["runs"] for row in doc["rows"]} == {60} and len(doc["rows"]) * 60 == made
    assert len(doc["report"]["spans"]) == made == sum(row["calls"] for row in doc["report"]["tools"])
    for row in doc["rows"]:  # the table printed names each tool kept
        assert re.search(rf"^{re.escape(row['name'])}\s+60\s", child.text, re.M), child.text
