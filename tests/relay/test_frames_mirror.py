"""page_agent/src/transport/frames.js mirrors relay_bridge/core/protocol.py: the same frame types, and no frame of
the wire protocol is built anywhere else in the agent."""

from __future__ import annotations

import json
import re
import typing
from pathlib import Path

import msgspec

from relay_bridge.core import protocol as p

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "page_agent" / "src"
FRAMES = (SRC / "transport" / "frames.js").read_text()


def js_list(name: str) -> list[str]:
    m = re.search(rf"export const {name} = (\[[^\]]*\])", FRAMES)
    assert m, f"frames.js exports no {name}"
    return json.loads(m.group(1))


def tag(struct: type) -> str:
    return str(struct.__struct_config__.tag)  # type: ignore[attr-defined]  # a Struct class, typed here as a plain type


def test_the_agent_s_frames_are_protocol_py_s_in_its_order() -> None:
    assert js_list("AGENT_FRAMES") == [tag(s) for s in typing.get_args(p.AgentFrame)]


def test_the_relay_s_frames_are_named_on_both_sides() -> None:
    assert set(js_list("RELAY_FRAMES")) == {tag(s) for s in (p.Welcome, p.Ack, p.Command, p.Watch, p.ErrorFrame)}


def test_one_protocol_version_on_both_sides() -> None:
    assert re.search(r'export const PROTOCOL = "([^"]+)"', FRAMES).group(1) == p.PROTOCOL


def test_every_frame_the_agent_sends_is_built_in_frames_js() -> None:
    kinds = "|".join(js_list("AGENT_FRAMES") + js_list("RELAY_FRAMES"))
    literal = re.compile(rf'\btype:\s*"({kinds})"')
    elsewhere = {
        f"{path.relative_to(SRC)}: {m.group(0)}" for path in SRC.rglob("*.js") if path.name != "frames.js" for m in literal.finditer(path.read_text())
    }
    assert not elsewhere, f"frames built outside transport/frames.js: {sorted(elsewhere)}"
    for kind in js_list("AGENT_FRAMES"):
        assert f'type: "{kind}"' in FRAMES, f"frames.js has no constructor for {kind}"


def test_a_span_row_s_fields_are_protocol_py_s_in_its_order() -> None:
    assert js_list("SPAN_ROW") == list(p.SPAN_ROW_FIELDS)
    required = re.search(r"export const SPAN_ROW_REQUIRED = (\d+)", FRAMES)
    assert required and int(required.group(1)) == sum(1 for f in msgspec.structs.fields(p.SpanRow) if f.required)
