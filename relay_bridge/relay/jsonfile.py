"""Read a JSON file a user named, turning every way it can go wrong into one clear sentence."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def read_json(path: Path, what: str, error: type[Exception]) -> Any:
    """The parsed file; `error(message)` when it is missing, unreadable or not JSON. `what` names it ("cases file")."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise error(f"no such {what}: {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise error(f"cannot read {what} {path}: {getattr(exc, 'strerror', None) or exc}") from None
    except ValueError:
        raise error(f"{what} {path} is not JSON") from None
