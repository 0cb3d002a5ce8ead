"""Where the bytes go (parts sum to the whole) and the descriptor lint's locations."""

from __future__ import annotations

import json

from relay_bridge.core.breakdown import breakdown
from relay_bridge.core.canonical import canonical_size
from relay_bridge.lanes.footprint.lint import lint_tool

from .conftest import FIXTURES


def test_breakdown_by_hand() -> None:
    t = {
        "name": "t",
        "description": "abc",  # "description":"abc" = 19
        "inputSchema": {
            "type": "object",
            "properties": {
                "mode": {"type": "string", "enum": ["a", "b"], "description": "d"},  # "mode": 7; "enum":["a","b"] 17; "description":"d" 17
            },
            "$defs": {"x": {"description": "inside defs counts as definitions"}},
        },
    }
    size = canonical_size(t)
    parts = breakdown(t, size)
    assert parts["description"] == len('"description":"abc"')
    assert parts["propertyNames"] == len('"mode":')
    assert parts["propertyDescriptions"] == len('"description":"d"')
    assert parts["enums"] == len('"enum":["a","b"]')
    assert parts["definitions"] == len('"$defs":{"x":{"description":"inside defs counts as definitions"}}')
    assert parts["types"] == len('"type":"object"') + len('"type":"string"')
    # what is left of the schema: its key, braces, commas and the "properties" key
    assert parts["structure"] == len('"inputSchema":{,"properties":{{,,}},}')
    assert parts["other"] == len('{"name":"t",,}')
    assert sum(parts.values()) == size


def test_breakdown_names_types_constraints_and_structure_so_other_is_small() -> None:
    """Issue 17 item 12: "other" was the largest bucket (up to 47% of a tool); now only the tool's name, title,
    annotations and top-level punctuation are left in it."""
    t = {
        "name": "search_flights",
        "title": "Search flights",
        "description": "Find flights between two airports on a date.",
        "inputSchema": {
            "type": "object",
            "additionalProperties": False,
            "required": ["from", "to", "date"],
            "properties": {
                "from": {"type": "string", "pattern": "^[A-Z]{3}$", "description": "IATA code"},
                "to": {"type": "string", "pattern": "^[A-Z]{3}$", "description": "IATA code"},
                "date": {"type": "string", "format": "date"},
                "passengers": {"type": "integer", "minimum": 1, "maximum": 9, "default": 1},
                "cabin": {"type": "string", "enum": ["economy", "business"]},
            },
        },
    }
    size = canonical_size(t)
    parts = breakdown(t, size)
    assert sum(parts.values()) == size
    assert parts["constraints"] == sum(
        len(m)
        for m in (
            '"additionalProperties":false',
            '"required":["from","to","date"]',
            '"pattern":"^[A-Z]{3}$"',
            '"pattern":"^[A-Z]{3}$"',
            '"format":"date"',
            '"minimum":1',
            '"maximum":9',
            '"default":1',
        )
    )
    assert parts["types"] == len('"type":"object"') + 4 * len('"type":"string"') + len('"type":"integer"')
    assert parts["other"] == len('{"name":"search_flights","title":"Search flights",,}')
    assert parts["other"] / size < 0.15 and max(parts, key=lambda p: parts[p]) != "other"


def _findings(name: str) -> list[tuple[str, str]]:
    doc = json.loads((FIXTURES / "lint.json").read_text(encoding="utf-8"))
    t = next(t for t in doc["servers"][0]["tools"] if t["name"] == name)
    return [(f["code"], f["pointer"]) for f in lint_tool(t)]


def test_lint_rules_and_pointers() -> None:
    assert _findings("x" * 129) == [("invalid-name", "/name"), ("budget-name", "/name")]
    assert _findings("has space") == [("invalid-name", "/name")]
    assert _findings("no_description") == [("missing-description", "/description")]
    assert _findings("empty_description") == [("empty-description", "/description")]
    assert _findings("array_schema") == [("schema-not-object", "/inputSchema/type")]
    assert _findings("untyped") == [
        ("untyped-property", "/inputSchema/properties/a"),
        ("untyped-property", "/inputSchema/properties/b"),
        ("untyped-property", "/inputSchema/properties/c/properties/d"),
    ]
    assert _findings("bidi") == [("bidi-control", "/description")]
    assert _findings("tags") == [("tag-characters", "/description"), ("prompt-injection", "/description")]
    for name in ("override", "conceal"):
        assert _findings(name) == [("prompt-injection", "/description")], name
    for name in ("call_other", "assistant"):
        assert _findings(name) == [("tool-poisoning", "/description")], name
    assert _findings("exfil") == [("tool-poisoning", "/inputSchema/properties/notes/description")]
    # a free-text path is a payload channel: the only finding on an otherwise clean tool
    assert _findings("clean_tool") == [("broad-parameter", "/inputSchema/properties/path")]
    assert _findings("multi.type-ok_1") == []


def test_pointer_escaping_and_hidden_keys() -> None:
    t = {
        "name": "p",
        "description": "Fine tool description.",
        "inputSchema": {"type": "object", "properties": {"a/b~c\u200b": {"type": "string", "description": "<IMPORTANT>do it</IMPORTANT>"}}},
    }
    got = [(f["code"], f["pointer"]) for f in lint_tool(t)]
    assert ("hidden-unicode", "/inputSchema/properties/a~1b~0c\u200b") in got
    assert ("tool-poisoning", "/inputSchema/properties/a~1b~0c\u200b/description") in got


def test_poisoning_heuristics_do_not_flag_ordinary_descriptions() -> None:
    ordinary = [
        "Search tickets by text, status and assignee.",
        "Returns the weather for a city. Use metric units unless told otherwise.",
        "Create a calendar event; the user must confirm the time.",
        "Lists files in a directory, ignoring hidden files.",
        "Call this to get the current time in ISO 8601.",
    ]
    for text in ordinary:
        assert lint_tool({"name": "t", "description": text, "inputSchema": {"type": "object"}}) == [], text


def test_form_lint_names_each_control_that_a_model_or_user_cannot_read() -> None:
    from relay_bridge.lanes.footprint.lint import lint_form

    form = {
        "autosubmit": True,
        "fields": [
            {"element": "input[type=text][name=q]", "param": "q", "described": True, "labeled": True, "required": True},
            {"element": "input[type=text][name=note]", "param": "note", "described": False, "labeled": False},
            {"element": "input[type=text]", "param": None, "required": True},
            {"element": "input[type=text]#spare", "param": None, "required": False},
        ],
    }
    got = [(f["code"], f["pointer"], f["severity"]) for f in lint_form(form)]
    assert got == [
        ("missing-param-description", "/form/fields/1", "warning"),
        ("unlabeled-input", "/form/fields/1", "warning"),
        ("required-without-name", "/form/fields/2", "error"),
    ]
