"""Page text made inert for a terminal: every control and invisible format character shown, never obeyed.

Everything a page sends (tool names, origins, titles, messages) is untrusted. `inert_str` turns it into text
that cannot move the cursor, change a style, retitle the terminal or reorder what is around it. The dashboard
wraps it in a markup-free Rich Text (tui/sanitize.py); the headless commands print through `InertStream`,
so no line they write can carry a page's escape sequence either.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
import sys
from typing import Any, TextIO

# U+2028 and U+2029 end a line for str.splitlines() and many log readers: a page must not start a line of ours.
_BIDI_AND_INVISIBLE = "\u2028\u2029\u061c\u200b\u200c\u200d\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2060\u2061\u2062\u2063\u2064\u2066\u2067\u2068\u2069\ufeff"
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f" + _BIDI_AND_INVISIBLE + "\ud800-\udfff]")
# What our own output uses for layout; everything else in the C0 range is shown.
_UNSAFE_KEEP_LAYOUT = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f" + _BIDI_AND_INVISIBLE + "\ud800-\udfff]")


def _visible(match: re.Match[str]) -> str:
    ch = match.group(0)
    code = ord(ch)
    if code == 0x1B:
        return "␛"
    if code < 0x20:
        return chr(0x2400 + code)  # control pictures: ␀ ␁ … ␟
    if code == 0x7F:
        return "␡"
    if code <= 0x9F:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}"


def inert_str(value: object, limit: int | None = None, keep_newlines: bool = False) -> str:
    """The string with every control and invisible format character made visible. `keep_newlines` is for text
    whose line breaks are ours (a descriptor we pretty-printed), never for a page string."""
    text = value if isinstance(value, str) else str(value)
    if limit is not None and len(text) > limit:
        text = text[: max(0, limit - 1)] + "…"
    if keep_newlines:
        return "\n".join(_UNSAFE.sub(_visible, line) for line in text.split("\n"))
    return _UNSAFE.sub(_visible, text)


class InertStream:
    """A text stream that shows control characters instead of writing them; newline, carriage return and tab
    (our own layout: tables, the progress line) pass."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(_UNSAFE_KEEP_LAYOUT.sub(_visible, text))
        return len(text)

    def flush(self) -> None:
        self._stream.flush()

    def isatty(self) -> bool:
        return self._stream.isatty()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


@contextmanager
def inert_output() -> Iterator[None]:
    """stdout and stderr through InertStream for the duration (the headless commands)."""
    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = InertStream(out), InertStream(err)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = out, err
