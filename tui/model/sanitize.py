"""Make page text inert before it reaches the screen.

Everything a page sends (tool names, origins, titles, error messages, hints, descriptors) is untrusted. The one
function here turns it into a `rich.text.Text` that Textual shows literally:

- Rich/Textual markup is never parsed: a `Text` object is plain text with no markup, so `[bold red]x[/]`
  shows as those eleven characters;
- C0 control characters (ESC included), DEL and the C1 range become visible escapes: ESC shows as `␛`, other C0
  characters as their Unicode control pictures (`␀`..`␟`), DEL as `␡`, C1 as `\\x9b`-style text;
- bidirectional overrides and other invisible format characters that could reorder or hide text show as
  `\\u202e`-style text;
- also every character that draws nothing or looks like another: default-ignorable code points
  (soft hyphen U+00AD, Hangul fillers U+115F/U+1160/U+3164/U+FFA0, Mongolian U+180B-180F, combining grapheme
  joiner U+034F, variation selectors U+FE00-FE0F and their supplement, tag characters U+E0000-E0FFF, ...),
  the other format characters (U+FFF9-FFFB interlinear annotation, Arabic number signs, ...), spaces other than
  U+0020, line and paragraph separators, and combining marks with no base (at the start or after a space), so
  two different tool names never look identical.

So no byte a page chose reaches the terminal as a control sequence, no page string changes a style, and
nothing a page sends hides in what the screen shows. The rules are relay_bridge.core.inert's, the same for the
headless commands (tests/test_sanitizer.py and tests/vectors/inert.json).
"""

from __future__ import annotations

from rich.text import Text

# The one sanitiser lives in relay_bridge (which imports no rich): the dashboard and every headless line share it.
from relay_bridge.core.inert import inert_str

__all__ = ["inert", "inert_str"]


def inert(value: object, style: str = "", limit: int | None = None, keep_newlines: bool = False) -> Text:
    """THE way page text reaches the screen: a markup-free `Text`, control characters shown as escapes.

    `style` is ours (a theme colour), never taken from the page. `keep_newlines` is for text whose line breaks
    are ours (a descriptor we pretty-printed), never for a page string.
    """
    return Text(inert_str(value, limit, keep_newlines), style=style, no_wrap=False, end="")
