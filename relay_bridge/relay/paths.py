"""Where wmcp-top keeps its files (platformdirs), overridable for tests with WMCP_TOP_HOME."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

APP = "wmcp-top"


def _home(kind: str) -> Path | None:
    root = os.environ.get("WMCP_TOP_HOME")
    return Path(root) / kind if root else None


def config_dir() -> Path:
    return _home("config") or Path(platformdirs.user_config_dir(APP))


def state_dir() -> Path:
    return _home("state") or Path(platformdirs.user_state_dir(APP))


def data_dir() -> Path:
    return _home("data") or Path(platformdirs.user_data_dir(APP))


def log_dir() -> Path:
    return state_dir() / "logs"
