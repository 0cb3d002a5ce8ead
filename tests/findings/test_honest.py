"""Honest numbers: each rule's saving against the real fix applied to the same input.

Every test feeds a known input through a real store (synthetic spans sized by relay_bridge.core.measure, as the agent
sizes them), with the page's facts measured here the way the contract defines them (Pillow stands in for the
page's canvas re-encode), and compares the finding's saving with what the fix really saves: the image re-encoded,
the array compacted or made columnar, the tool dropped from the catalog, the repeated call not made. Tolerances
are stated per test; they cover ceil() rounding and base64 padding, nothing else.
"""

from __future__ import annotations

import base64
import io
import json
import math
import random

import msgspec
from PIL import Image

from relay_bridge.core import synth
from relay_bridge.core.canonical import canonical_bytes
from relay_bridge.core.measure import call_size, js_stringify, result_facts, utf8_len
from relay_bridge.core.store import Store
from relay_bridge.findings import diagnose, from_session
from tests.findings.builders import BloatFacts, Facts, ImageFacts, RepeatFacts, attach
from tests.frames import frame

SID = "0a1b2c3d"
QUALITY = 80  # the contract's JPEG quality 0.8
MAX_SIDE = 1568


def store_with(calls: list[tuple[str, int, int, int]], tools: list[dict] | None = None) -> Store:
    """A store whose session made `calls`: (tool, input bytes, result bytes, image base64 bytes) each."""
    store = Store()
    store.connect(1)
    store.apply(1, frame(synth.hello(SID)))
    names = sorted({c[0] for c in calls})
    for obj in tools or [synth.tool(SID, name, 1.0) for name in names]:
        store.apply(1, frame(obj))
    spans = []
    at = 10.0
    for seq, (tool, inp, res, img) in enumerate(calls):
        spans.append(synth.span(SID, seq, tool, at, 5.0, input_bytes=inp, result_bytes=res, image_bytes=img, gap=None if seq == 0 else 1000.0))
        at += 1005.0
    store.apply(1, frame(synth.spans_frame(SID, spans)))
    return store


def photo(width: int, height: int) -> Image.Image:
    """A render-like picture: smooth gradients with noise, so PNG cannot shrink it much (as a real render)."""
    rng = random.Random(7)
    small = Image.new("RGB", (width // 8, height // 8))
    small.putdata([(x * 255 // (width // 8), y * 255 // (height // 8), rng.randrange(256)) for y in range(height // 8) for x in range(width // 8)])
    return small.resize((width, height), Image.Resampling.BICUBIC)


def encode(img: Image.Image, fmt: str, **kw: object) -> bytes:
    out = io.BytesIO()
    img.save(out, fmt, **kw)
    return out.getvalue()


def envelope(data: bytes, mime: str) -> dict:
    return {"content": [{"type": "image", "data": base64.b64encode(data).decode(), "mimeType": mime}]}


def test_image_saving_matches_a_real_reencode() -> None:
    img = photo(2400, 1600)
    png = encode(img, "PNG")
    scale = MAX_SIDE / max(img.size)
    fitted = img.resize((round(img.width * scale), round(img.height * scale)), Image.Resampling.LANCZOS)
    fit_jpeg = encode(fitted, "JPEG", quality=QUALITY)
    before, after = result_facts(envelope(png, "image/png")), result_facts(envelope(fit_jpeg, "image/jpeg"))
    calls = 3
    store = store_with([("render", 30, before.resultBytes, before.imageBytes)] * calls)
    session = store.sessions[SID]
    attach(
        session,
        {
            0: Facts(
                image=ImageFacts(
                    "image/png",
                    img.width,
                    img.height,
                    len(png),
                    len(encode(img, "JPEG", quality=QUALITY)),
                    len(fit_jpeg),
                    fitted.width,
                    fitted.height,
                )
            )
        },
    )
    [finding] = [f for f in diagnose([from_session(session)]) if f.rule == "images.reencode"]

    # The real fix: every call returns the fitted JPEG instead; the project's own estimator prices both.
    real_tokens = calls * (
        call_size(30, before.resultBytes, before.imageBytes).estTokens - call_size(30, after.resultBytes, after.imageBytes).estTokens
    )
    real_bytes = calls * (len(png) - len(fit_jpeg))
    print(
        f"\nimage: PNG {img.width}x{img.height} {len(png)} B, fitted JPEG q0.8 {fitted.width}x{fitted.height} {len(fit_jpeg)} B; "
        f"finding {finding.saving.perCall} tok a call, real {real_tokens // calls}"
    )
    assert finding.saving.calls == calls and finding.saving.bytes == real_bytes
    # base64 padding and ceil(): at most 1 token a call apart.
    assert abs(finding.saving.tokens - real_tokens) <= calls, (finding.saving.tokens, real_tokens)
    assert real_tokens > 0.9 * calls * math.ceil(len(png) / 4)  # the demo's classic: most of the image goes
    assert finding.evidence["fitPixelTokens"] == math.ceil(fitted.width * fitted.height / 750)


def pretty_rows(n: int = 60) -> list[dict]:
    return [{"id": i, "name": f"Bowl {i}", "glaze": ["celadon", "tenmoku", "shino"][i % 3], "price": 20 + i, "inStock": i % 4 != 0} for i in range(n)]


def outside_string_whitespace(text: str) -> int:
    """Insignificant whitespace: the contract's definition, counted by a scan (not by re-serialising)."""
    n, in_string, escaped = 0, False, False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in " \t\r\n":
            n += len(ch.encode())
    return n


def repeated_key_bytes(rows: list[dict]) -> int:
    """The `"key":` text of every row after the first whose keys repeat the first row's."""
    keys = set(rows[0])
    return sum(utf8_len(js_stringify(k)) + 1 for row in rows[1:] for k in row if k in keys)


def test_whitespace_saving_matches_compacting_a_pretty_printed_array() -> None:
    rows = pretty_rows()
    pretty = json.dumps(rows, indent=2)
    compact = json.dumps(rows, separators=(",", ":"))
    calls = 4
    store = store_with([("list", 20, utf8_len(pretty), 0)] * calls)
    session = store.sessions[SID]
    attach(session, {0: Facts(bloat=BloatFacts(utf8_len(pretty), outside_string_whitespace(pretty)))})
    [finding] = [f for f in diagnose([from_session(session)]) if f.rule == "bloat.whitespace"]
    real_bytes = calls * (utf8_len(pretty) - utf8_len(compact))
    real_tokens = calls * (call_size(20, utf8_len(pretty), 0).estTokens - call_size(20, utf8_len(compact), 0).estTokens)
    print(f"\nwhitespace: pretty {utf8_len(pretty)} B, compact {utf8_len(compact)} B; finding {finding.saving.bytes // calls} B a call")
    assert finding.saving.bytes == real_bytes
    assert abs(finding.saving.tokens - real_tokens) <= calls  # ceil() of each side: 1 token a call


def test_repeated_key_saving_matches_a_columnar_rewrite() -> None:
    rows = pretty_rows()
    compact = json.dumps(rows, separators=(",", ":"))
    keys = list(rows[0])
    columnar = json.dumps({"columns": keys, "rows": [[r[k] for k in keys] for r in rows]}, separators=(",", ":"))
    calls = 5
    store = store_with([("list", 20, utf8_len(compact), 0)] * calls)
    session = store.sessions[SID]
    attach(session, {0: Facts(bloat=BloatFacts(utf8_len(compact), 0, repeated_key_bytes(rows), len(rows) - 1))})
    [finding] = [f for f in diagnose([from_session(session)]) if f.rule == "bloat.repeated-keys"]
    real_bytes = calls * (utf8_len(compact) - utf8_len(columnar))
    print(f"\nrepeated keys: finding {(finding.saving.bytes or 0) // calls} B a call, columnar rewrite saves {real_bytes // calls} B")
    # The columnar shape pays its one list of column names and wrapper: within 5% of the keys removed.
    assert finding.saving.bytes is not None and abs(finding.saving.bytes - real_bytes) <= 0.05 * real_bytes, (finding.saving.bytes, real_bytes)


def test_unused_tool_saving_matches_dropping_it_from_the_catalog() -> None:
    heavy = synth.tool(
        SID,
        "bulk_import",
        1.0,
        description=("Import many orders at once from a spreadsheet export. " * 60)[:3000],
        schema={"type": "object", "properties": {"rows": {"type": "array"}}},
    )
    light = synth.tool(SID, "search", 1.0, description="Search orders.", schema={"type": "object", "properties": {"q": {"type": "string"}}})
    store = store_with([("search", 20, 200, 0)] * 12, tools=[light, heavy])
    [finding] = [f for f in diagnose([from_session(store.sessions[SID])]) if f.rule == "schema.unused"]
    assert finding.tools == ("bulk_import",)

    def catalog(tools: list[dict]) -> int:  # what the model is sent: the canonical catalog (footprint's measure)
        return len(canonical_bytes({"servers": [{"name": "s", "tools": [t["descriptor"] for t in tools]}]}))

    real = math.ceil(catalog([light, heavy]) / 4) - math.ceil(catalog([light]) / 4)
    print(f"\nunused tool: schemaBytes {heavy['schemaBytes']}, finding {finding.saving.tokens} tok, dropped from the catalog {real} tok")
    assert finding.saving.scope == "conversation"
    assert abs(finding.saving.tokens - real) <= 1, (finding.saving.tokens, real)  # a comma between two tools


def test_repeat_saving_matches_not_making_the_call() -> None:
    calls = [("get", 40, 1200, 0), ("get", 40, 1200, 0), ("other", 10, 50, 0)]
    store = store_with(calls)
    session = store.sessions[SID]
    attach(session, {1: Facts(repeat=RepeatFacts(0))})
    [finding] = [f for f in diagnose([from_session(session)]) if f.rule == "repeats"]
    without = store_with([calls[0], calls[2]]).sessions[SID].stats.totals.estTokens
    assert finding.saving.tokens == session.stats.totals.estTokens - without  # exact


def test_findings_are_built_from_numbers_only() -> None:
    """The struct cannot carry a body: evidence is numbers, `do` is the rule's own text."""
    store = store_with([("list", 20, 9000, 0)] * 2)
    session = store.sessions[SID]
    attach(session, {0: Facts(bloat=BloatFacts(9000, 3000))})
    for f in diagnose([from_session(session)]):
        assert all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in f.evidence.values())
        assert msgspec.json.encode(f)
