"""The bench's input generator: pure and deterministic under a seed."""

from __future__ import annotations

import json
import re

from relay_bridge.lanes.bench.gen import generate
from relay_bridge.lanes.bench.runner import make_plan, plan_json

SCHEMA = {
    "type": "object",
    "properties": {
        "limit": {"type": "integer", "minimum": 1, "maximum": 50},
        "ratio": {"type": "number", "minimum": 0.5, "maximum": 2},
        "sort": {"type": "string", "enum": ["relevance", "price", "newest"]},
        "query": {"type": "string", "minLength": 2, "maxLength": 12},
        "when": {"type": "string", "format": "date"},
        "mail": {"type": "string", "format": "email"},
        "sku": {"type": "string", "pattern": "^[A-Z]{3}-[0-9]{3}$"},
        "flag": {"type": "boolean"},
        "item": {
            "type": "object",
            "properties": {
                "id": {"type": "integer", "minimum": 1, "maximum": 9},
                "dims": {"type": "object", "properties": {"w": {"type": "number", "minimum": 0, "maximum": 1}}, "required": ["w"]},
            },
            "required": ["id", "dims"],
        },
        "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}, "minItems": 1, "maxItems": 3},
    },
    "required": ["limit", "ratio", "sort", "query", "item"],
}


def test_same_seed_same_bytes_other_seed_other_strings() -> None:
    a = json.dumps(generate(SCHEMA, 9, seed=5, salt="t"))
    b = json.dumps(generate(SCHEMA, 9, seed=5, salt="t"))
    c = json.dumps(generate(SCHEMA, 9, seed=6, salt="t"))
    assert a == b and a != c


def test_numbers_sweep_their_range_and_enums_cycle() -> None:
    cases = generate(SCHEMA, 5, seed=1)
    assert [c["limit"] for c in cases] == [1, 13, 26, 38, 50]
    assert cases[0]["ratio"] == 0.5 and cases[-1]["ratio"] == 2
    assert [c["sort"] for c in cases] == ["relevance", "price", "newest", "relevance", "price"]
    assert [c["item"]["id"] for c in cases] == [1, 3, 5, 7, 9]
    assert all(isinstance(c["limit"], int) for c in cases)


def test_optionals_toggle_and_required_stay() -> None:
    cases = generate(SCHEMA, 6, seed=1)
    optional = ["when", "mail", "sku", "flag", "tags"]
    assert all(k in cases[0] for k in optional)
    assert not any(k in cases[1] for k in optional)
    for k in optional:
        assert any(k in c for c in cases[2:]) and any(k not in c for c in cases[2:])
    assert all({"limit", "ratio", "sort", "query", "item"} <= set(c) for c in cases)


def test_strings_formats_patterns_lengths_and_arrays() -> None:
    cases = generate(SCHEMA, 6, seed=2)
    lengths = [len(c["query"]) for c in cases]
    assert lengths[0] == 2 and lengths[-1] == 12 and lengths == sorted(lengths)
    present = [c for c in cases if "when" in c]
    assert present and all(re.fullmatch(r"\d{4}-\d{2}-\d{2}", c["when"]) for c in present)
    assert all(re.fullmatch(r"[^@\s]+@[^@\s]+\.[a-z]+", c["mail"]) for c in cases if "mail" in c)
    assert all(re.fullmatch(r"[A-Z]{3}-[0-9]{3}", c["sku"]) for c in cases if "sku" in c)
    tags = [c["tags"] for c in cases if "tags" in c]
    assert all(1 <= len(t) <= 3 and set(t) <= {"a", "b"} for t in tags)
    assert all(0 <= c["item"]["dims"]["w"] <= 1 for c in cases)


def test_plan_calls_only_read_only_tools_unless_allowed() -> None:
    tools = [
        {"name": "read", "readOnly": True, "descriptor": {"inputSchema": SCHEMA}},
        {"name": "write", "readOnly": False, "descriptor": {"inputSchema": {"type": "object"}}},
    ]
    plan = make_plan(tools, runs=3, seed=0, allow_mutating=set())
    assert list(plan.inputs) == ["read"] and "write" in plan.skipped
    allowed = make_plan(tools, runs=3, seed=0, allow_mutating={"write"})
    assert set(allowed.inputs) == {"read", "write"}
    cased = make_plan(tools, runs=5, seed=0, allow_mutating=set(), cases={"read": [{"limit": 1}, {"limit": 2}]})
    assert cased.inputs["read"] == [{"limit": 1}, {"limit": 2}, {"limit": 1}, {"limit": 2}, {"limit": 1}]
    assert plan_json(plan) == plan_json(make_plan(tools, runs=3, seed=0, allow_mutating=set()))
