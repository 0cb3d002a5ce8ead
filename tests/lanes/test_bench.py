"""bench end to end against the fixture site in Chromium's native host."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from relay_bridge.lanes.bench import plan_json, run_bench
from tests.liveness import LIVENESS_S

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "relay_bridge" / "schema" / "report.v2.json").read_text())
READ_ONLY = 11  # of the fixture's 12 tools, update_cart is the one without readOnlyHint


def page_state() -> tuple[dict[str, Any], Any]:
    seen: dict[str, Any] = {}

    async def inspect(page: Any) -> None:
        seen.update(await page.evaluate("() => JSON.parse(JSON.stringify(window.__fixture))"))

    return seen, inspect


async def test_same_seed_same_inputs_and_calls_mutating_untouched(chromium: str, site) -> None:
    first, inspect1 = page_state()
    a = await run_bench(site.url, runs=3, seed=11, browser=chromium, inspect=inspect1)
    second, inspect2 = page_state()
    b = await run_bench(site.url, runs=3, seed=11, browser=chromium, inspect=inspect2, armed=False)
    # byte-identical inputs, as planned and as the page received them
    assert plan_json(a.plan) == plan_json(b.plan)
    assert first["inputs"] == second["inputs"] and len(first["inputs"]) == 3 * READ_ONLY
    assert Counter(s["tool"] for s in a.report["spans"]) == Counter(s["tool"] for s in b.report["spans"])
    assert first["calls"] == second["calls"] and all(n == 3 for n in first["calls"].values())
    # the mutating tool was never called
    assert "update_cart" not in first["calls"] and first["mutations"] == 0
    assert "update_cart" in a.plan.skipped
    assert a.via_host is True
    assert a.agent_sessions >= 1  # armed: the injected agent reached the bench's relay
    assert "Chrome/" in a.report["session"]["userAgent"]
    # synthetic spans, schema-valid report, sizes of what the agent received
    jsonschema.Draft202012Validator(SCHEMA).validate(a.report)
    assert all(s["synthetic"] for s in a.report["spans"])
    rows = {r["tool"]: r for r in a.report["tools"]}
    assert rows["flaky_lookup"]["errors"] == 3 and rows["soft_error"]["errors"] == 3
    assert rows["ping_empty"]["totalBytes"] == 3 * len("Operation succeeded")
    assert rows["slow_report"]["p50Ms"] >= 50
    # registered (schema bytes counted in the ledger), not called: no row, as in webmcp-profiler
    assert "update_cart" not in rows and a.report["ledger"]["tools"]["update_cart"]["schemaBytes"] > 0
    images = [s for s in a.report["spans"] if s["tool"] == "render_chart"]
    assert all(s["imageBytes"] > 0 and s["estImageTokens"] > 0 for s in images)
    # another seed: other inputs
    other = await run_bench(site.url, runs=3, seed=12, browser=chromium, armed=False)
    assert plan_json(other.plan) != plan_json(a.plan)


async def test_allow_mutating_calls_it(chromium: str, site) -> None:
    seen, inspect = page_state()
    result = await run_bench(
        site.url, runs=2, seed=0, browser=chromium, armed=False, allow_mutating={"update_cart"}, only={"update_cart", "get_price"}, inspect=inspect
    )
    assert seen["mutations"] == 2 and seen["calls"] == {"update_cart": 2, "get_price": 2}
    assert set(result.plan.inputs) == {"update_cart", "get_price"}
    assert all(json.loads(i[1])["sku"][3] == "-" for i in seen["inputs"] if i[0] == "update_cart")


def test_cli_budget_breach_exits_one_and_names_the_tool(chromium: str, site, tmp_path: Path) -> None:
    budget = {"format": "wmcp-top-budget/1", "default": {"p95Ms": 5000}, "tools": {"slow_report": {"p95Ms": 20}, "search_products": {"bytes": 50}}}
    (tmp_path / "budget.json").write_text(json.dumps(budget))
    (tmp_path / "cases.json").write_text(json.dumps({"echo_note": [{"note": "from the cases file"}]}))
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "relay_bridge.lanes.bench",
            site.url,
            "--runs",
            "2",
            "--seed",
            "3",
            "--budget",
            str(tmp_path / "budget.json"),
            "--cases",
            str(tmp_path / "cases.json"),
            "--json",
            str(tmp_path / "r.json"),
            "--write-cases",
            str(tmp_path / "plan.json"),
            "--overhead",
            "--browser",
            chromium,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 1, out.stdout + out.stderr
    assert "overhead (agent injected vs not, same inputs):" in out.stdout
    assert "budget broken (2)" in out.stdout
    broken = out.stdout.split("budget broken", 1)[1]
    assert "slow_report" in broken and "p95Ms" in broken and "search_products" in broken and "bytes" in broken
    assert "get_price" not in broken
    # piped: plain progress lines, no carriage returns
    assert "\r" not in out.stderr and "bench: 22/22 calls done" in out.stderr
    written = json.loads((tmp_path / "r.json").read_text())
    assert set(written) == {"rows", "boot", "report"}
    jsonschema.Draft202012Validator(SCHEMA).validate(written["report"])
    plan = json.loads((tmp_path / "plan.json").read_text())
    assert plan["cases"]["echo_note"] == [{"note": "from the cases file"}] * 2
    # the written plan is itself a cases file: running from it gives the same inputs
    again = subprocess.run(
        [
            sys.executable,
            "-m",
            "relay_bridge.lanes.bench",
            site.url,
            "--runs",
            "2",
            "--cases",
            str(tmp_path / "plan.json"),
            "--write-cases",
            str(tmp_path / "plan2.json"),
            "--no-agent",
            "--browser",
            chromium,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert again.returncode == 0, again.stderr
    assert (tmp_path / "plan2.json").read_bytes() == (tmp_path / "plan.json").read_bytes()


def test_cli_usage_errors_are_one_line(tmp_path: Path, site) -> None:
    (tmp_path / "budget.json").write_text(json.dumps({"tools": {"x": {"p99": 1}}}))
    out = subprocess.run(
        [sys.executable, "-m", "relay_bridge.lanes.bench", site.url, "--budget", str(tmp_path / "budget.json")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("wmcp-top: budget") and "p99" in lines[0]
    missing = subprocess.run(
        [sys.executable, "-m", "relay_bridge.lanes.bench", site.url, "--browser", str(tmp_path / "no-such-chromium")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert missing.returncode == 2 and "apt-get install -y chromium" in missing.stderr


def test_progress_is_a_carriage_return_bar_on_a_terminal_and_lines_when_piped() -> None:
    import io

    from relay_bridge.lanes.bench.cli import ProgressPrinter

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    tty, piped = Tty(), io.StringIO()
    for stream in (tty, piped):
        bar = ProgressPrinter(stream)
        bar("search", 0, 4)
        bar("price", 2, 4)
        bar("", 4, 4)
    assert tty.getvalue().count("\r") == 3 and "[###############...............] 2/4" in tty.getvalue()
    assert "\r" not in piped.getvalue() and piped.getvalue().splitlines() == [
        "bench: search (0/4 calls done)",
        "bench: price (2/4 calls done)",
        "bench: 4/4 calls done",
    ]


def test_only_a_tool_the_page_does_not_have_is_refused(chromium: str, site) -> None:
    """Issue 34: `bench URL --only nosuch` ran 0 calls and exited 0: a typo passed CI."""
    out = subprocess.run(
        [sys.executable, "-m", "tui.cli", "bench", site.url, "--only", "nosuch", "--only", "get_price", "--no-agent", "--browser", chromium],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 2, out.stdout + out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("wmcp-top: no tool named nosuch on "), out.stderr
    assert "get_price" in lines[0] and "search_products" in lines[0]  # the tools there are, so the typo is plain


async def test_schema_bytes_are_those_of_the_registered_descriptor(chromium: str, site) -> None:
    """Issue 34: one tool had 214 B on the dashboard and 287 B in `bench --json` (the host's normalised copy from
    getTools). Design section 3: UTF-8 bytes of JSON.stringify({name, title, description, inputSchema,
    annotations}) as registered; computed here apart from the agent, by running the fixture's script in node."""
    script = (ROOT / "tests" / "lanes" / "site" / "tools.js").read_text()
    node = (
        "const reg = []; globalThis.window = globalThis; globalThis.navigator = {};"
        "globalThis.document = { modelContext: { registerTool: async (t) => { reg.push(t) } } };"
        f"{script}\n"
        "window.__fixtureReady.then(() => process.stdout.write(JSON.stringify(Object.fromEntries(reg.map((t) =>"
        " [t.name, Buffer.byteLength(JSON.stringify({ name: t.name, title: t.title, description: t.description,"
        " inputSchema: t.inputSchema, annotations: t.annotations }))])))))"
    )
    truth = json.loads(subprocess.run(["node", "-e", node], capture_output=True, text=True, timeout=LIVENESS_S, check=True).stdout)
    result = await run_bench(site.url, runs=1, seed=0, browser=chromium, armed=True, only={"search_products", "get_price"})
    got = {r["tool"]: r["schemaBytes"] for r in result.report["tools"]}
    assert got == {name: truth[name] for name in got} and set(got) == {"search_products", "get_price"}


async def test_an_armed_run_keeps_the_relay_token_out_of_the_page(chromium: str, site) -> None:
    """Issue 31: the bench injected the script-tag agent, whose relay URL carries the token, so the page under test
    could read it (a page that hooks `WebSocket.prototype.send` finds it in `this.url`). Now it injects the open lane's agent, whose
    socket is a binding held in Python: the page sees no WebSocket and no token, and every call is still recorded."""
    token = "be7c4a11" * 4
    seen: dict[str, Any] = {}

    async def inspect(page: Any) -> None:
        seen.update(
            await page.evaluate(
                """() => ({
                    html: document.documentElement.outerHTML,
                    scripts: [...document.scripts].map((s) => s.textContent).join("\\n"),
                    entries: performance.getEntries().map((e) => e.name).join("\\n"),
                    perf: JSON.stringify(globalThis.__webmcpPerf?.relay?.() ?? null),
                    sockets: globalThis.__wsOpened ?? [],
                })"""
            )
        )

    async def patch(page: Any) -> None:
        # what a hostile page does: hook every socket's send, where `this.url` is the relay's URL and its token
        await page.add_init_script(
            "window.__wsOpened = []; const send = WebSocket.prototype.send;"
            "WebSocket.prototype.send = function (d) { window.__wsOpened.push(String(this.url)); return send.call(this, d) }"
        )

    result = await run_bench(
        site.url, runs=2, seed=0, browser=chromium, armed=True, only={"search_products", "get_price"}, token=token, inspect=inspect, before_goto=patch
    )
    assert seen and seen["sockets"] == [], seen["sockets"]
    assert all(token not in str(v) for v in seen.values()), "the token reached the page"
    assert {r["tool"]: r["calls"] for r in result.report["tools"]} == {"search_products": 2, "get_price": 2}
    assert result.agent_sessions >= 1, "the agent's frames reached the relay through the binding"
