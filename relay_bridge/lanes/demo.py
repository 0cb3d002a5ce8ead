"""The `wmcp-top --demo` feed: a deterministic scenario of several page sessions, sent over a real socket.

`scenario(seed, time_origin)` is pure: it yields `(delay_seconds, frame)` pairs, each frame a dict in the
`wmcp-relay/1` shape built with relay_bridge.core.synth. It never ends (after the scripted opening the live sessions
keep calling their tools), so callers take what they need. One pseudo-frame is not part of the protocol:
`{"type": "disconnect", "session": ID}` tells the client to close that session's socket (a tab that went away
without `bye`).

The cast, all synthetic:
- `shop` (3f2a9c01): a visible top-level tab; sequential calls with host gaps, an image payload
  (`render_preview`), a tool that errors (`checkout`), a visibility change; and the diagnosis' classic cases
  (docs/diagnosis.md): an oversized PNG, a pretty-printed `search_products` result that repeats every key, a
  3 KB `bulk_import` tool it never calls, an input below `add_to_cart`'s minimum, host gaps that dwarf tool time;
- `agent` (7b0d4e22): the same site in a hidden agent tab; overlapping calls, `export_catalog` that stays in
  flight for about 25 s before its span arrives, and `get_product` asked again with the same input;
- `relayed` (c0ffee03): a same-origin tab forwarded over the shop tab's socket (context "relayed", via the shop
  session), which reports spans it lost before they could be sent;
- `docs` (d0c5e004): walks the phases no-host -> host-found -> tools-registered -> measuring, registers
  `summarize_page` late, gets one call cancelled by the host, reloads, and disconnects at about 40 s.

The page's facts about results (frame `facts`: image re-encode sizes, bloat counts, schema violations, repeats)
follow each call's span as a page agent sends them, off the call path; they are in the feed only where the wire
protocol knows the frame (FACTS_ON_WIRE: branch diag's protocol), so a relay that would refuse them never sees
them.

`run_demo(ws_url, seed, speed)` sends the scenario to a relay over WebSockets: one socket per top-level
session, relayed sessions on their via's socket, just as page agents do.
"""

from __future__ import annotations

import asyncio
import heapq
import random
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from relay_bridge.core import synth
from relay_bridge.core.protocol import FRAME_TYPES

DEFAULT_SEED = 7
FIXED_TIME_ORIGIN = 1_764_000_000_000.0  # for reproducible feeds (snapshots, screenshots)

SHOP, AGENT, RELAYED, DOCS = "3f2a9c01", "7b0d4e22", "c0ffee03", "d0c5e004"
DISCONNECT_AT = 40.0
FACTS_ON_WIRE = "facts" in FRAME_TYPES
FACTS_DELAY_S = 0.05  # the page measures a result after the call settled, off its path
IMAGE_SAMPLE_S = 30.0  # at most one image re-encoded per tool per 30 s (the agent's sampling)

_READ_ONLY = {"readOnlyHint": True}
_SHOP_TOOLS: dict[str, dict[str, Any]] = {
    "search_products": {
        "description": "Search the catalogue by text, glaze and price range; returns matching products.",
        "schema": {
            "type": "object",
            "properties": {
                "query": {"type": "string"},
                "glaze": {"type": "string", "enum": ["celadon", "tenmoku", "shino"]},
                "maxPrice": {"type": "number"},
            },
            "required": ["query"],
        },
        "annotations": {"readOnlyHint": True, "idempotentHint": True},
        "kept": {"readOnlyHint": True},
    },
    "get_product": {
        "description": "One product with dimensions, stock and care notes.",
        "schema": {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]},
        "annotations": _READ_ONLY,
        "kept": _READ_ONLY,
    },
    "add_to_cart": {
        "description": "Put a product in the cart.",
        "schema": {"type": "object", "properties": {"id": {"type": "string"}, "qty": {"type": "integer", "minimum": 1}}, "required": ["id"]},
        "annotations": {"destructiveHint": False},
        "kept": {},
    },
    "render_preview": {
        "description": "Render a glazed preview of a product as a PNG image.",
        "schema": {"type": "object", "properties": {"id": {"type": "string"}, "glaze": {"type": "string"}}, "required": ["id"]},
        "annotations": {"readOnlyHint": True, "untrustedContentHint": False},
        "kept": {"readOnlyHint": True, "untrustedContentHint": False},
    },
    "checkout": {
        "description": "Place the order for the cart's contents.",
        "schema": {"type": "object", "properties": {"payment": {"type": "string"}}},
        "annotations": {"destructiveHint": True},
        "kept": {},
    },
    # Registered on every page of the shop, called by none: a heavy definition paid in every conversation.
    "bulk_import": {
        "description": " ".join(
            [
                "Import many products into the catalogue at once from a spreadsheet export (CSV or XLSX converted to rows).",
                "Each row needs a stock keeping unit, a title, a glaze, a price in the shop's currency, dimensions in",
                "millimetres, a weight in grams and a stock count; optional columns are care notes, a kiln batch, a maker,",
                "a collection and up to eight image links.",
            ]
            * 7
        ),
        "schema": {
            "type": "object",
            "properties": {
                "rows": {"type": "array", "items": {"type": "object"}, "description": "the spreadsheet's rows, one object each"},
                "mode": {"type": "string", "enum": ["append", "replace", "dry-run"]},
                "country": {
                    "type": "string",
                    "enum": [
                        "AT",
                        "BE",
                        "BG",
                        "CY",
                        "CZ",
                        "DE",
                        "DK",
                        "EE",
                        "ES",
                        "FI",
                        "FR",
                        "GR",
                        "HR",
                        "HU",
                        "IE",
                        "IT",
                        "LT",
                        "LU",
                        "LV",
                        "MT",
                        "NL",
                        "PL",
                        "PT",
                        "RO",
                        "SE",
                        "SI",
                        "SK",
                    ],
                },
            },
            "required": ["rows"],
        },
        "annotations": {"destructiveHint": True},
        "kept": {},
    },
    "export_catalog": {
        "description": "Export the whole catalogue as structured data.",
        "schema": {"type": "object", "properties": {"format": {"type": "string", "enum": ["json", "csv"]}}},
        "annotations": _READ_ONLY,
        "kept": _READ_ONLY,
    },
}
_DOCS_TOOLS: dict[str, dict[str, Any]] = {
    "search_docs": {
        "description": "Full-text search over the documentation.",
        "schema": {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
        "annotations": _READ_ONLY,
        "kept": _READ_ONLY,
    },
    "get_page": {
        "description": "One documentation page as text.",
        "schema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
        "annotations": _READ_ONLY,
        "kept": _READ_ONLY,
    },
    "summarize_page": {
        "description": "Summarise the page the user is reading.",
        "schema": {"type": "object", "properties": {"length": {"type": "string", "enum": ["short", "long"]}}},
        "annotations": {"readOnlyHint": True, "untrustedContentHint": True},
        "kept": {"readOnlyHint": True, "untrustedContentHint": True},
    },
}

# tool -> (min wall ms, max wall ms, min result bytes, max result bytes, image bytes, error rate)
_PROFILES: dict[str, tuple[float, float, int, int, int, float]] = {
    "search_products": (3, 18, 2_000, 6_500, 0, 0.0),
    "get_product": (4, 22, 900, 2_400, 0, 0.0),
    "add_to_cart": (12, 45, 120, 300, 0, 0.05),
    "render_preview": (80, 240, 98_000, 132_000, 96_000, 0.0),
    "checkout": (150, 420, 200, 500, 0, 0.35),
    "export_catalog": (400, 900, 40_000, 60_000, 0, 0.0),
    "search_docs": (6, 30, 1_500, 4_000, 0, 0.0),
    "get_page": (10, 60, 8_000, 22_000, 0, 0.0),
    "summarize_page": (300, 1_400, 600, 1_600, 0, 0.1),
}
_ERRORS = {
    "checkout": "PaymentError: card declined (demo)",
    "add_to_cart": "RangeError: qty must be at least 1",
    "summarize_page": "AbortError: the operation was aborted",
}

PHASES = {
    "no-host": (
        "Attached; no modelContext registry found yet.",
        [
            "Agent browsers inject the registry late: keep the tab open and use the agent.",
            "Check the browser: Chrome needs the WebMCP flag or origin trial.",
        ],
    ),
    "host-found": ("Registry found; the site has not registered any tools yet.", ["The site's registration may poll: wait a moment."]),
    "tools-registered": ("Tools are wrapped; waiting for the first call.", ["Drive a tool from the agent, or call one from the console."]),
    "measuring": ("Measuring.", ["__webmcpPerf.summary() prints the split; .report() returns the document; the relay shows it live"]),
}


@dataclass(order=True)
class _Ev:
    t: float
    order: int
    frame: dict[str, Any] = field(compare=False)


class _Sim:
    """One page session's calls, produced lazily and in time order."""

    def __init__(self, sid: str, rng: random.Random, origin_ms: float, attach_s: float) -> None:
        self.sid = sid
        self.rng = rng
        self.origin_ms = origin_ms  # the session's timeOrigin (epoch ms)
        self.attach_s = attach_s  # when it attaches, seconds into the scenario
        self.seq = 0
        self.last_settled: float | None = None  # page ms: when the most recently invoked call settles
        self.pending: list[_Ev] = []
        self.order = 0
        self.next_call_s = attach_s + 1.0
        self.long_call = False  # the agent's one long export has begun
        self.cancelled = False  # the host's one cancellation has happened
        self.ended = False
        # The diagnosis facts' own state: when the next image is sampled, the agent tab's reads of get_product.
        self.next_image_s = 0.0
        self.reads = 0
        self.last_read: int | None = None

    def page_ms(self, t_s: float) -> float:
        return (t_s - self.attach_s) * 1000 + 50.0

    def at(self, t_s: float, frame: dict[str, Any]) -> None:
        self.order += 1
        heapq.heappush(self.pending, _Ev(t_s, self.order, frame))

    def call(
        self,
        t_s: float,
        tool: str,
        *,
        wall_ms: float | None = None,
        overlapped: bool = False,
        error: bool | None = None,
        cancel_after_s: float | None = None,
    ) -> float:
        """Schedule one call invoked at `t_s`: its `start`, then its span. Returns when it settles (s)."""
        lo, hi, rlo, rhi, image, err_rate = _PROFILES[tool]
        rng = self.rng
        wall = wall_ms if wall_ms is not None else round(rng.uniform(lo, hi), 2)
        invoked = round(self.page_ms(t_s), 3)
        seq = self.seq
        self.seq += 1
        is_error = (rng.random() < err_rate) if error is None else error
        # Host gap: from the previous call's settle to this call; none when this call began before it settled.
        if self.last_settled is not None and (overlapped or invoked < self.last_settled):
            overlapped = True
        gap = None if overlapped or self.last_settled is None else round(invoked - self.last_settled, 3)
        settled_s = t_s + wall / 1000
        self.at(t_s, synth.start_frame(self.sid, [(seq, tool, invoked)]))
        if cancel_after_s is not None:
            self.at(t_s + cancel_after_s, synth.event(self.sid, round(self.page_ms(t_s + cancel_after_s), 3), "toolcancel", seq=seq, tool=tool))
        span = synth.span(
            self.sid,
            seq,
            tool,
            invoked,
            wall,
            result_bytes=rng.randint(rlo, rhi) if not is_error else rng.randint(60, 160),
            input_bytes=rng.randint(18, 120),
            image_bytes=image if not is_error else 0,
            gap=gap,
            is_error=is_error,
            error=_ERRORS.get(tool, "Error: failed (demo)") if is_error else None,
            blocking_ms=round(wall * 0.4, 2) if wall > 150 and not is_error else 0.0,
            overlapped=overlapped,
        )
        self.at(settled_s, synth.spans_frame(self.sid, [span]))
        if FACTS_ON_WIRE:
            facts = self.facts(tool, seq, t_s, span)
            if facts:
                self.at(settled_s + FACTS_DELAY_S, {"type": "facts", "session": self.sid, "seq": seq, "facts": facts})
        self.last_settled = round(invoked + wall, 3)  # the previous call, by invocation order
        return settled_s

    def facts(self, tool: str, seq: int, t_s: float, span: dict[str, Any]) -> dict[str, Any]:
        """What the page would measure of this call's result and input: the diagnosis' classic cases. Pure
        arithmetic on the span's sizes (no random numbers: the feed's other values do not move)."""
        out: dict[str, Any] = {}
        if self.sid == RELAYED:  # webmcp-profiler's agent, relayed: it measures no facts
            return out
        if span["isError"] and tool == "add_to_cart":
            out["schema"] = {"violations": 1, "constraint": "minimum", "path": "/properties/qty"}
        elif span["isError"]:
            return out
        if tool == "render_preview" and t_s >= self.next_image_s:
            # A 1920x1200 PNG render; as JPEG q0.8 and fitted to 1568 px on the long side it weighs a fraction.
            self.next_image_s = t_s + IMAGE_SAMPLE_S
            decoded = span["imageBytes"] * 3 // 4
            out["image"] = {
                "mime": "image/png",
                "width": 1920,
                "height": 1200,
                "bytes": decoded,
                "jpegBytes": decoded * 2 // 9,
                "fitBytes": decoded * 4 // 27,
                "fitWidth": 1568,
                "fitHeight": 980,
            }
        elif tool == "search_products":
            # Pretty-printed (2-space indent) rows of objects that repeat every key.
            text = span["resultBytes"]
            out["bloat"] = {
                "textBytes": text,
                "whitespaceBytes": text * 23 // 100,
                "repeatedKeyBytes": text * 31 // 100,
                "repeatedKeyRows": max(1, text // 260),
                "base64Bytes": 0,
                "base64Runs": 0,
                "truncated": False,
            }
        elif tool == "get_product" and self.sid == AGENT:
            # The agent tab's model asks for the product it just read (every third read).
            self.reads += 1
            if self.reads % 3 == 0 and self.last_read is not None:
                out["repeat"] = {"of": self.last_read}
            self.last_read = seq
        return out

    def register(self, t_s: float, name: str, spec: dict[str, Any]) -> None:
        self.at(
            t_s,
            synth.tool(
                self.sid,
                name,
                round(self.page_ms(t_s), 3),
                description=spec["description"],
                schema=spec["schema"],
                annotations=spec["annotations"],
                kept=spec["kept"],
            ),
        )

    def phase(self, t_s: float, phase: str) -> None:
        message, hints = PHASES[phase]
        self.at(t_s, synth.status(self.sid, phase, message, hints, coverage="running" if phase == "measuring" else None))

    def pop_until(self, until_s: float) -> list[_Ev]:
        out = []
        while self.pending and self.pending[0].t < until_s:
            out.append(heapq.heappop(self.pending))
        return out


def _hello(sim: _Sim, origin: str, **kw: Any) -> dict[str, Any]:
    return synth.hello(sim.sid, origin, time_origin=sim.origin_ms, **kw)


# (seconds, LanguageModel session, step, measured facts): a plain prompt, streams (one aborted), a destroy.
_SHOP_PROMPTS: list[tuple[float, str, str, dict[str, Any]]] = [
    (4.2, "lm-7f01", "create", {}),
    (5.1, "lm-7f01", "prompt", {"seq": 0, "totalMs": 842.5, "charsIn": 64, "charsOut": 212}),
    (9.4, "lm-7f01", "stream", {"seq": 1, "totalMs": 2410.0, "firstChunkMs": 312.4, "chunks": 38, "charsIn": 120, "charsOut": 1480}),
    (
        14.0,
        "lm-7f01",
        "stream",
        {
            "seq": 2,
            "totalMs": 655.0,
            "firstChunkMs": 298.0,
            "chunks": 6,
            "charsIn": 96,
            "charsOut": 140,
            "error": "AbortError: the user stopped the answer",
        },
    ),
    (18.3, "lm-c2d9", "create", {}),
    (20.6, "lm-c2d9", "prompt", {"seq": 0, "totalMs": 1203.2, "charsIn": 2048, "charsOut": 512}),
    (22.0, "lm-7f01", "destroy", {}),
    (26.8, "lm-c2d9", "stream", {"seq": 1, "totalMs": 1874.9, "firstChunkMs": 401.7, "chunks": 25, "charsIn": 88, "charsOut": 960}),
]


class _Scenario:
    def __init__(self, seed: int, time_origin: float) -> None:
        rng = random.Random(seed)
        self.rng = rng
        self.sims = {
            SHOP: _Sim(SHOP, random.Random(rng.random()), time_origin, 0.0),
            AGENT: _Sim(AGENT, random.Random(rng.random()), time_origin + 500, 0.5),
            RELAYED: _Sim(RELAYED, random.Random(rng.random()), time_origin + 3000, 3.0),
            DOCS: _Sim(DOCS, random.Random(rng.random()), time_origin + 1000, 1.0),
        }
        self._script()
        self.horizon = 0.0

    def _script(self) -> None:
        shop, agent, relayed, docs = (self.sims[k] for k in (SHOP, AGENT, RELAYED, DOCS))
        # The shop tab: visible, top level.
        shop.at(0.0, _hello(shop, "https://shop.example", title="Pottery shop", path="/catalogue"))
        for i, name in enumerate(("search_products", "get_product", "add_to_cart", "render_preview", "checkout", "bulk_import")):
            shop.register(0.05 + i * 0.01, name, _SHOP_TOOLS[name])
        shop.phase(0.2, "measuring")
        shop.next_call_s = 0.6
        # The shop page also uses the Prompt API: two LanguageModel sessions (timings and counts, never text).
        for t, ps, kind, extra in _SHOP_PROMPTS:
            shop.at(t, {"type": "prompt", "session": SHOP, "promptSession": ps, "kind": kind, "at": round(shop.page_ms(t), 3), **extra})
        shop.at(18.0, synth.event(SHOP, round(shop.page_ms(18.0), 3), "visibility", state="hidden"))
        shop.at(24.0, synth.event(SHOP, round(shop.page_ms(24.0), 3), "visibility", state="visible"))
        # The hidden agent tab: overlapping calls, and one long call still in flight for a while.
        agent.at(0.5, _hello(agent, "https://shop.example", title="Pottery shop (agent)", path="/", visibility="hidden"))
        for i, name in enumerate(("search_products", "get_product", "export_catalog")):
            agent.register(0.55 + i * 0.01, name, _SHOP_TOOLS[name])
        agent.phase(0.6, "measuring")
        agent.next_call_s = 1.2
        # A same-origin tab relayed over the shop tab's socket, with spans lost before they were sent.
        relayed.at(
            3.0,
            _hello(
                relayed,
                "https://shop.example",
                title="Pottery shop (tab 2)",
                path="/cart",
                context="relayed",
                via=SHOP,
                lost=3,
                visibility="hidden",
                agent="webmcp-profiler/0.2.2",
            ),
        )
        relayed.seq = 3  # seqs 0..2 were evicted in the page before the relay saw them
        relayed.next_call_s = 4.0
        # The docs site: phases one by one, a late registration, a cancellation, a reload, a disconnect.
        docs.at(1.0, _hello(docs, "https://docs.example", title="Docs", path="/guide/start"))
        docs.phase(1.05, "no-host")
        docs.at(1.6, synth.event(DOCS, round(docs.page_ms(1.6), 3), "host", location="document"))
        docs.phase(1.6, "host-found")
        for i, name in enumerate(("search_docs", "get_page")):
            docs.register(2.2 + i * 0.01, name, _DOCS_TOOLS[name])
        docs.phase(2.3, "tools-registered")
        docs.phase(3.5, "measuring")
        docs.next_call_s = 3.5
        docs.register(12.0, "summarize_page", _DOCS_TOOLS["summarize_page"])
        docs.at(25.0, synth.event(DOCS, round(docs.page_ms(25.0), 3), "reload", navigation="reload"))
        docs.at(DISCONNECT_AT, {"type": "disconnect", "session": DOCS})

    def _calls(self, sim: _Sim, until: float) -> None:
        rng = sim.rng
        while not sim.ended and sim.next_call_s < until:
            t = sim.next_call_s
            if sim.sid == SHOP:
                tool = rng.choices(["search_products", "get_product", "add_to_cart", "render_preview", "checkout"], [5, 4, 2, 1.5, 1])[0]
                end = sim.call(t, tool)
                sim.next_call_s = end + rng.uniform(0.4, 2.6)
            elif sim.sid == AGENT and t >= 8.0 and not sim.long_call:
                # One export that stays in flight for about 25 s while the agent goes on calling.
                sim.long_call = True
                sim.call(t, "export_catalog", wall_ms=25_400.0)
                sim.next_call_s = t + rng.uniform(0.8, 2.0)
            elif sim.sid == AGENT:
                # The agent fires two or three reads at once: overlapping calls.
                width = rng.choice([1, 2, 2, 3])
                ends = [sim.call(t + i * 0.004, rng.choice(["search_products", "get_product"]), overlapped=i > 0) for i in range(width)]
                sim.next_call_s = max(ends) + rng.uniform(0.8, 3.0)
            elif sim.sid == RELAYED:
                end = sim.call(t, rng.choice(["get_product", "search_products"]))
                sim.next_call_s = end + rng.uniform(2.0, 5.0)
            else:  # docs
                if t >= DISCONNECT_AT - 1.5:
                    sim.ended = True
                    break
                if t > 12.2 and not sim.cancelled:
                    sim.cancelled = True
                    end = sim.call(t, "summarize_page", wall_ms=2_600.0, error=True, cancel_after_s=2.0)
                else:
                    choices = ["search_docs", "get_page"] + (["summarize_page"] if t > 12.2 else [])
                    end = sim.call(t, rng.choice(choices))
                sim.next_call_s = end + rng.uniform(0.6, 3.2)

    def events(self) -> Iterator[tuple[float, dict[str, Any]]]:
        """(absolute seconds, frame), in time order, forever."""
        window = 5.0
        while True:
            until = self.horizon + window
            batch: list[tuple[float, int, str, dict[str, Any]]] = []
            for sim in self.sims.values():
                self._calls(sim, until)
                batch.extend((ev.t, ev.order, sim.sid, ev.frame) for ev in sim.pop_until(until))
            batch.sort(key=lambda item: (item[0], item[2], item[1]))
            for t, _, _, frame in batch:
                yield t, frame
            self.horizon = until


def scenario(seed: int = DEFAULT_SEED, time_origin: float | None = None) -> Iterator[tuple[float, dict[str, Any]]]:
    """`(delay_seconds, frame)` forever; the delay is the wait after the previous frame."""
    origin = time_origin if time_origin is not None else time.time() * 1000
    last = 0.0
    for t, frame in _Scenario(seed, origin).events():
        yield max(0.0, t - last), frame
        last = t


def frames_until(seconds: float, seed: int = DEFAULT_SEED, time_origin: float = FIXED_TIME_ORIGIN) -> list[tuple[float, dict[str, Any]]]:
    """The scenario's first `seconds` as `(absolute_seconds, frame)`: a fixed feed for snapshots and screenshots."""
    out = []
    for t, frame in _Scenario(seed, time_origin).events():
        if t >= seconds:
            break
        out.append((t, frame))
    return out


def route(frame: dict[str, Any]) -> str:
    """Which top-level session's socket carries `frame` (a relayed session rides on its `via`)."""
    if frame.get("type") == "hello":
        info = frame["session"]
        return info.get("via") or info["id"]
    sid = frame.get("session", "")
    return SHOP if sid == RELAYED else sid


def answer_command(message: str | bytes) -> dict[str, Any] | None:
    """The demo's `result` for a relay `command` (the terminal's `x`): the demo's pages have no real tools, so
    an invoke is answered at once with a synthetic result that says so, or refused for a tool it never had."""
    import json

    try:
        msg = json.loads(message)
    except ValueError:
        return None
    if not isinstance(msg, dict) or msg.get("type") != "command" or not isinstance(msg.get("id"), str):
        return None
    reply: dict[str, Any] = {"type": "result", "id": msg["id"], "session": msg.get("session", "")}
    args: dict[str, Any] = msg["args"] if isinstance(msg.get("args"), dict) else {}
    tool = args.get("tool")
    known = {name for tools in (_SHOP_TOOLS, _DOCS_TOOLS) for name in tools}
    if msg.get("name") != "invoke" or tool not in known:
        return {**reply, "ok": False, "error": f"the demo cannot run {msg.get('name')!s:.40} {tool!s:.60}"}
    text = json.dumps({"demo": True, "tool": tool, "note": "a synthetic answer: wmcp-top --demo has no real page"})
    return {**reply, "ok": True, "text": text, "resultBytes": len(text), "wallMs": 1.0}


async def run_demo(ws_url: str, seed: int = DEFAULT_SEED, speed: float = 1.0, *, limit_seconds: float | None = None) -> None:
    """Send the scenario to the relay at `ws_url` until cancelled (or for `limit_seconds` of scenario time)."""
    import json

    from websockets.asyncio.client import connect

    sockets: dict[str, Any] = {}
    readers: list[asyncio.Task[None]] = []

    async def drain(ws: Any) -> None:
        try:
            async for message in ws:  # acks and errors: a real agent reads them; the demo needs none
                answer = answer_command(message)
                if answer is not None:  # `x` under --allow-invoke: answer at once, as a page would
                    await ws.send(json.dumps(answer, separators=(",", ":")))
        except Exception:
            return

    elapsed = 0.0
    # Paced against when the run started, not frame to frame: each sleep's overshoot and each send's time used
    # to add up, so 30 s in a `start` arrived ~0.6 s after the page clock said it began, and a call of 8.5 ms
    # showed `running 0.6s` before its span. The pages' clocks start now too.
    loop = asyncio.get_running_loop()
    started = loop.time()
    try:
        for delay, frame in scenario(seed, time_origin=time.time() * 1000):
            elapsed += delay
            if limit_seconds is not None and elapsed > limit_seconds:
                break
            if delay > 0:
                wait = started + (elapsed / speed if speed > 0 else 0.0) - loop.time()
                if wait > 0:
                    await asyncio.sleep(wait)
            key = route(frame)
            if frame.get("type") == "disconnect":
                ws = sockets.pop(key, None)
                if ws is not None:
                    await ws.close()
                continue
            ws = sockets.get(key)
            if ws is None:
                if frame.get("type") != "hello":
                    continue  # its socket is gone (disconnected): the page is no longer there
                ws = await connect(ws_url, open_timeout=5, max_size=1 << 20, compression=None)
                sockets[key] = ws
                readers.append(asyncio.create_task(drain(ws)))
            await ws.send(json.dumps(frame, separators=(",", ":")))
    finally:
        for ws in sockets.values():
            try:
                await ws.close()
            except Exception:
                pass
        for task in readers:
            task.cancel()
