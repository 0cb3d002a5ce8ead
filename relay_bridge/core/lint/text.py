"""What a model reads in a descriptor string, and what a reader cannot see in it.

Page text hides things two ways: characters that render as nothing (zero-width, format and tag characters,
variation selectors, fillers) and characters that reorder what renders (bidirectional embeddings, overrides and
isolates). `hidden` finds both, leaving out the few places where such a character is ordinary writing (a joiner
inside an emoji sequence or between letters of a script that joins, a variation selector after a symbol, a
byte-order mark at the start). `plain` is the text the phrase rules read: tag characters decoded in place, every
invisible character dropped, compatibility forms folded (NFKC), case folded and separators collapsed, so
"ig<U+200B>nore", "IGNORE", "ignore_previous" and "ｉｇｎｏｒｅ" all read "ignore". `squeezed` keeps letters and digits
only, for a phrase spelled out letter by letter ("i g n o r e") or split by punctuation.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterator
from typing import Any

BIDI = frozenset([*range(0x202A, 0x202F), *range(0x2066, 0x206A)])  # embeddings, overrides, isolates
TAG_FIRST, TAG_LAST = 0xE0000, 0xE007F
# Default-ignorable code points that are not of category Cf (which `invisible` reads from unicodedata): the
# combining grapheme joiner, Hangul fillers, Khmer inherent vowels, Mongolian variation selectors, variation
# selectors and their supplement, and the reserved default-ignorable blocks.
_IGNORABLE = (
    (0x034F, 0x034F),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),
    (0xFFA0, 0xFFA0),
    (0xFFF0, 0xFFF8),
    (0xE0080, 0xE0FFF),
)
_IGNORABLE_SET = frozenset(cp for lo, hi in _IGNORABLE if hi < 0xE0080 for cp in range(lo, hi + 1))
_JOINERS = frozenset([0x200B, 0x200C, 0x200D, 0x034F, *range(0x180B, 0x1810)])
_VS = frozenset([*range(0xFE00, 0xFE10), *range(0xE0100, 0xE01F0)])


@functools.lru_cache(maxsize=4096)
def invisible(cp: int) -> bool:
    """Renders as nothing (or only steers rendering): format characters, default-ignorables, tags."""
    if cp < 0xAD:
        return False
    if cp in _IGNORABLE_SET or TAG_FIRST <= cp <= 0xE0FFF:  # tags, the VS supplement, the reserved block
        return True
    return unicodedata.category(chr(cp)) == "Cf"


def _pictographic(ch: str) -> bool:
    cp = ord(ch)
    return 0x1F000 <= cp <= 0x1FAFF or 0x2190 <= cp <= 0x2BFF or unicodedata.category(ch) in ("So", "Sk", "Sm")


def _script_letter(ch: str) -> bool:
    """A letter or mark of a script other than ASCII's: where joiners and zero-width spaces are ordinary writing
    (Persian and Indic joiners, Thai and Khmer word breaks)."""
    return ord(ch) > 0x7F and unicodedata.category(ch)[0] in ("L", "M")


def _ordinary(text: str, i: int) -> bool:
    """Is the invisible character at `i` part of ordinary writing? Decided by its neighbours only."""
    cp = ord(text[i])
    before = text[i - 1] if i > 0 else ""
    after = text[i + 1] if i + 1 < len(text) else ""
    if cp == 0xFEFF:
        return i == 0
    if cp in _VS:
        # one selector after a symbol, a digit (keycaps) or an ideograph; a run of them can spell bytes
        if not before or ord(before) in _VS or (after and ord(after) in _VS):
            return False
        return before.isdigit() or before in "#*" or _pictographic(before) or _script_letter(before)
    emoji_before = bool(before) and (_pictographic(before) or ord(before) in _VS or 0x1F3FB <= ord(before) <= 0x1F3FF)
    if cp == 0x200D and emoji_before and after and _pictographic(after):
        return True
    if cp in _JOINERS and before and after:
        return _script_letter(before) and _script_letter(after)
    if TAG_FIRST <= cp <= TAG_LAST:
        return _flag_tag(text, i)
    return False


_FLAG_TAGS = frozenset([*range(0xE0030, 0xE003A), *range(0xE0061, 0xE007B)])


def _flag_tag(text: str, i: int) -> bool:
    """Part of an emoji subdivision flag: a black flag, 2-7 lowercase letter or digit tags, a cancel tag. Any
    other run of tags can spell text."""
    start = i
    while start > 0 and TAG_FIRST <= ord(text[start - 1]) <= TAG_LAST:
        start -= 1
    end = i
    while end + 1 < len(text) and TAG_FIRST <= ord(text[end + 1]) <= TAG_LAST:
        end += 1
    run = [ord(c) for c in text[start : end + 1]]
    return start > 0 and text[start - 1] == "\U0001f3f4" and 3 <= len(run) <= 8 and run[-1] == TAG_LAST and all(c in _FLAG_TAGS for c in run[:-1])


class Hidden:
    """The hidden characters of one string, by kind."""

    __slots__ = ("bidi", "invisible", "tags")

    def __init__(self) -> None:
        self.bidi: list[int] = []
        self.tags: list[int] = []
        self.invisible: list[int] = []


def hidden(text: str) -> Hidden:
    out = Hidden()
    if text.isascii():  # nothing invisible below U+0080 but controls, which the sanitiser shows
        return out
    for i, ch in enumerate(text):
        cp = ord(ch)
        if cp < 0xAD or not invisible(cp):
            continue
        if cp in BIDI:
            out.bidi.append(cp)
        elif not _ordinary(text, i):
            (out.tags if TAG_FIRST <= cp <= TAG_LAST else out.invisible).append(cp)
    return out


def tag_text(text: str) -> str:
    """ASCII spelled by tag characters (U+E0020..U+E007E), which render as nothing."""
    return "".join(chr(ord(c) - 0xE0000) for c in text if 0xE0020 <= ord(c) <= 0xE007E)


_DOTS = str.maketrans({"\u3002": ".", "\uff0e": ".", "\uff61": ".", "\u2024": "."})
_SEPARATORS = re.compile(r"[\s_*~`|^\\\-]+")
_NOT_WORD = re.compile(r"[\W_]+")


@functools.lru_cache(maxsize=64)  # one string is read by several rules
def visible(text: str) -> str:
    """Tag characters decoded in place (what is hidden still reaches the model), other invisibles dropped, NFKC."""
    if text.isascii():  # NFKC and the dot folding leave ASCII as it is
        return text
    kept = []
    for ch in text:
        cp = ord(ch)
        if 0xE0020 <= cp <= 0xE007E:
            kept.append(chr(cp - 0xE0000))
        elif cp < 0xAD or not invisible(cp):
            kept.append(ch)
    return unicodedata.normalize("NFKC", "".join(kept)).translate(_DOTS)


# The three readings below take `visible(text)`, worked out once per string.


def soft(shown: str) -> str:
    """Visible text, case folded, whitespace runs collapsed: what the tool-poisoning phrases read (they name
    files and tools, whose underscores and dashes must stay)."""
    return " ".join(shown.casefold().split())


def plain(shown: str) -> str:
    """Visible text, case folded, separators (spaces, underscores, dashes, markup emphasis) collapsed to one
    space: what the injection phrases read too."""
    return _SEPARATORS.sub(" ", shown.casefold()).strip()


def squeezed(shown: str) -> str:
    """Letters and digits only: a phrase spelled letter by letter or split by punctuation reads as one run."""
    return _NOT_WORD.sub("", shown.casefold())


# The same three readings at once, for the text rules, which read all three of every string: one casefold, and on
# ASCII text a byte table in place of each pattern (a tenth of their cost). Equal to the functions above for every
# text (tests/test_lint.py): on ASCII `[\W_]` is every character but a letter or a digit, and `str.split()`
# splits where `\s` matches (both read Py_UNICODE_ISSPACE).
_ASCII_NOT_ALNUM = bytes(c for c in range(128) if not chr(c).isalnum())
_ASCII_SEPARATOR_SPACES = bytes.maketrans(b"_*~`|^\\-", b" " * 8)


def readings(shown: str) -> tuple[str, str, str]:
    """(soft, plain, squeezed) of `shown`."""
    folded = shown.casefold()
    if not folded.isascii():
        return " ".join(folded.split()), _SEPARATORS.sub(" ", folded).strip(), _NOT_WORD.sub("", folded)
    data = folded.encode("ascii")
    plain_ = " ".join(data.translate(_ASCII_SEPARATOR_SPACES).decode("ascii").split())
    return " ".join(folded.split()), plain_, data.translate(None, _ASCII_NOT_ALNUM).decode("ascii")


_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_NOT_ALNUM = re.compile(r"[^A-Za-z0-9]+")
_CACHED_NAME = 128  # names up to this long are remembered (the spec's longest tool name): a few hundred KB at most


def words(name: str) -> tuple[str, ...]:
    """A name's words, lowercase: camelCase, snake_case, kebab-case, dotted and slashed names split alike. The
    rules split one definition's names ten times, and 64 sessions of a site register the same names."""
    return _cached_words(name) if len(name) <= _CACHED_NAME else _words(name)


@functools.lru_cache(maxsize=2048)
def _cached_words(name: str) -> tuple[str, ...]:
    return _words(name)


def _words(name: str) -> tuple[str, ...]:
    return tuple(w for w in _NOT_ALNUM.split(_CAMEL.sub(" ", name).lower()) if w)


def pointer(parts: list[str | int]) -> str:
    """An RFC 6901 JSON pointer."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def strings(value: Any, path: list[str | int]) -> Iterator[tuple[list[str | int], str, bool]]:
    """Every string in `value` as (path, text, is_key), in document order. Iterative: the relay caps nesting, the
    walk needs no recursion."""
    stack: list[tuple[Any, list[str | int]]] = [(value, path)]
    while stack:
        node, at = stack.pop()
        if isinstance(node, str):
            yield at, node, False
        elif isinstance(node, dict):
            for key in node:
                yield [*at, key], key, True
            for key in reversed(list(node)):
                stack.append((node[key], [*at, key]))
        elif isinstance(node, list):
            for i in range(len(node) - 1, -1, -1):
                stack.append((node[i], [*at, i]))
