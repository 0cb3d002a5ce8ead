"""Reading captured tool lists: JSON text in, validated `Server` snapshots out. Pure: no file access here.

Three shapes are accepted, told apart by content (seed 003): a tools/list result `{"tools": [...]}`, a JSON-RPC
response `{"result": {"tools": [...]}}`, and a named aggregate `{"servers": [{"name", "tools"}]}`. A client
configuration (`mcpServers`) is refused: it says how to start servers, not what they register. A non-empty
`nextCursor` stops the run, because a catalog missing its later pages would be measured as smaller than it is.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from relay_bridge.core.limits import LIMITS, Limits
from relay_bridge.exports.kinds import CLIENT_CONFIG, FOOTPRINT_INPUT, kind_of, wrong_kind
from relay_bridge.lanes.footprint.errors import FootprintError

Tool = dict[str, Any]


@dataclass(slots=True)
class Server:
    """One server's tools as captured. `label` names where it came from, for error messages."""

    name: str
    tools: list[Tool]
    label: str = ""
    shape: str = "tools-list"  # tools-list | jsonrpc | aggregate | capture | store
    inputBytes: int = 0
    meta: dict[str, Any] = field(default_factory=dict)


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _finite_int(text: str) -> int:
    value = int(text)
    if abs(value) >= 2**1024:  # JavaScript reads it as Infinity, which JSON cannot write back
        raise ValueError(f"number {text[:40]} is out of range")
    return value


def _finite_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"number {text[:40]} is out of range")
    return value


def nesting(doc: Any) -> int:
    """Containers on the deepest path: a scalar is 0, `{}` and `[]` are 1. Iterative, so depth cannot crash it."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(doc, 1)]
    while stack:
        value, level = stack.pop()
        if isinstance(value, dict):
            children: Iterable[Any] = value.values()
        elif isinstance(value, list):
            children = value
        else:
            continue
        deepest = max(deepest, level)
        stack.extend((child, level + 1) for child in children)
    return deepest


def parse_json(text: str, label: str, limits: Limits = LIMITS) -> Any:
    """Decode one input document and check its nesting. NaN, Infinity and overflowing numbers are refused."""
    if text.startswith("\ufeff"):
        text = text[1:]  # a BOM some editors write; it is not part of the JSON text
    try:
        doc = json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float, parse_int=_finite_int)
    except RecursionError:
        raise FootprintError(f"{label}: nesting is deeper than {limits.nesting} levels") from None
    except json.JSONDecodeError as exc:
        raise FootprintError(f"{label}: not valid JSON (line {exc.lineno} column {exc.colno}: {exc.msg})") from None
    except ValueError as exc:
        raise FootprintError(f"{label}: not valid JSON ({exc})") from None
    depth = nesting(doc)
    if depth > limits.nesting:
        raise FootprintError(f"{label}: nesting is {depth} levels, over the limit of {limits.nesting}")
    return doc


def _check_cursor(holder: dict[str, Any], where: str) -> None:
    cursor = holder.get("nextCursor")
    if cursor not in (None, ""):
        raise FootprintError(f"{where}: nextCursor is set, so this is one page of a longer list; capture every page and merge the tools")


def _tools_list(value: Any, where: str) -> list[Tool]:
    if not isinstance(value, list):
        raise FootprintError(f"{where}: tools must be an array")
    return value


def parse_document(doc: Any, *, label: str, name: str | None, explicit_name: bool = False, size: int = 0) -> list[Server]:
    """The servers one input document holds. `name` names a single-server document (the file stem by default)."""
    if not isinstance(doc, dict):
        raise FootprintError(f"{label}: expected a JSON object (a tools/list result, a JSON-RPC response or a servers aggregate)")
    kind = kind_of(doc)
    if kind is not None and kind not in (FOOTPRINT_INPUT, CLIENT_CONFIG):  # another of the project's files: say which
        raise FootprintError(wrong_kind(label, kind, "a tools/list result"))
    if "mcpServers" in doc:
        raise FootprintError(
            f"{label}: this is a client configuration (mcpServers): it says how to start servers, not which tools they "
            "register; capture a tools/list result instead"
        )
    if "servers" in doc:
        if explicit_name:
            raise FootprintError(f"{label}: a servers aggregate names its own servers; pass it without NAME=")
        servers = doc["servers"]
        if not isinstance(servers, list):
            raise FootprintError(f"{label}: servers must be an array")
        out = []
        for i, entry in enumerate(servers):
            where = f"{label}: servers[{i}]"
            if not isinstance(entry, dict):
                raise FootprintError(f"{where}: must be an object with name and tools")
            if not isinstance(entry.get("name"), str) or not entry["name"]:
                raise FootprintError(f"{where}: name must be a non-empty string")
            _check_cursor(entry, where)
            out.append(Server(entry["name"], _tools_list(entry.get("tools"), where), label, "aggregate", size if i == 0 else 0))
        return out
    if "tools" in doc:
        _check_cursor(doc, label)
        return [Server(name or "", _tools_list(doc["tools"], label), label, "tools-list", size)]
    result = doc.get("result")
    if isinstance(result, dict) and "tools" in result:
        _check_cursor(result, f"{label}: result")
        return [Server(name or "", _tools_list(result["tools"], f"{label}: result"), label, "jsonrpc", size)]
    if "error" in doc and "jsonrpc" in doc:
        raise FootprintError(f"{label}: a JSON-RPC error response holds no tools")
    raise FootprintError(f"{label}: not a tools/list result, a JSON-RPC response with result.tools, or a servers aggregate")


def validate_tool(tool: Any, where: str, strict: bool = False) -> None:
    """What a definition must be; style problems are the lint's job, not refusals. A WebMCP tool may take no
    input, so an `inputSchema` that is null or absent is measured (and linted); `strict` refuses it as seed 003
    does. Any other non-object inputSchema is malformed either way."""
    if not isinstance(tool, dict):
        raise FootprintError(f"{where}: a tool must be an object")
    name = tool.get("name")
    if not isinstance(name, str) or not name:
        raise FootprintError(f"{where}: name must be a non-empty string")
    schema = tool.get("inputSchema")
    if not isinstance(schema, dict) and (strict or schema is not None):
        raise FootprintError(f"{where}: inputSchema must be an object")
    if "description" in tool and not isinstance(tool["description"], str):
        raise FootprintError(f"{where}: description must be a string when present")


def validate_catalog(servers: list[Server], limits: Limits = LIMITS, strict: bool = False) -> None:
    """Unique server names, unique tool names within a server, well-formed tools, and the count limits."""
    if len(servers) > limits.servers:
        raise FootprintError(f"{len(servers)} servers, over the limit of {limits.servers}")
    total = sum(len(s.tools) for s in servers)
    if total > limits.tools:
        raise FootprintError(f"{total} tools, over the limit of {limits.tools}")
    seen: dict[str, str] = {}
    for server in servers:
        if not server.name:
            raise FootprintError(f"{server.label}: the server has no name")
        if server.name in seen:
            raise FootprintError(
                f"server name {server.name!r} appears twice ({seen[server.name]} and {server.label}); name inputs with --input NAME=PATH"
            )
        seen[server.name] = server.label
        names: set[str] = set()
        for i, tool in enumerate(server.tools):
            where = f"{server.label}: server {server.name!r} tools[{i}]"
            validate_tool(tool, where, strict)
            if tool["name"] in names:
                raise FootprintError(f"{where}: tool name {tool['name']!r} appears twice in server {server.name!r}")
            names.add(tool["name"])
