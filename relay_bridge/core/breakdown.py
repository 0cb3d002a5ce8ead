"""Where a tool definition's bytes go, so the user sees what to shrink.

Every canonical byte of the tool lands in exactly one part, so the parts sum to the tool's size. Inside the
input and output schemas (at any depth: properties, items, combinators):

- propertyNames: the `"name":` keys of `properties` / `patternProperties`;
- propertyDescriptions: every `"description":"..."` member (properties at any depth, items, the schema's own);
- types: `"type":...` members;
- constraints: validation keywords and their values: `required`, `minimum`/`maximum` and their exclusive forms,
  `multipleOf`, `minLength`/`maxLength`, `pattern`, `format`, `minItems`/`maxItems`, `uniqueItems`,
  `minProperties`/`maxProperties`, a boolean `additionalProperties`, `default`, `examples`, `contentEncoding`,
  `contentMediaType`;
- enums: `"enum":[...]` and `"const":...` members;
- definitions: `"$defs":{...}` and `"definitions":{...}` members, whole (what they hold counts here, not above);
- structure: what is left of the schemas: the `"inputSchema":` key itself, braces, brackets, commas, the keys
  of `properties`/`items`/`anyOf` and the like, and keywords no part above names (`title`, `$ref`, `x-…`).

Outside the schemas: description (the tool's own `"description":"..."` member) and other (the name, title,
annotations, and the tool object's own braces and commas).

A member's bytes are its canonical `"key":value` text; the comma before it belongs to the enclosing object's
structure (or, at the tool's top level, to other).
"""

from __future__ import annotations

from typing import Any

from relay_bridge.core.canonical import canonical_size, quote

PARTS = ("description", "propertyNames", "propertyDescriptions", "types", "constraints", "enums", "definitions", "structure", "other")

# Keywords whose value is a schema, or an array/object of schemas, that may hold properties of its own.
_SCHEMA = (
    "items",
    "additionalProperties",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "unevaluatedProperties",
    "unevaluatedItems",
    "additionalItems",
)
_SCHEMA_LIST = ("anyOf", "oneOf", "allOf", "prefixItems")
_SCHEMA_MAP = ("properties", "patternProperties", "dependentSchemas")
_NAMED_MAP = ("properties", "patternProperties")
CONSTRAINTS = frozenset(
    (
        "required",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minLength",
        "maxLength",
        "pattern",
        "format",
        "minItems",
        "maxItems",
        "uniqueItems",
        "minProperties",
        "maxProperties",
        "default",
        "examples",
        "contentEncoding",
        "contentMediaType",
        "minContains",
        "maxContains",
    )
)


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
        elif key == "type":
            parts["types"] += _member(key, value)
        elif key in CONSTRAINTS or (key == "additionalProperties" and isinstance(value, bool)):
            parts["constraints"] += _member(key, value)
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
        if key not in tool:
            continue
        inner = dict.fromkeys(PARTS, 0)
        _schema(tool[key], inner)
        for part, n in inner.items():
            parts[part] += n
        parts["structure"] += _member(key, tool[key]) - sum(inner.values())
    parts["other"] = total - sum(parts[p] for p in PARTS if p != "other")
    return parts
