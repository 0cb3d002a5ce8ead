"""`wmcp-top bench URL`: call a page's read-only tools with generated inputs and write report v2.

Progress goes to stderr: on a terminal the `wmcp-top` command passes a rich progress bar (tui/widgets/bench_progress.py;
relay_bridge never imports rich), run standalone it draws a carriage-return bar; piped, one plain line per tool. The result
table, skipped tools, overhead and budget tables go to stdout. Exit 1 when a budget is broken, 2 on a usage error.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from relay_bridge.cli import port_type, positive_int
from relay_bridge.core.inert import inert_str
from relay_bridge.core.units import fmt_bytes, fmt_count, fmt_ms
from relay_bridge.lanes.bench.runner import (
    BenchError,
    BenchInterrupted,
    bench_rows,
    budget_breaches,
    load_budget,
    load_cases,
    overhead_rows,
    plan_json,
    run_bench,
)
from relay_bridge.lanes.chromium import BrowserError
from relay_bridge.lanes.open.lane import quiet_after_stop


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("url", help="the page to bench (its tools are discovered)")
    parser.add_argument("--runs", type=positive_int, default=40, help="calls per tool (default 40, as webmcp-profiler)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the input generator (default 1): same seed, same inputs")
    parser.add_argument(
        "--cases", metavar="FILE", help='explicit inputs: {"tool": [{...}, ...]} or webmcp-profiler\'s [{"tool", "inputs"}] (cycled to --runs)'
    )
    parser.add_argument(
        "--allow-mutating",
        action="append",
        default=[],
        metavar="A,B",
        help="also call these tools without readOnlyHint (comma-separated, repeatable)",
    )
    parser.add_argument("--only", action="append", default=[], metavar="NAME", help="bench only this tool (repeatable)")
    parser.add_argument("--json", metavar="FILE", help="write {rows, boot, report} (webmcp-profiler's bench JSON; report is webmcp-perf-report/2)")
    parser.add_argument(
        "--budget", metavar="FILE", help="per-tool ceilings (p95Ms, bytes, tokens; webmcp-profiler's resultBytes, estTokens): exit 1 past any"
    )
    parser.add_argument("--param", default="perf", metavar="NAME", help="query parameter set to 1 on the URL when armed (default perf)")
    parser.add_argument("--overhead", action="store_true", help="repeat the run without the agent and print the p50 delta")
    parser.add_argument("--write-cases", metavar="FILE", help="write the generated inputs in the --cases format")
    parser.add_argument("--port", type=port_type, default=0, help="port of the bench's relay (default 0 = any free port)")
    parser.add_argument("--browser", "--chromium", dest="browser", metavar="PATH", help="Chromium to use (default: $WMCP_CHROMIUM, then PATH)")
    parser.add_argument("--headed", action="store_true", help="show the browser window")
    parser.add_argument("--no-agent", action="store_true", help="do not inject the page agent")
    parser.add_argument(
        "--error-policy",
        choices=("message", "name", "none"),
        default="message",
        help="what the agent keeps of an error (default: message, 200 chars)",
    )


COMMAND = "bench"


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser = subparsers.add_parser("bench", help="call a page's read-only tools with generated inputs; report v2")
    add_arguments(parser)
    return parser


class ProgressPrinter:
    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.tty = stream.isatty()
        self.label = ""
        self.open = False  # a carriage-return bar is on the line

    def close(self) -> None:
        if self.open:
            self.stream.write("\n")
            self.stream.flush()
            self.open = False

    def __call__(self, tool: str, done: int, total: int) -> None:
        if self.tty:
            width = 30
            filled = int(width * done / total) if total else width
            self.stream.write(f"\r{self.label}[{'#' * filled}{'.' * (width - filled)}] {done}/{total} {tool[:40]:<40}")
            self.open = True
            if done >= total and not tool:
                self.close()
        elif tool:
            self.stream.write(f"{self.label}bench: {tool} ({done}/{total} calls done)\n")
        else:
            self.stream.write(f"{self.label}bench: {done}/{total} calls done\n")
        self.stream.flush()


def table(rows: Sequence[tuple[str, ...]]) -> str:
    # Cells hold page text (tool names): each made inert, so none starts a line of its own or hides a character.
    rows = [tuple(inert_str(c) for c in r) for r in rows]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(c.ljust(widths[i]) for i, c in enumerate(r)).rstrip() for r in rows)


def result_table(report: dict[str, Any]) -> str:
    rows = [("tool", "calls", "err", "p50", "p95", "max", "bytes/call", "tok/call")]
    for r in report["tools"]:
        if not r["calls"]:
            continue
        rows.append(
            (
                r["tool"],
                str(r["calls"]),
                str(r["errors"]),
                fmt_ms(r["p50Ms"]),
                fmt_ms(r["p95Ms"]),
                fmt_ms(r["maxMs"]),
                fmt_bytes(r["totalBytes"] / r["calls"]),
                fmt_count(r["estTokens"] / r["calls"]),
            )
        )
    return table(rows)


async def _main(args: argparse.Namespace, progress: Any = None) -> int:
    """`progress` is called as progress(tool, done, total) and has a `label`; default: ProgressPrinter(stderr)."""
    cases, listed = load_cases(Path(args.cases)) if args.cases else (None, None)
    only = set(args.only) or listed
    budget = load_budget(Path(args.budget)) if args.budget else None
    progress = progress or ProgressPrinter(sys.stderr)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):  # Ctrl-C stops after the tool under way; what was measured is kept
        loop.add_signal_handler(sig, stop.set)
    loop.set_exception_handler(lambda lp, context: quiet_after_stop(lp, context, stop))
    allow = {name.strip() for arg in args.allow_mutating for name in arg.split(",") if name.strip()}
    common = {
        "runs": args.runs,
        "seed": args.seed,
        "allow_mutating": allow,
        "cases": cases,
        "only": only,
        "port": args.port,
        "browser": args.browser,
        "headless": not args.headed,
        "error_policy": args.error_policy,
        "progress": progress,
        "param": args.param or None,
        "stop": stop,
    }
    try:
        result = await run_bench(args.url, armed=not args.no_agent, **common)
    except BenchInterrupted:
        _end_progress(progress)
        print(f"bench {args.url}: interrupted before any tool's calls were measured; nothing written", flush=True)
        return 130
    if result.interrupted:
        _end_progress(progress)
    report = result.report
    if args.write_cases:
        _write(Path(args.write_cases), plan_json(result.plan))
    calls = sum(len(v) for v in result.plan.inputs.values())
    how = "the host's executeTool" if result.via_host else "the registry's execute()"
    armed = f"agent injected ({result.agent_sessions} session(s) reached the relay)" if result.armed else "no agent"
    print(f"bench {args.url}: {calls} synthetic calls through {how}, seed {args.seed}, {args.runs} per tool; {armed}", flush=True)
    if result.interrupted:
        made = sum(r["calls"] for r in report["tools"])
        lost = f"; the calls of {inert_str(result.unfinished, 80)} were under way and are not counted" if result.unfinished else ""
        print(f"interrupted (Ctrl-C) after {made} of {calls} calls: the tools below finished{lost}", flush=True)
    print(result_table(report))
    for name, why in sorted(result.plan.skipped.items()):
        print(f"skipped {name}: {why}")
    unarmed = None
    if args.overhead and not result.interrupted:
        progress.label = "unarmed "
        try:
            unarmed = await run_bench(args.url, armed=False, plan=result.plan, **common)
        except BenchInterrupted:
            unarmed = None
    if unarmed is not None and unarmed.interrupted:
        _end_progress(progress)
        print("overhead: not measured, the run without the agent was interrupted", flush=True)
        unarmed = None
    if unarmed is not None:
        rows = [("tool", "p50 armed", "p50 unarmed", "delta")]
        for r in overhead_rows(result, unarmed):
            delta = "–" if r["deltaMs"] is None else f"{r['deltaMs']:+.2f}ms"
            rows.append((r["tool"], fmt_ms(r["armedP50Ms"]), fmt_ms(r["unarmedP50Ms"]), delta))
        print("overhead (agent injected vs not, same inputs):")
        print(table(rows))
    if args.json:
        doc = {"rows": bench_rows(result, budget, unarmed), "boot": result.boot, "report": report}
        _write(Path(args.json), json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
        print(f"wrote {args.json}")
    if stop.is_set():
        _end_progress(progress)
        if budget is not None:
            print("budget: not judged, the run was interrupted", flush=True)
        return 130
    if budget is not None:
        broken = budget_breaches(report, budget)
        if broken:
            rows = [("tool", "budget", "limit", "actual")]
            for b in broken:
                fmt = fmt_ms if b["metric"] == "p95Ms" else (fmt_bytes if b["metric"] == "bytes" else fmt_count)
                rows.append((b["tool"], b["metric"], fmt(b["limit"]), fmt(b["actual"])))
            print(f"budget broken ({len(broken)}):")
            print(table(rows), flush=True)
            return 1
        print("budget: every tool within its ceilings")
    return 0


def _end_progress(progress: Any) -> None:
    """Stop the progress bar where Ctrl-C left it, so the lines after it start on a line of their own."""
    close = getattr(progress, "close", None)
    if close is not None:
        close()


def _write(path: Path, text: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise BenchError(f"cannot write {path}: {exc.strerror}") from None


def run(args: argparse.Namespace, progress: Any = None) -> int:
    try:
        return asyncio.run(_main(args, progress))
    except (BenchError, BrowserError) as exc:
        print(f"wmcp-top: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="wmcp-top bench", description="Call a page's read-only WebMCP tools with generated inputs.")
    add_arguments(parser)
    return run(parser.parse_args(argv))
