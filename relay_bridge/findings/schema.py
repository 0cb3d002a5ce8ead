"""Rules on schema weight: what the tool definitions cost in every conversation, before any call.

- `schema.unused`: a tool registered now and never called in the session (no measured call, none counted), once
  the session has made at least MIN_CALLS calls. Saving: ceil(schemaBytes / 4) tokens per conversation, where
  schemaBytes is the agent's measure of the descriptor (design section 3). Fix: register it only where the page
  can use it, or drop it. Assumption: the host sends every registered tool's definition in the conversation; it
  is sent again with every model request, so per conversation is a floor (prompt caching may discount repeats).
- `schema.description`: a tool's own description over DESCRIPTION_MAX_BYTES UTF-8 bytes. Saving: ceil((bytes -
  DESCRIPTION_MAX_BYTES) / 4) tokens per conversation: what cutting it to the limit saves.
- `schema.enums`: enum and const members (footprint's breakdown part `enums`, canonical bytes of `"enum":[...]`)
  over ENUM_MAX_BYTES in one tool. Saving: ceil((bytes - ENUM_MAX_BYTES) / 4) tokens per conversation.
  A tool reported unused is not reported again for its description or enums (its whole definition is counted).
- `schema.similar`: two tools of one session whose descriptions footprint finds similar (Jaccard >= 0.8 over
  word sets: relay_bridge.core.similarity): merging them saves the smaller definition, ceil(bytes / 4)
  tokens per conversation (canonical bytes, footprint's measure).
- `schema.diverged`: one tool name registered with different definitions in different sessions (footprint's
  "same name, different definition"): no token saving is computed (each conversation sees one page's tools); it
  says the site ships two versions of one tool.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from relay_bridge.core.canonical import utf16_key
from relay_bridge.core.limits import LIMITS
from relay_bridge.core.similarity import SAME_NAME, SIMILAR, Entry, find_pairs
from relay_bridge.findings.inputs import SessionInput, SpanInput
from relay_bridge.findings.model import Finding, Saving, tokens

MIN_CALLS = 10
DESCRIPTION_MAX_BYTES = 1024
ENUM_MAX_BYTES = 512


def _per_conversation(n_bytes: int) -> Saving:
    return Saving(tokens(n_bytes), "conversation", bytes=n_bytes)


def find(s: SessionInput, by_tool: Mapping[str, list[SpanInput]]) -> list[Finding]:
    out = []
    enough = s.calls >= MIN_CALLS
    for t in s.tools:
        if not t.registered or t.internal:
            continue
        if enough and t.calls == 0 and t.counted == 0:
            out.append(
                Finding(
                    "schema.unused",
                    s.id,
                    (t.name,),
                    {"schemaBytes": t.schema_bytes, "sessionCalls": s.calls},
                    "drop this tool, or register it only on the pages that use it",
                    _per_conversation(t.schema_bytes),
                )
            )
            continue
        w = t.weight()
        if w is None:
            continue
        if w.description_bytes > DESCRIPTION_MAX_BYTES:
            out.append(
                Finding(
                    "schema.description",
                    s.id,
                    (t.name,),
                    {"descriptionBytes": w.description_bytes, "limitBytes": DESCRIPTION_MAX_BYTES},
                    f"cut the description to {DESCRIPTION_MAX_BYTES} bytes; move examples and policy out of it",
                    _per_conversation(w.description_bytes - DESCRIPTION_MAX_BYTES),
                )
            )
        if w.enum_bytes > ENUM_MAX_BYTES:
            out.append(
                Finding(
                    "schema.enums",
                    s.id,
                    (t.name,),
                    {"enumBytes": w.enum_bytes, "limitBytes": ENUM_MAX_BYTES},
                    "replace long enums with a string checked in the page, or a lookup tool",
                    _per_conversation(w.enum_bytes - ENUM_MAX_BYTES),
                )
            )
    return out


def find_duplicates(sessions: Sequence[SessionInput]) -> list[Finding]:
    """Footprint's pair search (relay_bridge.core.similarity.find_pairs) over every session's registered tools.
    It pairs tools of different servers only, so each tool is its own server there: a pair inside one session is
    then a pair too. Entries go in footprint's fixed (server, name) order, so the same input gives the same pairs."""
    entries: list[Entry] = []
    owner: dict[str, str] = {}
    for s in sessions:
        for t in s.tools:
            w = t.weight() if t.registered and not t.internal else None
            if w is None:
                continue
            server = f"{s.id} {t.name}"
            owner[server] = s.id
            description = t.descriptor.get("description") if t.descriptor is not None else None
            entries.append(Entry(0, server, t.name, w.canonical, description if isinstance(description, str) else None))
    entries.sort(key=lambda e: (utf16_key(e.server), utf16_key(e.name)))
    for i, e in enumerate(entries):
        e.index = i
    found = find_pairs(entries, LIMITS)
    size = {e.server: len(e.canonical) for e in entries}
    out = []
    for item in found["pairs"]["items"]:
        a, b, labels = item["a"], item["b"], item["labels"]
        sa, sb = owner.get(a["server"], ""), owner.get(b["server"], "")
        bytes_a, bytes_b = size.get(a["server"], 0), size.get(b["server"], 0)
        if sa == sb and SIMILAR in labels:
            out.append(
                Finding(
                    "schema.similar",
                    sa,
                    tuple(sorted((a["tool"], b["tool"]))),
                    {"bytesA": bytes_a, "bytesB": bytes_b},
                    "merge the two tools into one with a parameter, or make their descriptions say how they differ",
                    _per_conversation(min(bytes_a, bytes_b)),
                )
            )
        elif sa != sb and SAME_NAME in labels:
            out.append(
                Finding(
                    "schema.diverged",
                    sa,
                    (a["tool"],),
                    {"bytesA": bytes_a, "bytesB": bytes_b},
                    "the same tool name has two definitions in two sessions: ship one",
                    Saving(),
                )
            )
    return out
