"""Make page text inert before it reaches the screen.

Everything a page sends (tool names, origins, titles, error messages, hints, descriptors) is untrusted. The one
function here turns it into a `rich.text.Text` that Textual shows literally:

- Rich/Textual markup is never parsed: a `Text` object is plain text with no markup, so `[bold red]x[/]`
  shows as those eleven characters;
- C0 control characters (ESC included), DEL and the C1 range become visible escapes: ESC shows as `␛`, other C0
  characters as their Unicode control pictures (`␀`..`␟`), DEL as `␡`, C1 as `\\x9b`-style text;
- bidirectional overrides and other invisible format characters that could reorder or hide text show as
  `\\u202e`-style text;
- on screen, also every character that draws nothing or looks like another: default-ignorable code points
  (soft hyphen U+00AD, Hangul fillers U+115F/U+1160/U+3164/U+FFA0, Mongolian U+180B-180F, combining grapheme
  joiner U+034F, variation selectors U+FE00-FE0F and their supplement, tag characters U+E0000-E0FFF, ...),
  the other format characters (U+FFF9-FFFB interlinear annotation, Arabic number signs, ...), spaces other than
  U+0020, line and paragraph separators, and combining marks with no base (at the start or after a space), so
  two different tool names never look identical.

So no byte a page chose reaches the terminal as a control sequence, no page string changes a style, and
nothing a page sends hides in what the screen shows.
"""

from __future__ import annotations

import re
import unicodedata

from rich.text import Text

from relay_bridge.inert import inert_str as _inert_core

__all__ = ["inert", "inert_str"]

# Default_Ignorable_Code_Point (Unicode DerivedCoreProperties) not already shown by relay_bridge.inert, the
# remaining format (Cf) characters that draw nothing, and look-alike spaces and separators.
_HIDDEN = re.compile(
    "["
    "\u00a0\u00ad\u034f\u0600-\u0605\u06dd\u070f\u0890\u0891\u08e2\u115f\u1160\u1680\u17b4\u17b5"
    "\u180b-\u180f\u2000-\u200a\u2028\u2029\u202f\u205f-\u206f\u3000\u3164\ufe00-\ufe0f\uffa0"
    "\ufff0-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0000-\U000e0fff"
    "]"
)


def _escape(ch: str) -> str:
    code = ord(ch)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def _is_mark(ch: str) -> bool:
    return unicodedata.category(ch) in ("Mn", "Mc", "Me")


def _show_hidden(text: str) -> str:
    if text.isascii():
        return text
    text = _HIDDEN.sub(lambda m: _escape(m.group(0)), text)
    if not any(_is_mark(ch) for ch in text):
        return text
    out: list[str] = []
    base = False  # is there a character before this one for a mark to draw on?
    for i, ch in enumerate(text):
        if _is_mark(ch):
            out.append(ch if base else _escape(ch))
            continue  # a mark after a mark keeps the base's answer (stacked accents)
        out.append(ch)
        # escapes we wrote ("\\u00ad") and spaces are no base; neither is punctuation
        base = not ch.isspace() and (ch.isalnum() or not ch.isascii()) and not _after_escape(text, i)
    return "".join(out)


def _after_escape(text: str, i: int) -> bool:
    """Whether text[i] is the last character of a `\\uXXXX` / `\\UXXXXXXXX` escape."""
    return (i >= 5 and text[i - 5 : i - 3] == "\\u" and all(c in "0123456789abcdef" for c in text[i - 3 : i + 1])) or (
        i >= 9 and text[i - 9 : i - 7] == "\\U" and all(c in "0123456789abcdef" for c in text[i - 7 : i + 1]))


def inert_str(value: object, limit: int | None = None, keep_newlines: bool = False) -> str:
    """relay_bridge.inert.inert_str, plus what draws nothing on a screen shown as `\\uXXXX` (see above)."""
    return _show_hidden(_inert_core(value, limit, keep_newlines))


def inert(value: object, style: str = "", limit: int | None = None, keep_newlines: bool = False) -> Text:
    """THE way page text reaches the screen: a markup-free `Text`, control characters shown as escapes.

    `style` is ours (a theme colour), never taken from the page. `keep_newlines` is for text whose line breaks
    are ours (a descriptor we pretty-printed), never for a page string.
    """
    return Text(inert_str(value, limit, keep_newlines), style=style, no_wrap=False, end="")
