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
