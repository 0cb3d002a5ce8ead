"""Shared fixtures: an isolated home for config/state, and a real relay on loopback."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.relay_thread import RelayThread

ROOT = Path(__file__).resolve().parent.parent
VECTORS = ROOT / "tests" / "vectors"


@pytest.fixture(autouse=True, scope="session")
def _isolated_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Tests never read or write the user's real token, logs or exports."""
    home = tmp_path_factory.mktemp("wmcp-home")
    old = os.environ.get("WMCP_TOP_HOME")
    os.environ["WMCP_TOP_HOME"] = str(home)
    yield home
    if old is None:
        os.environ.pop("WMCP_TOP_HOME", None)
    else:
        os.environ["WMCP_TOP_HOME"] = old


@pytest.fixture
def relay_server(tmp_path: Path) -> Iterator[RelayThread]:
    """The real relay on 127.0.0.1, port chosen by the OS, in a background thread."""
    relay = RelayThread(tmp_path)
    try:
        yield relay
    finally:
        relay.close()
