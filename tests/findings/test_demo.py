"""The demo opens with findings worth reading: its feed holds the diagnosis' classic cases."""

from __future__ import annotations

import itertools

from relay_bridge.findings import diagnose, from_session
from relay_bridge.lanes import demo
from tests.findings.builders import demo_facts, with_demo_facts
from tui.feed import demo_store


def test_the_demo_feed_holds_the_classic_cases() -> None:
    store = with_demo_facts(demo_store(30.0)[0], 30.0)
    found = diagnose([from_session(s) for s in store.sessions.values()])
    seen = {(f.rule, f.session, f.tools) for f in found}
    assert ("images.reencode", demo.SHOP, ("render_preview",)) in seen  # an oversized PNG
    assert ("bloat.repeated-keys", demo.SHOP, ("search_products",)) in seen  # a bloated result
    assert ("bloat.whitespace", demo.SHOP, ("search_products",)) in seen
    assert ("schema.unused", demo.SHOP, ("bulk_import",)) in seen  # an unused heavy tool
    assert ("time.host-gaps", demo.SHOP, ()) in seen  # host gaps that dwarf tool time
    assert ("errors.schema", demo.SHOP, ("add_to_cart",)) in seen
    assert ("repeats", demo.AGENT, ("get_product",)) in seen
    # Ranked by what they save: the image first (tokens a call x calls beats a definition's tokens).
    assert found[0].rule == "images.reencode" and found[0].saving.tokens > 10_000
    unused = next(f for f in found if f.rule == "schema.unused" and f.tools == ("bulk_import",))
    assert 2500 <= unused.evidence["schemaBytes"] <= 3500  # "a tool never called with a 3 KB description"


def test_images_are_sampled_at_most_once_per_tool_per_30_seconds() -> None:
    facts = demo_facts(95.0)
    images = sorted(seq for seq, f in facts[demo.SHOP].items() if f.image is not None)
    ats = {s["seq"]: t for t, frame in demo.frames_until(95.0) if frame["type"] == "spans" and frame["session"] == demo.SHOP for s in frame["spans"]}
    times = [ats[seq] for seq in images]
    assert len(times) >= 2 and all(b - a >= demo.IMAGE_SAMPLE_S - 1 for a, b in itertools.pairwise(times))


def test_facts_take_no_random_numbers_from_the_feed() -> None:
    """With the facts frame on the wire or not, every other frame is the same: screenshots do not move."""
    saved = demo.FACTS_ON_WIRE
    feeds = []
    try:
        for on in (False, True):
            demo.FACTS_ON_WIRE = on
            feeds.append([f for _, f in demo.frames_until(30.0) if f["type"] != "facts"])
    finally:
        demo.FACTS_ON_WIRE = saved
    assert feeds[0] == feeds[1]
