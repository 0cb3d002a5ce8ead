"""Page text made inert for a terminal: every control and invisible format character shown, never obeyed.

Everything a page sends (tool names, origins, titles, messages) is untrusted. `inert_str` turns it into text
that cannot move the cursor, change a style, retitle the terminal or reorder what is around it. The dashboard
wraps it in a markup-free Rich Text (tui/model/sanitize.py); the headless commands print through `InertStream`,
so no line they write can carry a page's escape sequence either.
"""

from __future__ import annotations

import re
import sys
import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO

# Everything that draws nothing, or draws like something else, shown as `\uXXXX`: the Unicode categories Cf
# (format: soft hyphen, zero-width and bidi controls, word joiner, BOM, tags, ...), Co (private use), Cs (lone
# surrogates), Zl/Zp (U+2028/U+2029 end a line for str.splitlines() and many log readers), every space but
# U+0020, and the Default_Ignorable_Code_Points outside Cf (combining grapheme joiner, Hangul fillers, Mongolian
# and other variation selectors, the unassigned ignorable ranges). tests/test_sanitizer.py checks this class
# against unicodedata, so a newer Unicode cannot add a Cf character that slips through unnoticed.
_HIDDEN = (
    "\u00a0\u00ad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u115f\u1160\u1680\u17b4\u17b5"
    "\u180b-\u180f\u2000-\u200f\u2028-\u202f\u205f-\u206f\u3000\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufffb"
    "\ue000-\uf8ff\ud800-\udfff"
    "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0000-\U000e0fff\U000f0000-\U0010ffff"
)
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f" + _HIDDEN + "]")
# What our own output uses for layout (newline, carriage return for a progress line, tab); everything else shown.
_UNSAFE_KEEP_LAYOUT = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f" + _HIDDEN + "]")


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
    return _escape(ch)


def _escape(ch: str) -> str:
    code = ord(ch)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def _is_mark(ch: str) -> bool:
    return unicodedata.category(ch) in ("Mn", "Mc", "Me")


def _lone_marks(text: str) -> str:
    """Combining marks with nothing to draw on (at the start, after a space or an escape) shown as escapes: two
    different names never look identical. A mark after a mark keeps the base's answer (stacked accents)."""
    if text.isascii() or not any(_is_mark(ch) for ch in text):
        return text
    out: list[str] = []
    base = False  # is there a character before this one for a mark to draw on?
    for i, ch in enumerate(text):
        if _is_mark(ch):
            out.append(ch if base else _escape(ch))
            continue
        out.append(ch)
        # escapes we wrote ("\\u00ad") and spaces are no base; neither is punctuation
        base = not ch.isspace() and (ch.isalnum() or not ch.isascii()) and not _after_escape(text, i)
    return "".join(out)


def _after_escape(text: str, i: int) -> bool:
    """Whether text[i] is the last character of a `\\uXXXX` / `\\UXXXXXXXX` escape."""
    return (i >= 5 and text[i - 5 : i - 3] == "\\u" and all(c in "0123456789abcdef" for c in text[i - 3 : i + 1])) or (
        i >= 9 and text[i - 9 : i - 7] == "\\U" and all(c in "0123456789abcdef" for c in text[i - 7 : i + 1])
    )


def inert_str(value: object, limit: int | None = None, keep_newlines: bool = False) -> str:
    """THE sanitiser, for the dashboard (tui/model/sanitize.py wraps it in a markup-free Text) and every headless line:
    every control character shown as a picture or escape (CR and LF too: page text never starts a line), every
    invisible or look-alike character as `\\uXXXX`. `keep_newlines` is for text whose line breaks are ours (a
    descriptor we pretty-printed), never for a page string."""
    text = value if isinstance(value, str) else str(value)
    if limit is not None and len(text) > limit:
        text = text[: max(0, limit - 1)] + "…"
    if keep_newlines:
        return "\n".join(_lone_marks(_UNSAFE.sub(_visible, line)) for line in text.split("\n"))
    return _lone_marks(_UNSAFE.sub(_visible, text))


class InertStream:
    """A text stream that shows control characters instead of writing them; newline, carriage return and tab
    (our own layout: tables, the progress line) pass."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(_lone_marks(_UNSAFE_KEEP_LAYOUT.sub(_visible, text)))
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
