"""webmcp-profiler's README examples, run against wmcp-top in Chromium (its native WebMCP host) and Python, giving
webmcp-profiler's results: the quick start, the console API table, the gate, the report tool an agent reads,
the exporter recipe, and the bench and compare command lines with webmcp-profiler's own file formats."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.browser.conftest import RUN_ALL, open_page

from .oracle import assert_valid

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parents[2]

SITE_TOOL = """async () => {
  const t = { name: "set_capacity", description: "sets the capacity", inputSchema: { type: "object", properties: { capacityMl: { type: "number" } } },
              execute: async ({ capacityMl }) => ({ content: [{ type: "text", text: "capacity " + capacityMl }] }) }
  await document.modelContext.registerTool(t)
  window.__unfoldedTools = { set_capacity: t }
}"""


def add_site_tool(page: Any) -> None:
    page.evaluate(SITE_TOOL)
    # The agent lists a tool once Chromium's getTools() says which annotations it kept: one round trip to the
    # browser process after registerTool resolves. A person typing the next line never outruns it; a test can.
    page.wait_for_function("() => !!__webmcpPerf.ledger().tools.set_capacity")


def test_quick_start_one_line_then_summary(browser, pages, relay_server) -> None:
    """ "paste one line in DevTools: __unfoldedTools.set_capacity.execute(...) ... __webmcpPerf.summary() prints the split"."""
    page, errors = open_page(browser, pages.url("native.html", relay_server))
    page.evaluate("window.registered")
    add_site_tool(page)
    text = page.evaluate("async () => { await __unfoldedTools.set_capacity.execute({ capacityMl: 350 }); return __webmcpPerf.summary() }")
    lines = text.split("\n")
    assert lines[0].endswith("· measuring · 18 tools · 1 calls"), lines[0]
    assert lines[1].startswith("schemas ") and " · tools " in lines[1] and " · payloads " in lines[1] and " · host gaps " in lines[1]
    assert lines[2].startswith("  set_capacity ") and "  1 calls · p50 " in lines[2]
    assert errors == []


CONSOLE_TABLE = """async () => {
  const p = window.__webmcpPerf
  const got = []
  const unsub = p.onSpan((s) => got.push(s.tool))
  const unsubUpdate = p.onSpanUpdate(() => {})
  await window.__unfoldedTools.set_capacity.execute({ capacityMl: 1 })
  const info = []
  const origInfo = console.info
  console.info = (m) => info.push(String(m))
  let helped, described
  try {
    helped = await p.help()
    described = await p.describe()
    p.overlay()
  } finally { console.info = origInfo }
  const out = {
    active: p.active, sessionId: p.sessionId, spans: p.spans().length, aggregates: p.aggregates().map((a) => a.tool),
    ledgerCalls: p.ledger().totals.calls, status: p.status(), summary: p.summary(), table: p.table().length,
    report: p.report().spans.length, reportNoSpans: p.report({ spans: false }).spans.length, report50: p.report({ spans: 50 }).spans.length,
    reportTool: p.report({ tool: "set_capacity" }).tools.map((t) => t.tool), helped: helped === undefined, info,
    described: Object.keys(described), listened: got, unsub: typeof unsub, unsubUpdate: typeof unsubUpdate,
    instrument: p.instrument({}), synthetic: typeof p.synthetic, exportFn: typeof p.export, exportTrace: typeof p.exportTrace,
  }
  unsub()
  p.reset()
  out.afterReset = p.spans().length
  out.detached = (p.detach(), window.__webmcpPerf === undefined)
  return out
}"""


def test_console_api_table(browser, pages, relay_server) -> None:
    page, errors = open_page(browser, pages.url("native.html", relay_server))
    page.evaluate("window.registered")
    add_site_tool(page)
    out = page.evaluate(CONSOLE_TABLE)
    assert out["active"] is True and len(out["sessionId"]) == 8
    assert out["spans"] == 1 and out["aggregates"] == ["set_capacity"] and out["ledgerCalls"] == 1
    s = out["status"]
    assert (s["phase"], s["hostLocation"], s["toolCount"], s["callCount"]) == ("measuring", "document", 18, 1) and s["lastCallAt"] > 0
    assert out["table"] == 1 and out["report"] == 1 and out["reportNoSpans"] == 0 and out["report50"] == 1 and out["reportTool"] == ["set_capacity"]
    assert out["helped"] and out["listened"] == ["set_capacity"] and out["unsub"] == out["unsubUpdate"] == "function"
    assert set(out["described"]) >= {"package", "activation", "console", "span", "ledger", "config", "tool", "relay", "privacy"}
    assert len(out["info"]) == 2 and "summary" in out["info"][0] and "terminal" in out["info"][1]
    assert out["instrument"] == 0 and out["afterReset"] == 0 and out["detached"] is True
    assert errors == []


REGISTER_FROM = {
    # the module, as `import { profilerTool } from "webmcp-profiler/tool"`
    "module": "async (url) => { const { profilerTool } = await import(url); await document.modelContext.registerTool(profilerTool(window.__webmcpPerf)) }",
    # the script tag's global, as webmcp-profiler's IIFE exposes it
    "script-tag": "async () => { await document.modelContext.registerTool(window.WebMCPProfiler.profilerTool(window.__webmcpPerf)) }",
}


@pytest.mark.parametrize("source", sorted(REGISTER_FROM))
def test_let_your_agent_read_it(browser, pages, relay_server, source: str) -> None:
    """`registerTool(profilerTool(profiler))`, then the agent calls get_perf_report through the browser's host."""
    page, errors = open_page(browser, pages.url("native.html", relay_server))
    page.evaluate("window.registered")
    page.evaluate(REGISTER_FROM[source], relay_server.http_url("/agent.mjs"))
    page.evaluate(RUN_ALL, {"names": ["obj", "str", "obj"], "input": {}, "stringInput": False})
    views: dict[str, Any] = {}
    for view, extra in [("summary", {}), ("tools", {}), ("spans", {"limit": 2})]:
        out = page.evaluate(RUN_ALL, {"names": ["get_perf_report"], "input": {"view": view, **extra}, "stringInput": False})
        views[view] = json.loads(out["get_perf_report"]["text"])
    summary = views["summary"]
    assert summary["isError"] is False and summary["content"][0]["type"] == "text"
    sc = summary["structuredContent"]
    assert sc["ok"] is True and sc["format"] == "webmcp-perf-report/2" and sc["meta"]["view"] == "summary"
    assert "tools" not in sc and "spans" not in sc and sc["totals"]["calls"] == 3
    assert [t["tool"] for t in views["tools"]["structuredContent"]["tools"]] == ["obj", "str"], "the report tool never measured"
    spans = views["spans"]["structuredContent"]
    assert [s["seq"] for s in spans["spans"]] == [2, 1] and spans["truncated"] is True
    assert errors == []


@pytest.mark.parametrize(
    "query, active, stored, line",
    [
        ("perf=1", True, "1", None),
        ("perf=on", True, "1", None),
        ("perf=true", True, "1", None),
        ("perf=overlay", True, "overlay", "terminal"),
        ("perf=0", False, None, None),
        ("perf=off", False, None, None),
        ("perf=banana", False, None, "banana"),
    ],
)
def test_the_gate(browser, pages, query: str, active: bool, stored: str | None, line: str | None) -> None:
    context = browser.new_context()
    page = context.new_page()
    logs: list[str] = []
    page.on("console", lambda m: logs.append(m.text))
    if not active:  # remembered on first, so switching off (or not) is seen
        page.goto(pages.url("native.html", agent="/_agent_raw.js") + "&perf=1")
        assert page.evaluate("__webmcpPerf.active") is True
    page.goto(pages.url("native.html", agent="/_agent_raw.js") + "&" + query)
    page.evaluate("window.registered")
    expect_active = active or query == "perf=banana"  # an unknown value changes nothing: the stored "1" applies
    assert page.evaluate("__webmcpPerf.active") is expect_active
    assert page.evaluate("localStorage.getItem('webmcp-perf:mode')") == (stored if query != "perf=banana" else "1")
    if line:
        assert any(line in t for t in logs), logs
    context.close()


def test_off_closes_the_agent_even_when_served_by_the_relay(browser, pages, relay_server) -> None:
    page, _errors = open_page(browser, pages.url("native.html", relay_server) + "&perf=off")
    page.evaluate("window.registered")
    assert page.evaluate("__webmcpPerf.active") is False
    assert page.evaluate("__webmcpPerf.status().phase") == "inactive"


def test_build_your_own_exporter(browser, pages) -> None:
    """{ globalName: false, relay: false, sample } + onSpan: no global, nothing on the channel, spans to the page."""
    context = browser.new_context()
    listener = context.new_page()
    listener.goto(pages.url("listener.html"))
    page = context.new_page()
    page.goto(pages.url("exporter.html", perf="1"))
    page.evaluate("window.registered")
    page.evaluate(RUN_ALL, {"names": ["obj", "str"], "input": {}, "stringInput": False})
    page.wait_for_function("window.__beacons.length === 2")
    beacons = [json.loads(b) for b in page.evaluate("window.__beacons")]
    assert [b["tool"] for b in beacons] == ["obj", "str"] and beacons[1]["gapSincePrevCallMs"] is not None
    assert page.evaluate("typeof window.__webmcpPerf") == "undefined"
    page.evaluate("new BroadcastChannel('webmcp-perf:' + location.origin).postMessage({kind: 'probe'})")
    listener.wait_for_function("window.__channelLog.length >= 1")
    assert listener.evaluate("window.__channelLog") == ['{"kind":"probe"}'], "no span ever reached the other tab"
    context.close()


# ---- bench and compare, with webmcp-profiler's files ------------------------------------------------------


def cli(module: str, *args: str, timeout: int = 240) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", module, *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout)


def test_bench_and_compare_command_lines(chromium: str, site, tmp_path: Path) -> None:
    # npx webmcp-profiler bench URL --runs 40 --json bench.json
    first = cli("relay_bridge.lanes.bench", site.url, "--runs", "40", "--json", str(tmp_path / "base.json"), "--chromium", chromium)
    assert first.returncode == 0, first.stdout + first.stderr
    base = json.loads((tmp_path / "base.json").read_text())
    assert set(base) == {"rows", "boot", "report"}
    assert_valid(base["report"])
    assert base["boot"]["load"] > 0 and base["boot"]["domContentLoaded"] > 0
    rows = {r["tool"]: r for r in base["rows"]}
    assert "update_cart" not in rows and all(r["runs"] == 40 for r in rows.values())
    assert set(rows["get_price"]) >= {
        "name",
        "tool",
        "runs",
        "minMs",
        "p50Ms",
        "p95Ms",
        "maxMs",
        "resultBytes",
        "estTokens",
        "schemaBytes",
        "violations",
    }

    # npx webmcp-profiler bench URL --cases perf.cases.json --allow-mutating update_cart --budget budgets.json (defaults: 40 runs, seed 1)
    (tmp_path / "perf.cases.json").write_text(json.dumps([{"tool": "update_cart", "inputs": [{"sku": "ABC-123", "qty": 2}]}, {"tool": "get_price"}]))
    (tmp_path / "budgets.json").write_text(json.dumps({"get_price": {"p95Ms": 60000, "resultBytes": 1}, "update_cart": {"estTokens": 1000}}))
    second = cli(
        "relay_bridge.lanes.bench",
        site.url,
        "--cases",
        str(tmp_path / "perf.cases.json"),
        "--allow-mutating",
        "update_cart,get_price",
        "--budget",
        str(tmp_path / "budgets.json"),
        "--json",
        str(tmp_path / "head.json"),
        "--chromium",
        chromium,
    )
    assert second.returncode == 1, second.stdout + second.stderr
    head = json.loads((tmp_path / "head.json").read_text())
    rows = {r["tool"]: r for r in head["rows"]}
    assert set(rows) == {"update_cart", "get_price"}, "a cases file names the tools that run"
    assert rows["update_cart"]["runs"] == rows["get_price"]["runs"] == 40
    assert rows["get_price"]["violations"] and "resultBytes" in rows["get_price"]["violations"][0]
    assert rows["update_cart"]["violations"] == []
    assert "resultBytes" in second.stdout.split("budget broken", 1)[1]

    # npx webmcp-profiler compare base.json head.json [--thresholds thresholds.json]
    # (wmcp-top judges by its default thresholds without a file; --no-judge is webmcp-profiler's plain diff)
    plain = cli("relay_bridge.lanes.compare", str(tmp_path / "base.json"), str(tmp_path / "head.json"), "--no-judge")
    assert plain.returncode == 0, "--no-judge: nothing judged"
    (tmp_path / "thresholds.json").write_text(json.dumps({"p95Ms": 100000, "relative": 1000}))
    assert (
        cli(
            "relay_bridge.lanes.compare", str(tmp_path / "base.json"), str(tmp_path / "head.json"), "--thresholds", str(tmp_path / "thresholds.json")
        ).returncode
        == 0
    )
    slower = json.loads((tmp_path / "base.json").read_text())
    for r in slower["report"]["tools"]:
        r["p95Ms"] += 5.0
    (tmp_path / "slower.json").write_text(json.dumps(slower))
    (tmp_path / "tight.json").write_text(json.dumps({"p95Ms": 1}))
    judged = cli(
        "relay_bridge.lanes.compare", str(tmp_path / "base.json"), str(tmp_path / "slower.json"), "--thresholds", str(tmp_path / "tight.json")
    )
    assert judged.returncode == 1
    assert "get_price: regressed: p95Ms" in judged.stdout and "p95Ms limit +1" in judged.stdout
