"""A descriptor's weights: the canonical text taken at the C encoder's speed is byte for byte the exact writer's,
for any JSON value (hypothesis), and for the spellings where the two would differ (numbers, non-ASCII keys, lone
surrogates) the exact path is taken."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from relay_bridge.core.canonical import canonical_bytes, canonical_from_text

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
