"""A descriptor's weights: the canonical text taken at the C encoder's speed is byte for byte the exact writer's,
for any JSON value (hypothesis), and for the spellings where the two would differ (numbers, non-ASCII keys, lone
surrogates) the exact path is taken."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from relay_bridge.core.canonical import _c_unsafe, canonical_bytes, canonical_from_text

KEYS = st.text(min_size=0, max_size=8)
VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**60), 2**60) | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS, inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=400, deadline=None)
@given(VALUES)
def test_the_fast_path_writes_the_exact_canonical_bytes(value: object) -> None:
    for raw in (json.dumps(value).encode(), json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass")):
        assert canonical_from_text(raw, json.loads(raw)) == canonical_bytes(json.loads(raw))


def test_spellings_the_c_encoder_gets_wrong_take_the_exact_path() -> None:
    astral_and_high = {"\U00010000": 1, "\uffff": 2}  # UTF-16 order puts the astral key first
    cases = [
        b'{"a":1.0}',
        b'{"a":1e-7}',
        b'{"a":12345678901234567890}',
        json.dumps(astral_and_high, ensure_ascii=False).encode(),
        json.dumps(astral_and_high).encode(),  # the same, escaped to ASCII
        b'{"a":"\\ud800"}',
    ]
    for raw in cases:
        value = json.loads(raw)
        assert canonical_from_text(raw, value) == canonical_bytes(value)


def test_the_fast_path_is_refused_exactly_where_a_number_could_be_spelled_otherwise() -> None:
    """A digit beside `.`, `e` or `E`, or 16 digits in a row, anywhere in the text (a string's too: a false match
    only costs the exact path); prose full of `e`, short integers and a 15-digit one keep the fast path."""
    unsafe = [b"1.0", b".5", b"1e5", b"2E-3", b"x1e", b"e1", b"1234567890123456", b'{"a":"v0.2"}', b"NaN", b"\\u00e9", "é".encode()]
    safe = [b'{"description":"three keen trees need free speech"}', b'{"a":123456789012345}', b'{"b":[1,-2,30]}', b"e.e", b"1 e"]
    assert all(_c_unsafe(raw) for raw in unsafe), [raw for raw in unsafe if not _c_unsafe(raw)]
    assert not any(_c_unsafe(raw) for raw in safe), [raw for raw in safe if _c_unsafe(raw)]
