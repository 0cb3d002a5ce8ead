"""Make page text inert before it reaches the screen.

Everything a page sends (tool names, origins, titles, error messages, hints, descriptors) is untrusted. The one
function here turns it into a `rich.text.Text` that Textual shows literally:

- Rich/Textual markup is never parsed: a `Text` object is plain text with no markup, so `[bold red]x[/]`
  shows as those eleven characters;
- C0 control characters (ESC included), DEL and the C1 range become visible escapes: ESC shows as `␛`, other C0
  characters as their Unicode control pictures (`␀`..`␟`), DEL as `␡`, C1 as `\\x9b`-style text;
- bidirectional overrides and other invisible format characters that could reorder or hide text show as
  `\\u202e`-style text.

So no byte a page chose reaches the terminal as a control sequence, and no page string changes a style.
"""

from __future__ import annotations

import re

from rich.text import Text

_BIDI_AND_INVISIBLE = "\u061c\u200b\u200c\u200d\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2060\u2061\u2062\u2063\u2064\u2066\u2067\u2068\u2069\ufeff"
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f" + _BIDI_AND_INVISIBLE + "\ud800-\udfff]")


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
    """The page string with every control and invisible format character made visible (still a plain str:
    only for places that never parse markup, such as file names or `Text` construction)."""
    text = value if isinstance(value, str) else str(value)
    if limit is not None and len(text) > limit:
        text = text[: max(0, limit - 1)] + "…"
    if keep_newlines:
        return "\n".join(_UNSAFE.sub(_visible, line) for line in text.split("\n"))
    return _UNSAFE.sub(_visible, text)


def inert(value: object, style: str = "", limit: int | None = None, keep_newlines: bool = False) -> Text:
    """THE way page text reaches the screen: a markup-free `Text`, control characters shown as escapes.

    `style` is ours (a theme colour), never taken from the page. `keep_newlines` is for text whose line breaks
    are ours (a descriptor we pretty-printed), never for a page string.
    """
    return Text(inert_str(value, limit, keep_newlines), style=style, no_wrap=False, end="")
