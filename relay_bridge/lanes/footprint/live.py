"""Catalogs from what pages registered: a live `Store` (for the TUI's Schemas view) or a capture file's data.

Each session is one server, named `<origin> #<session id>` so two tabs of one origin stay apart and the same
tool registered by both shows up as a cross-server pair. Only tools registered now count (not unregistered,
not refused by the host): they are what the model is sent. Pure: the caller reads files.

Live data is not refused the way a file is: a descriptor that cannot be measured (none recorded, not an
object, an inputSchema that is neither an object nor null/absent, too deep) is skipped with a note, and past the server/tool limits the rest is
skipped with a note, so a view of a busy browser still renders.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import msgspec

from relay_bridge.core.limits import LIMITS, Limits
from relay_bridge.exports.kinds import CAPTURE, kind_of, wrong_kind
from relay_bridge.lanes.footprint.analyze import analyze_catalog
from relay_bridge.lanes.footprint.errors import FootprintError
from relay_bridge.lanes.footprint.inputs import Server, nesting, validate_tool

# (name, descriptor as parsed JSON or raw bytes or None, registered now)
ToolItem = tuple[str, Any, bool]


def server_name(origin: str, session_id: str) -> str:
    return f"{origin} #{session_id}"


def _descriptor(raw: Any, limits: Limits) -> tuple[Any, str | None]:
    if raw is None or raw == b"":
        return None, "no descriptor recorded"
    if isinstance(raw, (bytes, bytearray, memoryview)):
        try:
            raw = json.loads(bytes(raw))
        except (ValueError, RecursionError):
            return None, "descriptor is not valid JSON"
    if nesting(raw) > limits.nesting:
        return None, f"descriptor nesting is over {limits.nesting} levels"
    try:
        validate_tool(raw, "descriptor")
    except FootprintError as exc:
        return None, str(exc).removeprefix("descriptor: ")
    return raw, None


def servers_from_sessions(
    sessions: Iterable[tuple[str, str, Iterable[ToolItem]]], shape: str, limits: Limits = LIMITS, strict: bool = False
) -> tuple[list[Server], list[str]]:
    """(origin, session id, tools) per session -> servers and notes about what was left out.

    `strict` keeps everything past the server/tool limits so validation refuses it (a file on the command line);
    otherwise the excess is skipped with a note (a live view)."""
    servers: list[Server] = []
    notes: list[str] = []
    total = 0
    for origin, sid, tools in sessions:
        name = server_name(origin, sid)
        if not strict and len(servers) >= limits.servers:
            notes.append(f"{name}: skipped, over the limit of {limits.servers} servers")
            continue
        kept: list[dict[str, Any]] = []
        seen: set[str] = set()
        for tool_name, raw, registered in tools:
            if not registered:
                continue
            descriptor, why = _descriptor(raw, limits)
            if why is not None:
                notes.append(f"{name}: tool {tool_name!r} not measured: {why}")
                continue
            if descriptor["name"] in seen:
                notes.append(f"{name}: tool {descriptor['name']!r} not measured: registered twice")
                continue
            if not strict and total >= limits.tools:
                notes.append(f"{name}: tool {tool_name!r} skipped, over the limit of {limits.tools} tools")
                continue
            seen.add(descriptor["name"])
            kept.append(descriptor)
            total += 1
        servers.append(Server(name, kept, name, shape))
    return servers, notes


# What tells two loads of one page apart from two pages: (origin, path, context), and which came first: the
# session's place in the store (sessions are kept in the order their hello arrived; a capture keeps that order),
# never a clock the page could set.
Load = tuple[str, str, str, float, bool]  # origin, path, context, order of arrival, still live


def replaced_loads(loads: dict[str, Load]) -> tuple[set[str], list[str]]:
    """Session ids of earlier loads of a page that a later load replaced (a reload, a navigation back to it):
    an ended session with a later session of the same origin, path and context. Its tools are not sent to the
    model any more, and counted as another server they made every reload an "exact match" of the last (6
    reloads of one page: 75 pairs). Two tabs open at once both stay. Returns (ids, one note per page)."""
    latest: dict[tuple[str, str, str], float] = {}
    for origin, path, context, attached, _ in loads.values():
        key = (origin, path, context)
        latest[key] = max(latest.get(key, attached), attached)
    gone = {sid for sid, (origin, path, context, attached, live) in loads.items() if not live and attached < latest[(origin, path, context)]}
    counts: dict[tuple[str, str], int] = {}
    for sid in gone:
        origin, path = loads[sid][0], loads[sid][1]
        counts[(origin, path)] = counts.get((origin, path), 0) + 1
    notes = [
        f"{origin}{path}: {n} earlier load{'s' if n != 1 else ''} left out (reloaded: the newest counts)"
        for (origin, path), n in sorted(counts.items())
    ]
    return gone, notes


def catalog_from_store(store: Any, limits: Limits = LIMITS) -> tuple[list[Server], list[str]]:
    """Every session of a relay_bridge.core.store.Store as a server (typed loosely: no import of the store needed);
    the earlier loads of a reloaded page left out (replaced_loads)."""
    gone, reload_notes = replaced_loads(
        {s.id: (s.info.origin, s.info.path, s.info.context, float(i), s.state == "live") for i, s in enumerate(store.sessions.values())}
    )
    sessions = (
        (s.info.origin, s.id, ((rec.name, rec.descriptor, rec.registered) for rec in s.tools.values()))
        for s in store.sessions.values()
        if s.id not in gone
    )
    servers, notes = servers_from_sessions(sessions, "store", limits)
    notes = reload_notes + notes
    forms = {
        server_name(s.info.origin, s.id): {
            rec.name: msgspec.to_builtins(rec.form) for rec in s.tools.values() if getattr(rec, "form", None) is not None
        }
        for s in store.sessions.values()
    }
    # the rug pull: what changed since each tool's first registration in its session (the store's record)
    drift = {
        server_name(s.info.origin, s.id): {rec.name: rec.drift for rec in s.tools.values() if getattr(rec, "drift", ())}
        for s in store.sessions.values()
    }
    for server in servers:
        if forms.get(server.name):
            server.meta["forms"] = forms[server.name]
        if drift.get(server.name):
            server.meta["drift"] = drift[server.name]
    return servers, notes


def analyze_sessions(store: Any, limits: Limits = LIMITS) -> dict[str, Any]:
    """The footprint report of the tools registered in every session now (what the TUI's Schemas view shows)."""
    servers, notes = catalog_from_store(store, limits)
    source = {"kind": "store", "label": f"{len(servers)} live sessions", "inputs": []}
    return analyze_catalog(servers, source, limits, notes)


def servers_from_capture(doc: Any, label: str, limits: Limits = LIMITS) -> tuple[list[Server], list[str]]:
    """Sessions of a `wmcp-top-capture/1` document (relay_bridge.exports.capture) as servers."""
    if kind_of(doc) is not CAPTURE:
        raise FootprintError(wrong_kind(label, kind_of(doc), "a wmcp-top capture (format wmcp-top-capture/1)"))
    sessions = doc.get("sessions")
    if not isinstance(sessions, list):
        raise FootprintError(f"{label}: sessions must be an array")
    rows = []
    loads: dict[str, Load] = {}
    for i, sess in enumerate(sessions):
        info = sess.get("info") if isinstance(sess, dict) else None
        if not isinstance(info, dict) or not isinstance(info.get("id"), str) or not isinstance(info.get("origin"), str):
            raise FootprintError(f"{label}: sessions[{i}]: no info.id and info.origin")
        tools = sess.get("tools") or []
        if not isinstance(tools, list) or not all(isinstance(t, dict) for t in tools):
            raise FootprintError(f"{label}: sessions[{i}].tools must be an array of objects")
        items = [(str(t.get("name", "?")), t.get("descriptor"), t.get("unregisteredAt") is None and t.get("rejected") is None) for t in tools]
        rows.append((info["origin"], info["id"], items))
        loads[info["id"]] = (info["origin"], str(info.get("path", "")), str(info.get("context", "")), float(i), sess.get("state") == "live")
    gone, reload_notes = replaced_loads(loads)
    servers, notes = servers_from_sessions([r for r in rows if r[1] not in gone], "capture", limits, strict=True)
    return servers, reload_notes + notes
