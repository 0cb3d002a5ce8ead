"""The suite guards itself against hangs: a test stuck past pyproject's `timeout` fails with its stack, and the
run goes on to the next test, so a hang costs CI minutes, not its 90-minute limit."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_suite_has_a_timeout_well_under_ci_s_limit() -> None:
    ini = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    assert 0 < float(ini["timeout"]) <= 300


def test_a_hung_test_fails_and_the_run_goes_on(tmp_path: Path) -> None:
    (tmp_path / "test_hang.py").write_text(
        textwrap.dedent("""
        import threading

        def test_hangs():
            threading.Event().wait()  # never set

        def test_after():
            pass
    """)
    )
    # The project's own pytest configuration (plugins, addopts, timeout method), the timeout shortened to 2 s.
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-c", str(ROOT / "pyproject.toml"), "-o", "timeout=2", "-q", str(tmp_path / "test_hang.py")],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert "Timeout (>2.0s)" in run.stdout, run.stdout[-2000:]
    assert "1 failed, 1 passed" in run.stdout, run.stdout[-2000:]


def test_a_hung_async_test_shows_the_await_it_is_stuck_on(tmp_path: Path) -> None:
    # Its thread's stack is only the event loop's select: the tasks' own stacks say where it waits.
    (tmp_path / "conftest.py").write_text("from tests.hangs import tasks_shown_before_a_timeout  # noqa: F401\n")
    (tmp_path / "test_hang.py").write_text(
        textwrap.dedent("""
        import asyncio

        async def stuck_on_an_event_nobody_sets():
            await asyncio.Event().wait()

        async def a_step_of_the_test():
            await stuck_on_an_event_nobody_sets()

        async def test_hangs():
            await a_step_of_the_test()

        async def test_in_time():
            await asyncio.sleep(0)
    """)
    )
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-c", str(ROOT / "pyproject.toml"), "-o", "timeout=3", "-q", "-p", "no:randomly", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert "1 failed, 1 passed" in run.stdout, run.stdout[-3000:]
    shown = run.stdout.split("Captured stderr call")
    assert len(shown) == 2, f"one test's stderr, the hung one's: {run.stdout[-3000:]}"
    # Each await of the chain is a frame of its own (the function's name, not only the line that calls it).
    assert "where each waits" in shown[1], shown[1][-3000:]
    for name in ("test_hangs", "a_step_of_the_test", "stuck_on_an_event_nobody_sets"):
        assert f"in {name}\n" in shown[1], f"{name}: {shown[1][-3000:]}"
