"""A descriptor nested past MAX_DESCRIPTOR_DEPTH is refused at the door. One about 1,000 levels deep (2 KB of
brackets) crashed the dashboard's inspector and the relay's exit reports (RecursionError in the standard
library's recursive JSON code): everything downstream of `protocol.decode`, live and in replay, walks a
descriptor no deeper than the limit."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from relay_bridge.cli import write_reports
from relay_bridge.core import protocol as p
from relay_bridge.core import synth
from relay_bridge.relay.server import Relay
from tests.liveness import LIVENESS_S
from tests.relay.conftest import open_session, recv_json, send_spans

SID = "de9e0001"


def tool_frame(name: str, depth: int) -> str:
    """A tool frame whose descriptor nests `depth` levels (its own object is level 1, the input schema 2), written
    as text: the standard library's encoder cannot write the deep ones either."""
    frame = synth.tool(SID, name, 1.0, schema={"type": "object", "default": "DEEP"})
    return json.dumps(frame).replace('"DEEP"', "[" * (depth - 2) + "]" * (depth - 2))


def schema(depth: int) -> dict[str, Any]:
    inner: Any = []
    for _ in range(depth - 3):
        inner = [inner]
    return {"type": "object", "default": inner}


def test_depth_counts_arrays_and_objects_never_brackets_in_strings() -> None:
    assert not p.nested_deeper_than(json.dumps(schema(p.MAX_DESCRIPTOR_DEPTH)).encode(), p.MAX_DESCRIPTOR_DEPTH - 1)
    assert p.nested_deeper_than(json.dumps(schema(p.MAX_DESCRIPTOR_DEPTH + 1)).encode(), p.MAX_DESCRIPTOR_DEPTH - 1)
    text = json.dumps({"a": "[{" * 500, "b": ['"]]}}\\"' * 100, {"c": "\\\\"}]}).encode()
    assert not p.nested_deeper_than(text, 3) and p.nested_deeper_than(text, 2)


def _depth(value: Any) -> int:
    if isinstance(value, list):
        return 1 + max(map(_depth, value), default=0)
    if isinstance(value, dict):
        return 1 + max(map(_depth, value.values()), default=0)
    return 0


# Strings made of what the check reads (brackets, quotes, backslashes) and what JSON escapes.
_TRICKY = st.text(alphabet='[]{}"\\/\n\u2028ab', max_size=12)
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | _TRICKY,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TRICKY, inner, max_size=3),
    max_leaves=40,
)


@settings(max_examples=400, deadline=None)
@given(value=_JSON, ascii_only=st.booleans(), spaced=st.booleans())
def test_the_depth_check_agrees_with_a_walk_of_the_decoded_value(value: Any, ascii_only: bool, spaced: bool) -> None:
    raw = json.dumps(value, ensure_ascii=ascii_only, separators=(", ", ": ") if spaced else (",", ":")).encode()
    depth = _depth(value)
    for limit in {0, 1, 2, max(0, depth - 1), depth, depth + 1}:
        assert p.nested_deeper_than(raw, limit) == (depth > limit), (raw, limit, depth)


async def test_a_deeply_nested_descriptor_is_refused_and_the_deepest_accepted_one_is_reported(relay: Relay, tmp_path: Path) -> None:
    ws = await open_session(relay, SID)
    for depth in (p.MAX_DESCRIPTOR_DEPTH + 1, 500):
        await ws.send(tool_frame(f"deep{depth}", depth))
        reply = await asyncio.wait_for(recv_json(ws), LIVENESS_S)  # an accepted tool frame is never answered
        assert (reply["type"], reply["code"]) == ("error", p.Code.LIMIT), reply
        assert "nested over" in reply["message"]
    # Deeper than msgspec itself will go (its recursion limit): refused as undecodable, still an answer.
    await ws.send(tool_frame("deep20000", 20_000))
    assert (await asyncio.wait_for(recv_json(ws), LIVENESS_S))["code"] == p.Code.BAD_JSON
    await ws.send(tool_frame("deepest", p.MAX_DESCRIPTOR_DEPTH))
    await send_spans(ws, SID, range(3), tool="deepest")  # acked: the tool frame before it was applied
    session = relay.store.sessions[SID]
    assert sorted(session.tools) == ["deepest"]
    # The exit reports of `wmcp-top relay --report-on-exit`, which the 975-level descriptor failed mid-write.
    written = write_reports(relay.store, tmp_path / "reports")
    capture = json.loads((tmp_path / "reports" / "capture.json").read_text())
    assert len(written) == 3 and capture["format"].startswith("wmcp-top-capture/")
    await ws.close()
