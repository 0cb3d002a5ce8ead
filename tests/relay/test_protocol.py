"""The decoder: every frame type round-trips; bad input becomes a Rejection with a stable code, never an
exception (property-based)."""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from relay_bridge.core import protocol as p
from relay_bridge.core import synth
from relay_bridge.core.store import Store
from tests.frames import frame
from tests.fuzz import examples

SID = "0a1b2c3d"


def test_every_agent_frame_decodes() -> None:
    frames = [
        synth.hello(SID),
        synth.start_frame(SID, [(0, "search", 1.0)]),
        synth.spans_frame(SID, [synth.span(SID, 0, "search", 1.0, 2.0)], floor=0, lost=0),
        {"type": "update", "session": SID, "seq": 0, "blockingMs": 12.5},
        {"type": "ledger", "session": SID, "rev": 3, "ledger": {"sessionId": SID, "hostLocation": "document", "totals": {"unsampledCalls": 2}}},
        synth.tool(SID, "search", 1.0, description="find things", annotations={"readOnlyHint": True}, kept={"readOnlyHint": True}),
        synth.status(SID, "measuring", "measuring.", ["call a tool"], coverage="running"),
        synth.event(SID, 5.0, "visibility", state="hidden"),
        {"type": "bye", "session": SID, "reason": "pagehide"},
    ]
    kinds = [type(p.decode(json.dumps(f))).__name__ for f in frames]
    assert kinds == ["Hello", "Start", "Spans", "Update", "LedgerFrame", "ToolChange", "Status", "Event", "Bye"]


def code(data: bytes | str) -> str:
    result = p.decode(data)
    assert isinstance(result, p.Rejection), result
    return result.code


def test_rejections_have_stable_codes() -> None:
    span = synth.span(SID, 0, "search", 1.0, 2.0)
    assert code(b"{not json") == p.Code.BAD_JSON
    assert code(b'{"type":"hello","agent":"\xff\xfe"}') in (p.Code.BAD_UTF8, p.Code.BAD_JSON)
    assert code('{"type":"teleport"}') == p.Code.UNKNOWN_TYPE
    assert code('{"session":"0a1b2c3d"}') == p.Code.UNKNOWN_TYPE
    assert code(json.dumps({"type": "update", "session": SID, "seq": "1", "blockingMs": 1})) == p.Code.INVALID
    assert code(json.dumps({"type": "update", "session": SID, "seq": 1, "blockingMs": -1})) == p.Code.INVALID
    assert code('{"type":"update","session":"0a1b2c3d","seq":1,"blockingMs":NaN}') == p.Code.BAD_JSON
    assert code('{"type":"update","session":"0a1b2c3d","seq":1,"blockingMs":1e999}') == p.Code.INVALID
    assert code(json.dumps(synth.spans_frame(SID, [span] * 10_000))) == p.Code.TOO_MANY_SPANS
    assert code(json.dumps(synth.tool(SID, "x" * 10_000, 1.0))) == p.Code.LIMIT
    assert code(json.dumps(dict(span, sessionId="NOT-HEX!") and synth.spans_frame(SID, [dict(span, sessionId="NOT-HEX!")]))) == p.Code.INVALID
    assert code(json.dumps(synth.spans_frame(SID, [dict(span, extra="body?")]))) == p.Code.INVALID
    huge = synth.tool(SID, "t", 1.0, description="d" * (p.MAX_DESCRIPTOR_BYTES + 1))
    assert code(json.dumps(huge)) == p.Code.LIMIT
    # An id, secret or kind with a final newline: a look-alike session beside the real one, a line of the page's
    # own in the headless summary, a report file named "0a1b2c3d\n.json" (msgspec's pattern is re.search).
    assert code(json.dumps(synth.hello(SID + "\n"))) == p.Code.INVALID
    assert code(json.dumps(synth.hello(SID, resume="0" * 32 + "\n"))) == p.Code.INVALID
    assert code(json.dumps(synth.event(SID, 1.0, "reset\n"))) == p.Code.INVALID
    assert not isinstance(p.decode(json.dumps(synth.hello(SID, resume="0" * 32))), p.Rejection)
    assert not isinstance(p.decode(json.dumps(synth.event(SID, 1.0, "reset"))), p.Rejection)


def test_rejection_messages_never_echo_page_text() -> None:
    frame = synth.status(SID, "measuring")
    frame["phase"] = "[bold red]\x1b[2J pwned"
    result = p.decode(json.dumps(frame))
    assert isinstance(result, p.Rejection)
    assert "pwned" not in result.message and "\x1b" not in result.message


frames = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=5),
    max_leaves=20,
)
frame_like = st.fixed_dictionaries(
    {"type": st.sampled_from([*list(p.FRAME_TYPES), "nope"]), "session": st.sampled_from([SID, "zz", "0a1b2c3e"])},
    optional={
        "spans": st.lists(frames, max_size=3),
        "seq": frames,
        "phase": frames,
        "name": frames,
        "calls": frames,
        "protocol": st.just(p.PROTOCOL),
        "agent": frames,
        "blockingMs": frames,
        "rev": frames,
        "ledger": frames,
    },
)


# A deep run's 2,000 examples took 79 s alone at load 30, past the suite's 180 s inside a whole pass at that load.
@pytest.mark.timeout(900)
@settings(max_examples=examples(2000), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.binary(max_size=200), frame_like.map(lambda d: json.dumps(d).encode()), frames.map(lambda v: json.dumps(v).encode())))
def test_fuzz_decoder_never_raises_and_every_rejection_is_counted(data: bytes) -> None:
    store = Store()
    store.connect(1)
    store.apply(1, frame(synth.hello(SID)))
    before = store.counters["rejected"]
    result = p.decode(data)
    if isinstance(result, p.Rejection):
        assert result.code in vars(p.Code).values()
        store.reject(1, result)
        assert store.counters["rejected"] == before + 1
        assert store.counters[f"rejected:{result.code}"] >= 1
    else:
        replies = store.apply(1, result)  # a valid frame must apply without raising
        errors = [r for r in replies if isinstance(r, p.ErrorFrame)]
        assert store.counters["rejected"] == before + len(errors)
        msgspec.json.encode(replies)


# -- diagnosis facts (docs/diagnosis-facts.md) ----------------------------------------------------------------

FACTS: dict[str, Any] = {
    "image": {
        "mime": "image/png",
        "width": 2000,
        "height": 1000,
        "bytes": 130000,
        "jpegBytes": 41000,
        "fitBytes": 22000,
        "fitWidth": 1568,
        "fitHeight": 784,
    },
    "bloat": {
        "textBytes": 900,
        "whitespaceBytes": 300,
        "repeatedKeyBytes": 120,
        "repeatedKeyRows": 9,
        "base64Bytes": 0,
        "base64Runs": 0,
        "truncated": True,
    },
    "schema": {"violations": 2, "constraint": "maxLength", "path": "/properties/q/maxLength"},
    "repeat": {"of": 3},
    "refused": {"by": "browser"},
}


def test_facts_decode_single_and_batched_with_snake_case_attributes() -> None:
    one = p.decode(json.dumps({"type": "facts", "session": SID, "seq": 4, "facts": FACTS}))
    assert isinstance(one, p.FactsFrame)
    [item] = one.entries()
    assert item.seq == 4
    assert item.facts.image is not None and item.facts.image.jpeg_bytes == 41000 and item.facts.image.fit_width == 1568
    assert item.facts.bloat is not None and item.facts.bloat.whitespace_bytes == 300 and item.facts.bloat.truncated is True
    assert item.facts.schema == p.SchemaFacts(2, "maxLength", "/properties/q/maxLength")
    assert item.facts.repeat == p.RepeatFacts(3) and item.facts.refused == p.RefusedFacts("browser")
    # camelCase on the wire, both ways
    # encoded as the short form the agent sends a relay that reads rows: the bloat's zero figures left out
    short = {**FACTS, "bloat": {k: v for k, v in FACTS["bloat"].items() if v != 0 or k == "textBytes"}}
    assert short["bloat"] != FACTS["bloat"]
    assert json.loads(p.encode(item.facts)) == short
    many = p.decode(json.dumps({"type": "facts", "session": SID, "items": [{"seq": s, "facts": {"repeat": {"of": 0}}} for s in range(1, 501)]}))
    assert isinstance(many, p.FactsFrame) and [i.seq for i in many.entries()] == list(range(1, 501))
    assert p.decode(json.dumps({"type": "facts", "session": SID, "seq": 0, "facts": {}})).entries()[0].facts == p.Facts()  # type: ignore[union-attr]  # a valid frame decodes to a struct, never a Rejection, here


def _facts(**over: object) -> str:
    return json.dumps({"type": "facts", "session": SID, "seq": 1, "facts": {**FACTS, **over}})


def test_facts_are_validated_as_strictly_as_every_other_frame() -> None:
    bad_image: dict[str, object] = dict(FACTS["image"])
    assert code(_facts(image={**bad_image, "mime": "image/CANARY-7f3a9c"})) == p.Code.INVALID  # only sniffed formats
    assert code(_facts(image={**bad_image, "jpegBytes": -1})) == p.Code.INVALID
    assert code(_facts(image={**bad_image, "width": 1.5})) == p.Code.INVALID
    assert code(_facts(image={**bad_image, "extra": 1})) == p.Code.INVALID
    assert code(_facts(bloat={**FACTS["bloat"], "whitespaceBytes": float("inf")})) in (p.Code.INVALID, p.Code.BAD_JSON)
    assert code(_facts(schema={"violations": 1, "constraint": "oneOf"})) == p.Code.INVALID
    assert code(_facts(schema={"violations": 1, "constraint": "type", "path": "properties/x"})) == p.Code.INVALID  # a pointer
    assert code(_facts(schema={"violations": 1, "constraint": "type", "path": "/" + "a" * 256})) == p.Code.LIMIT
    assert code(_facts(repeat={"of": -1})) == p.Code.INVALID
    assert code(_facts(refused={"by": "page"})) == p.Code.INVALID
    assert code(_facts(text="CANARY-7f3a9c")) == p.Code.INVALID  # unknown members are refused
    assert code(json.dumps({"type": "facts", "session": SID, "seq": 1})) == p.Code.INVALID  # neither form
    assert code(json.dumps({"type": "facts", "session": SID, "seq": 1, "facts": {}, "items": []})) == p.Code.INVALID  # both
    assert code(json.dumps({"type": "facts", "session": SID, "facts": {}})) == p.Code.INVALID
    items = [{"seq": s, "facts": {}} for s in range(501)]
    assert code(json.dumps({"type": "facts", "session": SID, "items": items})) == p.Code.TOO_MANY_SPANS
    assert code(json.dumps({"type": "facts", "session": "nothex!!", "seq": 1, "facts": {}})) == p.Code.INVALID
