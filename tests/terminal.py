"""A real terminal for tests: a private tmux server (its own socket name) running bash at a given size, driven
with send-keys and read back with capture-pane. Shared by tests/tui/test_tmux.py and
tests/adversary/test_terminal.py."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.liveness import LIVENESS_S

ROOT = Path(__file__).resolve().parents[1]


class Tmux:
    def __init__(self, home: Path, width: int = 120, height: int = 36) -> None:
        self.socket = f"wmcp-test-{uuid.uuid4().hex[:8]}"
        self.home = home
        env = {k: v for k, v in os.environ.items() if not k.startswith("TMUX")}
        env.update(WMCP_TOP_HOME=str(home), TERM="xterm-256color", PS1="$ ", PATH=os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", ""))
        env.pop("NO_COLOR", None)
        self.env = env
        subprocess.run(
            ["tmux", "-L", self.socket, "-f", "/dev/null", "new-session", "-d", "-x", str(width), "-y", str(height), "bash", "--norc", "--noprofile"],
            check=True,
            env=env,
            cwd=ROOT,
        )
        subprocess.run(["tmux", "-L", self.socket, "set-option", "-g", "status", "off"], check=True, env=env)

    def run(self, *args: str) -> str:
        return subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True, env=self.env, check=True).stdout

    def type(self, text: str) -> None:
        self.run("send-keys", "-l", text)
        self.run("send-keys", "Enter")

    def key(self, key: str) -> None:
        self.run("send-keys", key)

    def screen(self, escapes: bool = False) -> str:
        return self.run("capture-pane", "-p", *(["-e"] if escapes else []))

    def alternate_on(self) -> bool:
        return self.run("display-message", "-p", "#{alternate_on}").strip() == "1"

    def wait(self, predicate, timeout: float = LIVENESS_S, what: str = "screen condition") -> str:
        deadline = time.monotonic() + timeout
        text = self.screen()
        while not predicate(text):
            if time.monotonic() > deadline:
                raise AssertionError(f"{what} not met in {timeout}s; screen was:\n{text}")
            time.sleep(0.1)
            text = self.screen()
        return text

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True, env=self.env)


@pytest.fixture
def tmux(tmp_path: Path) -> Iterator[Tmux]:
    term = Tmux(tmp_path)
    try:
        yield term
    finally:
        term.close()


def exited(screen: str) -> bool:
    return re.search(r"^EXIT=\d+", screen, re.M) is not None


def cmd(args: str) -> str:
    """The dashboard's command line for the shell in the pane, followed by its exit code (`EXIT=N`)."""
    return f"{sys.executable} -m tui.cli {args}; echo EXIT=$?"


def write_token(home: Path, token: str) -> None:
    """The relay token `wmcp-top` reads under WMCP_TOP_HOME, so a test's sockets can hold it."""
    (home / "config").mkdir(parents=True, exist_ok=True)
    (home / "config" / "token").write_text(token + "\n")
