"""Where a tool definition's bytes go, so the user sees what to shrink.

Every canonical byte of the tool lands in exactly one part, so the parts sum to the tool's size:

- description: the tool's own `"description":"..."` member;
- propertyNames: the `"name":` keys of `properties` / `patternProperties` inside the input and output schemas;
- propertyDescriptions: every `"description":"..."` member inside those schemas (properties at any depth,
  items, the schema's own);
- enums: `"enum":[...]` and `"const":...` members inside the schemas;
- definitions: `"$defs":{...}` and `"definitions":{...}` members, whole (what they hold counts here, not above);
- other: everything else: the name, title, annotations, types, `required`, braces, commas.

A member's bytes are its canonical `"key":value` text; the comma before it stays in `other`.
"""

from __future__ import annotations

from typing import Any

from .canonical import canonical_size, quote

PARTS = ("description", "propertyNames", "propertyDescriptions", "enums", "definitions", "other")

# Keywords whose value is a schema, or an array/object of schemas, that may hold properties of its own.
_SCHEMA = ("items", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames",
           "unevaluatedProperties", "unevaluatedItems", "additionalItems")
_SCHEMA_LIST = ("anyOf", "oneOf", "allOf", "prefixItems")
_SCHEMA_MAP = ("properties", "patternProperties", "dependentSchemas")
_NAMED_MAP = ("properties", "patternProperties")


def _member(key: str, value: Any) -> int:
    return len(quote(key).encode("utf-8")) + 1 + canonical_size(value)


def _schema(node: Any, parts: dict[str, int]) -> None:
    if isinstance(node, list):  # an array of schemas (anyOf, items in old drafts)
        for item in node:
            _schema(item, parts)
        return
    if not isinstance(node, dict):
        return
    for key, value in node.items():
        if key in ("$defs", "definitions"):
            parts["definitions"] += _member(key, value)
        elif key == "description" and isinstance(value, str):
            parts["propertyDescriptions"] += _member(key, value)
        elif key in ("enum", "const"):
            parts["enums"] += _member(key, value)
        elif key in _SCHEMA_MAP and isinstance(value, dict):
            for name, sub in value.items():
                if key in _NAMED_MAP:
                    parts["propertyNames"] += len(quote(name).encode("utf-8")) + 1
                _schema(sub, parts)
        elif key in _SCHEMA or key in _SCHEMA_LIST:
            _schema(value, parts)


def breakdown(tool: dict[str, Any], total: int) -> dict[str, int]:
    """The parts of `tool`, whose canonical size is `total`, in bytes."""
    parts = dict.fromkeys(PARTS, 0)
    if isinstance(tool.get("description"), str):
        parts["description"] = _member("description", tool["description"])
    for key in ("inputSchema", "outputSchema"):
        _schema(tool.get(key), parts)
    parts["other"] = total - sum(parts[p] for p in PARTS if p != "other")
    return parts
