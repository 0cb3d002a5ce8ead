"""The one exception the footprint command turns into `wmcp-top: MESSAGE` and exit code 2."""

from __future__ import annotations


class FootprintError(Exception):
    """Input or output the user can fix (a refused file, a limit, a bad shape). The text is one line."""
