"""Send the relay's and websockets' log lines to a file in the state directory, never to the terminal."""

from __future__ import annotations

import logging
import logging.handlers
from pathlib import Path


def configure(path: Path, level: int = logging.INFO) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    handler = logging.handlers.RotatingFileHandler(path, maxBytes=2_000_000, backupCount=2, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
    root = logging.getLogger("wmcp_top")
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
    root.propagate = False
