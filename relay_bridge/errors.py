"""The one way a command fails on the user's behalf: a `UsageError` anywhere, printed by `fail` as one line on
stderr, exit code 2 (harlequin's exception module is the model)."""

from __future__ import annotations

import sys


class UsageError(Exception):
    """A problem the user can fix; printed as one line, exit code 2."""


def fail(message: str) -> int:
    print(f"wmcp-top: {message}", file=sys.stderr)
    return 2
