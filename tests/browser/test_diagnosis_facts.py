"""Diagnosis facts in real Chromium 156: the agent's facts about each call reach the relay, and each one equals
what the real fix applied to the same input saves. A known PNG is re-encoded by the test with the canvas's own
JPEG encoder (an HTMLCanvasElement, not the agent's OffscreenCanvas); a pretty-printed array is compacted with
JSON.stringify; a base64 run is cut out of its text. Calls go through the browser's own executeTool."""

from __future__ import annotations

import json

import pytest

from tests.browser.conftest import open_page, session_where
from tests.liveness import LIVENESS_S

pytestmark = pytest.mark.browser

CALL = """async ({ name, input }) => {
  const mc = document.modelContext
  const t = (await mc.getTools()).find((x) => x.name === name)
  try { return { ok: true, text: await mc.executeTool(t, input) } } catch (e) { return { ok: false, error: e.message } }
}"""

# The agent's JPEG and the canvas's come from the same encoder family; a stated tolerance covers encoder paths.
JPEG_TOLERANCE = 0.02
FIT = 1568


def utf8_len(text: str) -> int:
    return len(text.encode("utf-8"))


def test_facts_reach_the_relay_and_match_the_real_fix(browser, pages, relay_server) -> None:
    page, errors = open_page(browser, pages.url("facts.html", relay_server))
    page.wait_for_function("window.registered && window.png && __webmcpPerf.status().phase === 'tools-registered'", timeout=LIVENESS_S * 1000)
    sid = page.evaluate("__webmcpPerf.sessionId")
    calls = [
        ("snapshot", {}),  # 0: the image
        ("snapshot", {}),  # 1: sampled out (one image per tool per 30 s), and a repeat of 0
        ("list_items", {}),  # 2: pretty-printed rows
        ("get_attachment", {}),  # 3: base64 inside text
        ("search", {"q": "shoes", "limit": 500}),  # 4: above its maximum
        ("search", {"limit": 500, "q": "shoes"}),  # 5: the same input, keys in another order
        ("search", {"q": "boots"}),  # 6: keeps its schema
        ("pick_size", {"n": 50}),  # 7: the browser refuses it (the form's max is 5)
    ]
    answers = [page.evaluate(CALL, {"name": n, "input": i}) for n, i in calls]
    assert [a["ok"] for a in answers] == [True] * 7 + [False], answers
    snap = relay_server.wait_for(session_where(sid, lambda s: set(range(8)) <= set(s["diagnosis"])))
    facts = snap["sessions"][sid]["diagnosis"]

    # 0: the image, against the canvas's own re-encoding of the same PNG
    png = page.evaluate("window.png")
    full = page.evaluate("([b, w, h]) => realFix(b, w, h)", [png, 2400, 1200])
    fit = page.evaluate("([b, w, h]) => realFix(b, w, h)", [png, FIT, 784])
    image = facts[0]["image"]
    assert (image["mime"], image["width"], image["height"]) == ("image/png", 2400, 1200)
    assert image["bytes"] == full["decoded"] == len(png) * 3 // 4 - png[-2:].count("=")
    assert (image["fitWidth"], image["fitHeight"]) == (FIT, 784)
    assert abs(image["jpegBytes"] - full["jpeg"]) <= JPEG_TOLERANCE * full["jpeg"], (image, full)
    assert abs(image["fitBytes"] - fit["jpeg"]) <= JPEG_TOLERANCE * fit["jpeg"], (image, fit)
    assert image["fitBytes"] < image["jpegBytes"], "fewer pixels, fewer bytes"
    print(
        f"\nimage 2400x1200 PNG {image['bytes']} B -> JPEG q0.8 {image['jpegBytes']} B (canvas {full['jpeg']}),"
        f" fitted {FIT}x784 {image['fitBytes']} B (canvas {fit['jpeg']})"
    )
    assert "image" not in facts[1], "sampled: one image per tool per 30 s"
    assert facts[1]["repeat"] == {"of": 0}

    # 2: pretty-printed rows, against JSON.stringify's compaction and a columnar rewrite's arithmetic
    text = page.evaluate("window.rowsText")
    compact = json.dumps(json.loads(text), separators=(",", ":"), ensure_ascii=False)
    bloat = facts[2]["bloat"]
    assert bloat["textBytes"] == utf8_len(text)
    assert bloat["whitespaceBytes"] == utf8_len(text) - utf8_len(compact)
    assert bloat["whitespaceBytes"] == utf8_len(text) - utf8_len(page.evaluate("JSON.stringify(JSON.parse(window.rowsText))"))
    assert bloat["repeatedKeyRows"] == 29
    assert bloat["repeatedKeyBytes"] == 29 * utf8_len('"id":"name":"price":"inStock":')
    assert (bloat["base64Bytes"], bloat["base64Runs"]) == (0, 0)

    # 3: base64 in text: cutting the run out saves exactly its bytes
    blob_text = page.evaluate("window.blobText")
    run = blob_text.split(": ", 1)[1].split(" ", 1)[0]
    assert facts[3]["bloat"]["base64Runs"] == 1
    assert facts[3]["bloat"]["base64Bytes"] == utf8_len(blob_text) - utf8_len(blob_text.replace(run, "")) == 4000
    assert facts[3]["bloat"]["whitespaceBytes"] == 0, "prose has no insignificant whitespace"

    # 4-6: the schema check and repeats
    assert facts[4]["schema"] == {"violations": 1, "constraint": "maximum", "path": "/properties/limit/maximum"}
    assert "repeat" not in facts[4]
    assert facts[5]["schema"]["violations"] == 1 and facts[5]["repeat"] == {"of": 4}
    assert facts[6]["schema"] == {"violations": 0} and "repeat" not in facts[6]

    # 7: refused by the browser before the page ran
    assert facts[7]["refused"] == {"by": "browser"}
    assert "schema" not in facts[7], "form tools are validated by the browser itself"
    counters = snap["sessions"][sid]["counters"]
    assert counters["facts"] == 8 and counters["facts_duplicates"] == 0
    assert errors == []


def test_a_page_that_forbids_workers_still_gets_its_image_facts(browser, pages, relay_server) -> None:
    """The agent re-encodes in a worker; where the page's CSP refuses one, in the page (still in an idle
    callback): the same encoder, the same figures."""
    page, errors = open_page(browser, pages.url("facts.html", relay_server, csp="worker"))
    violations = page.evaluate(
        """() => { window.__csp = []; document.addEventListener("securitypolicyviolation", (e) => __csp.push(e.effectiveDirective)); return true }"""
    )
    assert violations
    page.wait_for_function("window.registered && window.png && __webmcpPerf.status().phase === 'tools-registered'", timeout=LIVENESS_S * 1000)
    sid = page.evaluate("__webmcpPerf.sessionId")
    assert page.evaluate(CALL, {"name": "snapshot", "input": {}})["ok"]
    snap = relay_server.wait_for(session_where(sid, lambda s: 0 in s["diagnosis"]))
    image = snap["sessions"][sid]["diagnosis"][0]["image"]
    png = page.evaluate("window.png")
    full = page.evaluate("([b, w, h]) => realFix(b, w, h)", [png, 2400, 1200])
    assert (image["width"], image["height"], image["fitWidth"]) == (2400, 1200, FIT)
    assert abs(image["jpegBytes"] - full["jpeg"]) <= JPEG_TOLERANCE * full["jpeg"]
    assert "worker-src" in page.evaluate("window.__csp"), "the policy really refused the worker"
    assert errors == []
