"""The bench: open a page in Chromium, discover its tools, call them with generated inputs, measure.

One run: a relay on `port` (0 = any free port) serves the page agent, injected before any page script and switched
to synthetic spans, so a dashboard watching that relay sees the bench's calls live. The measurement itself is the
harness's (harness.js): each call timed in the page around the host's own `executeTool`, sizes from the string
the agent received; those numbers become synthetic spans of one bench session in a Store, and the report is
built from it (report v2, the same document as a live session). `overhead=True` repeats the plan in a fresh
context without the agent and reports the per-tool p50 difference.
"""

from __future__ import annotations

import asyncio
import json
import math
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from relay_bridge import __version__
from relay_bridge.core import protocol as p
from relay_bridge.core.measure import call_size, registered_descriptor, schema_bytes
from relay_bridge.core.stats import quantile
from relay_bridge.core.store import Store
from relay_bridge.exports.report import build_report
from relay_bridge.lanes.bench.gen import generate
from relay_bridge.lanes.chromium import init_script, launch_playwright
from relay_bridge.lanes.open.pipe import OpenPipes
from relay_bridge.relay.assets import open_script
from relay_bridge.relay.jsonfile import read_json
from relay_bridge.relay.server import Relay, RelayConfig

HARNESS = (Path(__file__).resolve().parent / "harness.js").read_text(encoding="utf-8")
AGENT_NAME = f"wmcp-top-bench/{__version__}"
SETTLE_MS = 250  # tools are taken as discovered when the registry has not changed for this long
DISCOVER_TIMEOUT_MS = 15000

DISCOVER = """async ([settleMs, timeoutMs]) => {
  const mc = () => document.modelContext || navigator.modelContext || window.modelContext;
  const list = async () => { const h = mc(); if (!h || typeof h.getTools !== "function") return null; return await h.getTools(); };
  const t0 = performance.now();
  let last = -1, since = performance.now();
  for (;;) {
    const tools = await list();
    const n = tools ? tools.length : -1;
    if (n !== last) { last = n; since = performance.now(); }
    if (n > 0 && performance.now() - since >= settleMs) {
      return { host: true, executeTool: typeof mc().executeTool === "function", tools: tools.map((t) => {
        let a = t.annotations || {};
        const descriptor = { name: t.name, title: t.title || undefined, description: t.description, inputSchema: typeof t.inputSchema === "string" ? JSON.parse(t.inputSchema) : t.inputSchema, annotations: t.annotations || undefined };
        return { name: t.name, readOnly: a.readOnlyHint === true, descriptor };
      }) };
    }
    if (performance.now() - t0 > timeoutMs) return { host: !!mc(), tools: tools ? [] : null };
    await new Promise((r) => setTimeout(r, 25));
  }
}"""


BOOT = """() => { const t = performance.getEntriesByType("navigation")[0];
  return { domContentLoaded: t ? t.domContentLoadedEventEnd : 0, load: t ? t.loadEventEnd : 0 } }"""


def with_param(url: str, param: str) -> str:
    """`url` with `param=1` set (replacing any value it had)."""
    parts = urlsplit(url)
    query = [kv for kv in parts.query.split("&") if kv and kv.split("=", 1)[0] != param]
    query.append(f"{param}=1")
    return urlunsplit(parts._replace(query="&".join(query)))


class BenchError(Exception):
    """A problem the user can fix; one line."""


class BenchInterrupted(Exception):
    """Ctrl-C (or SIGTERM) before any tool's calls were measured: nothing to report."""


@dataclass
class Plan:
    """What to call: per tool, its inputs in order; and what was left out and why."""

    inputs: dict[str, list[Any]] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)


@dataclass
class RunResult:
    report: dict[str, Any]
    plan: Plan
    walls: dict[str, list[float]]
    via_host: bool
    armed: bool
    store: Store
    agent_sessions: int = 0
    boot: dict[str, float] = field(default_factory=lambda: {"domContentLoaded": 0.0, "load": 0.0})
    # Ctrl-C half-way: the report holds the tools whose calls all finished; `unfinished` names the one whose calls
    # were under way (the harness returns a tool's rows together, so they went with the browser).
    interrupted: bool = False
    unfinished: str | None = None


def load_cases(path: Path) -> tuple[dict[str, list[Any]], set[str] | None]:
    """(inputs per tool, the tools to run or None for all). wmcp-top's `{"tool": [input, ...]}` (or
    `{"cases": {...}}`) pins inputs and leaves the other tools schema-driven; webmcp-profiler's `[{tool, inputs?},
    ...]` runs exactly the tools it lists (a case without inputs is schema-driven). Each input a JSON object."""
    doc = read_json(path, "cases file", BenchError)
    if isinstance(doc, list):
        cases: dict[str, list[Any]] = {}
        only: set[str] = set()
        for n, case in enumerate(doc):
            if not isinstance(case, dict) or not isinstance(case.get("tool"), str) or not case["tool"]:
                raise BenchError(f'cases file {path}: case {n} needs a tool name ([{{"tool": ..., "inputs": [...]}}])')
            inputs = case.get("inputs")
            if inputs is not None and not (isinstance(inputs, list) and all(isinstance(i, dict) for i in inputs)):
                raise BenchError(f"cases file {path}: case {n} ({case['tool'][:60]}): inputs must be a list of objects")
            only.add(case["tool"])
            if inputs:
                cases.setdefault(case["tool"], []).extend(inputs)
        return cases, only
    if isinstance(doc, dict) and isinstance(doc.get("cases"), dict):
        doc = doc["cases"]
    if not isinstance(doc, dict) or not all(isinstance(v, list) and all(isinstance(i, dict) for i in v) for v in doc.values()):
        raise BenchError(f'cases file {path}: expected {{"tool": [{{input}}, ...]}} or [{{"tool": ..., "inputs": [...]}}]')
    return doc, None


def make_plan(
    tools: list[dict[str, Any]],
    *,
    runs: int,
    seed: int,
    allow_mutating: set[str],
    cases: dict[str, list[Any]] | None = None,
    only: set[str] | None = None,
) -> Plan:
    """Pure: the inputs for every tool that may be called. Read-only tools, plus those allowed by name."""
    plan = Plan()
    for tool in sorted(tools, key=lambda t: t["name"]):
        name = tool["name"]
        if only and name not in only:
            plan.skipped[name] = "not selected"
            continue
        if not tool.get("readOnly") and name not in allow_mutating:
            plan.skipped[name] = "not readOnlyHint (allow with --allow-mutating NAME)"
            continue
        given = (cases or {}).get(name)
        if given:
            plan.inputs[name] = [given[i % len(given)] for i in range(runs)]
        else:
            plan.inputs[name] = generate((tool.get("descriptor") or {}).get("inputSchema"), runs, seed=seed, salt=name)
    return plan


def plan_json(plan: Plan) -> str:
    """The plan in the --cases format: byte-identical for the same page, seed and options."""
    return json.dumps({"cases": plan.inputs}, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


Progress = Callable[[str, int, int], None]


def bench_rows(result: RunResult, budget: dict[str, Any] | None = None, unarmed: RunResult | None = None) -> list[dict[str, Any]]:
    """webmcp-profiler's bench rows (`--json`'s `rows`): per tool run, min/p50/p95/max, the last result's bytes and
    tokens, schema bytes, the budget lines it broke, and `raw` p50/p95 without the agent when measured."""
    broken: dict[str, list[str]] = {}
    for b in budget_breaches(result.report, budget) if budget else []:
        broken.setdefault(b["tool"], []).append(f"{b['metric']} {b['actual']:g} > {b['limit']:g}")
    spans: dict[str, list[dict[str, Any]]] = {}
    for span in result.report["spans"]:
        spans.setdefault(span["tool"], []).append(span)
    rows = []
    for r in result.report["tools"]:
        last = spans.get(r["tool"], [None])[-1]
        row = {
            "name": r["tool"],
            "tool": r["tool"],
            "runs": r["calls"],
            "minMs": r["minMs"],
            "p50Ms": r["p50Ms"],
            "p95Ms": r["p95Ms"],
            "maxMs": r["maxMs"],
            "resultBytes": r["lastResultBytes"],
            "estTokens": last["estTextTokens"] + last["estImageTokens"] if last else 0,
            "schemaBytes": r["schemaBytes"],
            "violations": broken.get(r["tool"], []),
        }
        raw = sorted(unarmed.walls.get(r["tool"], [])) if unarmed else []
        if raw:
            row["raw"] = {"p50Ms": quantile(raw, 0.5), "p95Ms": quantile(raw, 0.95)}
        rows.append(row)
    return rows


async def run_bench(
    url: str,
    *,
    runs: int = 20,
    seed: int = 0,
    allow_mutating: set[str] | None = None,
    cases: dict[str, list[Any]] | None = None,
    only: set[str] | None = None,
    port: int = 0,
    token: str | None = None,
    browser: str | None = None,
    headless: bool = True,
    armed: bool = True,
    error_policy: str = "message",
    progress: Progress | None = None,
    inspect: Callable[[Any], Awaitable[Any]] | None = None,
    before_goto: Callable[[Any], Awaitable[Any]] | None = None,
    plan: Plan | None = None,
    param: str | None = "perf",
    stop: asyncio.Event | None = None,
) -> RunResult:
    """One bench run. `inspect(page)` (tests) runs before the browser closes, `before_goto(page)` before it loads. Armed, the URL gets `?{param}=1` (as
    webmcp-profiler's bench does), so a page's own gate opens too; `param=None` leaves the URL alone.
    `stop` set (Ctrl-C): no further tool is started and the result holds the tools measured so far
    (`interrupted`); set before any tool finished, BenchInterrupted."""
    from relay_bridge.lanes.open.lane import interrupted

    stop = stop or asyncio.Event()
    allow = set(allow_mutating or ())
    relay_store = Store(buffer=max(500, runs * 64))
    relay = Relay(RelayConfig(port=port, token=token or secrets.token_hex(16)), relay_store)
    try:
        await relay.start()
    except OSError as exc:
        raise BenchError(f"cannot listen on port {port}: {exc.strerror}; try --port 0") from None
    measured: dict[str, list[dict[str, Any]]] = {}
    unfinished: str | None = None
    try:
        try:
            pw, b = await launch_playwright(browser=browser, headless=headless)
        except Exception:
            if await interrupted(stop):
                raise BenchInterrupted() from None
            raise
        pipes: OpenPipes | None = None
        try:
            context = await b.new_context()
            if armed:
                # the open lane's agent: its relay socket is a binding held here, so the token never enters the page
                script = open_script()
                if script is None:
                    raise BenchError("the page agent is not built (node page_agent/build.mjs); run with --no-agent")
                pipes = OpenPipes(relay.snippet.ws_url)
                await pipes.install(context, init_script(script))
            page = await context.new_page()
            if before_goto is not None:
                await before_goto(page)
            target = with_param(url, param) if armed and param else url
            try:
                response = await page.goto(target, wait_until="load")
            except Exception as exc:
                raise BenchError(f"cannot open {url}: {str(exc).splitlines()[0][:200]}") from None
            if response is not None and response.status >= 400:
                raise BenchError(f"{url} answered HTTP {response.status}")
            found = await page.evaluate(DISCOVER, [SETTLE_MS, DISCOVER_TIMEOUT_MS])
            user_agent = await page.evaluate("() => navigator.userAgent")
            boot = await page.evaluate(BOOT)
            if not found.get("host"):
                raise BenchError("no WebMCP host in the page (document.modelContext): is Chromium started with WebMCPTesting?")
            tools = found.get("tools") or []
            for tool in tools:  # the host's copy, weighed as the page registered it (one definition: core.measure)
                tool["descriptor"] = registered_descriptor(tool["descriptor"])
                tool["schemaBytes"] = schema_bytes(tool["descriptor"])
            if not tools:
                raise BenchError(f"no tools registered on {url} within {DISCOVER_TIMEOUT_MS // 1000}s")
            names = sorted(str(t["name"]) for t in tools)
            missing = sorted((only or set()) - set(names))
            if plan is None and missing:  # a typo must not pass CI as a run of 0 calls
                raise BenchError(f"no tool named {', '.join(missing)} on {url} (its tools: {', '.join(names)})")
            if plan is None:
                plan = make_plan(tools, runs=runs, seed=seed, allow_mutating=allow, cases=cases, only=only)
            if armed:
                await page.evaluate("() => { const p = window.__webmcpPerf; if (p && typeof p.synthetic === 'function') p.synthetic(true); }")
            total = sum(len(v) for v in plan.inputs.values())
            done = 0
            via_host = bool(found.get("executeTool"))
            for name, inputs in plan.inputs.items():
                if stop.is_set():
                    break
                if progress:
                    progress(name, done, total)
                try:
                    out = await page.evaluate(HARNESS, [name, inputs, error_policy])
                except Exception:
                    if not await interrupted(stop):
                        raise
                    unfinished = name
                    break
                if out.get("error"):
                    raise BenchError(f"{name}: {out['error']}")
                via_host = out["viaHost"]
                measured[name] = out["rows"]
                done += len(inputs)
            if progress and not stop.is_set():
                progress("", done, total)
            if inspect is not None and not stop.is_set():
                await inspect(page)
            agent_sessions = len(relay_store.sessions)
            _registered_bytes(tools, relay_store, url)
        except Exception:
            if await interrupted(stop):  # the browser went with the Ctrl-C before any tool was measured
                raise BenchInterrupted() from None
            raise
        finally:
            await _close(pipes, b, pw, stop)
    finally:
        await relay.stop()
    if stop.is_set() and not measured:
        raise BenchInterrupted()
    store, walls = _to_store(url, tools, measured, runs, user_agent)
    report = build_report(next(iter(store.sessions.values())))
    return RunResult(report, plan, walls, via_host, armed, store, agent_sessions, boot, interrupted=stop.is_set(), unfinished=unfinished)


async def _close(pipes: OpenPipes | None, b: Any, pw: Any, stop: asyncio.Event) -> None:
    """Close the agent's pipes, the browser and Playwright. After a Ctrl-C the driver and Chromium are already gone
    (the signal reached the whole process group): closing them then fails, and that failure is the expected end."""
    try:
        if pipes is not None:
            await pipes.close()
        await b.close()
        await pw.stop()
    except Exception:
        if not stop.is_set():
            raise


def _registered_bytes(tools: list[dict[str, Any]], store: Store, url: str) -> None:
    """Schema bytes have one definition (design section 3): the descriptor as the page registered it, which the
    agent measures and the dashboard shows. The host's copy that getTools() lists is weighed as the page registered
    it (core.measure.registered_descriptor), but annotations the host dropped cannot be seen there, so where the
    agent reported a tool its figure is used; without the agent (--no-agent) only the host's copy is there."""
    parts = urlsplit(url)
    origin = f"{parts.scheme}://{parts.netloc}"
    reported = {
        name: rec.schemaBytes
        for s in store.sessions.values()
        if s.info.origin == origin
        for name, rec in s.tools.items()
        if rec.unregisteredAt is None and rec.rejected is None
    }
    for tool in tools:
        if tool["name"] in reported:
            tool["schemaBytes"] = reported[tool["name"]]


def _to_store(
    url: str, tools: list[dict[str, Any]], measured: dict[str, list[dict[str, Any]]], runs: int, user_agent: str = ""
) -> tuple[Store, dict[str, list[float]]]:
    """Synthetic spans of one bench session, applied to a store through validated frames."""
    total = sum(len(v) for v in measured.values())
    store = Store(buffer=max(500, total))
    conn = 1
    store.connect(conn)
    sid = secrets.token_hex(4)
    parts = urlsplit(url)
    origin = f"{parts.scheme}://{parts.netloc}" if parts.netloc else url[:64]

    def apply(frame: Any) -> None:
        decoded = p.decode(p.encode(frame))
        if isinstance(decoded, p.Rejection):
            store.reject(conn, decoded, sid)
        else:
            store.apply(conn, decoded)

    info = p.SessionInfo(
        id=sid,
        origin=origin[: p.MAX_TEXT],
        path=(parts.path or "/")[: p.MAX_TEXT],
        title="bench",
        userAgent=(user_agent or AGENT_NAME)[: p.MAX_TEXT],
        context="top",
        attachedAt=0.0,
        timeOrigin=time.time() * 1000,
    )
    apply(p.Hello(p.PROTOCOL, AGENT_NAME, info, p.AgentConfig(1.0, store.buffer, "message")))
    import msgspec

    for tool in tools:
        raw = json.dumps(tool["descriptor"], ensure_ascii=False, separators=(",", ":")).encode()
        apply(
            p.ToolChange(
                sid,
                "registered",
                tool["name"][: p.MAX_TOOL_NAME],
                0.0,
                tool["schemaBytes"],
                msgspec.Raw(raw) if len(raw) <= p.MAX_DESCRIPTOR_BYTES else msgspec.Raw(),
            )
        )
    spans: list[p.Span] = []
    walls: dict[str, list[float]] = {}
    seq = 0
    last_settled: float | None = None
    rows = sorted(((r["invokedAt"], name, r) for name, rs in measured.items() for r in rs), key=lambda t: t[0])
    for invoked, name, r in rows:
        size = call_size(r["inputBytes"], r["resultBytes"], r["imageBytes"])
        wall = max(0.0, r["settledAt"] - invoked)
        walls.setdefault(name, []).append(wall)
        spans.append(
            p.Span(
                sessionId=sid,
                seq=seq,
                tool=name,
                invokedAt=max(0.0, invoked),
                settledAt=max(0.0, r["settledAt"]),
                wallMs=wall,
                blockingMs=0.0,
                inputBytes=size.inputBytes,
                resultBytes=size.resultBytes,
                contentTypes=dict(list(r["contentTypes"].items())[:16]),
                imageBytes=size.imageBytes,
                estInputTokens=size.estInputTokens,
                estTextTokens=size.estTextTokens,
                estImageTokens=size.estImageTokens,
                estTokens=size.estTokens,
                isError=bool(r["isError"]),
                error=r.get("error"),
                gapSincePrevCallMs=None if last_settled is None else max(0.0, invoked - last_settled),
                synthetic=True,
                serializable=bool(r["serializable"]),
                resultType=r["resultType"]
                if r["resultType"] in ("object", "array", "string", "number", "boolean", "null", "undefined", "error", "unserializable")
                else None,
                envelope=bool(r["envelope"]),
                overlapped=False,
                errorType=r.get("errorType"),
            )
        )
        last_settled = r["settledAt"]
        seq += 1
    for i in range(0, len(spans), p.MAX_SPANS_PER_FRAME):
        apply(p.Spans(sid, spans[i : i + p.MAX_SPANS_PER_FRAME]))
    apply(p.Status(sid, "measuring" if spans else "tools-registered", f"bench: {len(spans)} synthetic calls", []))
    apply(p.Bye(sid, "bench finished"))
    return store, walls


# -- budgets ----------------------------------------------------------------------------------------------------

BUDGET_FORMAT = "wmcp-top-budget/1"
BUDGET_KEYS = {
    "p95Ms": "p95 ms",
    "bytes": "result bytes (largest call)",
    "tokens": "est. tokens (largest call)",
    # webmcp-profiler's keys, with its meaning: the last call's result
    "resultBytes": "result bytes (last call)",
    "estTokens": "est. result tokens (last call)",
}


def load_budget(path: Path) -> dict[str, Any]:
    return check_budget(read_json(path, "budget file", BenchError))


def check_budget(doc: Any) -> dict[str, Any]:
    """`{"format"?: "wmcp-top-budget/1", "default"?: {p95Ms, bytes, tokens}, "tools"?: {name: {...}}}`, or
    webmcp-profiler's `{tool: {p95Ms, resultBytes, estTokens}}` (read as `tools`). Returns wmcp-top's shape."""
    if not isinstance(doc, dict):
        raise BenchError("budget must be a JSON object")
    if doc and not set(doc) <= {"format", "default", "tools"}:
        doc = {"format": BUDGET_FORMAT, "tools": doc}
    if doc.get("format", BUDGET_FORMAT) != BUDGET_FORMAT:
        raise BenchError(f"budget: unknown format (expected {BUDGET_FORMAT})")
    unknown = set(doc) - {"format", "default", "tools"}
    if unknown:
        raise BenchError(f"budget: unknown key {sorted(unknown)[0]!r}")
    for where, limits in [("default", doc.get("default") or {})] + [(f"tools.{k}", v) for k, v in (doc.get("tools") or {}).items()]:
        if not isinstance(limits, dict):
            raise BenchError(f"budget {where} must be an object")
        for key, value in limits.items():
            if key not in BUDGET_KEYS:
                raise BenchError(f"budget {where}: unknown key {key!r} (known: {', '.join(BUDGET_KEYS)})")
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
                raise BenchError(f"budget {where}.{key} must be a number >= 0")
    return doc


def budget_breaches(report: dict[str, Any], budget: dict[str, Any]) -> list[dict[str, Any]]:
    """Every (tool, metric) over its ceiling: `{tool, metric, limit, actual}`."""
    default = budget.get("default") or {}
    per_tool = budget.get("tools") or {}
    spans_by_tool: dict[str, list[dict[str, Any]]] = {}
    for span in report["spans"]:
        spans_by_tool.setdefault(span["tool"], []).append(span)
    out = []
    for row in report["tools"]:
        if not row["calls"]:
            continue
        limits = {**default, **per_tool.get(row["tool"], {})}
        spans = spans_by_tool.get(row["tool"], [])
        last = spans[-1] if spans else None
        actual = {
            "p95Ms": row["p95Ms"],
            "bytes": max((s["resultBytes"] for s in spans), default=0),
            "tokens": max((s["estTokens"] for s in spans), default=0),
            "resultBytes": row["lastResultBytes"],
            "estTokens": last["estTextTokens"] + last["estImageTokens"] if last else 0,
        }
        for key, limit in limits.items():
            if actual[key] is not None and actual[key] > limit:
                out.append({"tool": row["tool"], "metric": key, "limit": limit, "actual": actual[key]})
    return out


def overhead_rows(armed: RunResult, unarmed: RunResult) -> list[dict[str, Any]]:
    rows = []
    for name in sorted(armed.walls):
        a = quantile(sorted(armed.walls[name]), 0.5)
        u = quantile(sorted(unarmed.walls.get(name, [])), 0.5)
        rows.append({"tool": name, "armedP50Ms": a, "unarmedP50Ms": u, "deltaMs": None if a is None or u is None else a - u})
    return rows
