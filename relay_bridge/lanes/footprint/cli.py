"""`wmcp-top footprint`: measure what tool definitions cost, from files, the bundled demo, or a capture.

Wiring contract: `add_parser(subparsers)` adds the subcommand to the `wmcp-top` parser; `run(args)` runs it and
returns the exit code. Problems the user can fix print one line, `wmcp-top: ...`, on stderr and return 2.
Option destinations are prefixed `footprint_` so they never collide with the top-level `--demo` and friends.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from relay_bridge.core.canonical import escape_surrogates
from relay_bridge.lanes.footprint.analyze import analyze_catalog
from relay_bridge.lanes.footprint.errors import FootprintError
from relay_bridge.lanes.footprint.files import InputSpec, check_writable, read_capture, read_demo, read_inputs, write_new
from relay_bridge.lanes.footprint.html import render_html
from relay_bridge.lanes.footprint.inputs import Server
from relay_bridge.lanes.footprint.text import summary_lines

COMMAND = "footprint"


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "footprint",
        help="measure tool definition bytes, repeated definitions and descriptor problems (offline)",
        description="Measure canonical tool definition bytes from captured tools/list data, a wmcp-top capture, "
        "or the bundled synthetic demo; find repeated definitions across servers and lint descriptors.",
    )
    add_options(parser)
    return parser


def add_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--input",
        dest="footprint_inputs",
        action="append",
        default=[],
        metavar="[NAME=]PATH",
        help="a tools/list result, JSON-RPC response or servers aggregate (repeatable; NAME defaults to the file stem)",
    )
    parser.add_argument("--demo", dest="footprint_demo", action="store_true", help="use the bundled synthetic snapshots")
    parser.add_argument(
        "--from-capture", dest="footprint_capture", metavar="FILE", help="the tools registered in a wmcp-top capture (one server per session)"
    )
    parser.add_argument("--html", dest="footprint_html", metavar="FILE", help="write a self-contained HTML report (never overwrites)")
    parser.add_argument("--json", dest="footprint_json", metavar="FILE", help="write the JSON report, wmcp-top-footprint/1 (never overwrites)")
    parser.add_argument(
        "--strict",
        dest="footprint_strict",
        action="store_true",
        help="refuse a tool whose inputSchema is null or absent, as mcp-footprint does (default: measure it and lint it)",
    )
    parser.add_argument("--top", dest="footprint_top", type=int, default=10, metavar="N", help="largest tools listed in the terminal (default 10)")


def report_json(report: dict[str, Any]) -> str:
    """The JSON report as text: stable key order, UTF-8, lone surrogates escaped so the file is valid UTF-8."""
    return escape_surrogates(json.dumps(report, indent=1, ensure_ascii=False)) + "\n"


def build(args: argparse.Namespace) -> tuple[dict[str, Any], list[Server]]:
    """Read the chosen source and analyse it."""
    chosen = [bool(args.footprint_inputs), args.footprint_demo, args.footprint_capture is not None]
    if sum(chosen) != 1:
        raise FootprintError("footprint needs exactly one source: --input FILE (repeatable), --demo, or --from-capture FILE")
    notes: list[str] = []
    if args.footprint_demo:
        servers, rows = read_demo()
        source = {"kind": "demo", "label": "synthetic snapshots", "inputs": rows}
    elif args.footprint_capture is not None:
        servers, rows, notes = read_capture(args.footprint_capture)
        source = {"kind": "capture", "label": f"capture {args.footprint_capture}", "inputs": rows}
    else:
        specs = [InputSpec.parse(text) for text in args.footprint_inputs]
        servers, rows = read_inputs(specs)
        label = specs[0].path if len(specs) == 1 else f"{len(specs)} inputs"
        source = {"kind": "files", "label": label, "inputs": rows}
    return analyze_catalog(servers, source, notes=notes, strict=args.footprint_strict), servers


def run(args: argparse.Namespace) -> int:
    try:
        if args.footprint_top < 0:
            raise FootprintError("--top must be 0 or more")
        outputs = [p for p in (args.footprint_html, args.footprint_json) if p is not None]
        check_writable(outputs)
        report, _ = build(args)
        lines = summary_lines(report, top=args.footprint_top)
        if args.footprint_html is not None:
            write_new(args.footprint_html, render_html(report))
            lines.append(f"wrote {args.footprint_html}")
        if args.footprint_json is not None:
            write_new(args.footprint_json, report_json(report))
            lines.append(f"wrote {args.footprint_json}")
    except FootprintError as exc:
        print(f"wmcp-top: {exc}", file=sys.stderr)
        return 2
    sys.stdout.write("\n".join(lines) + "\n")
    sys.stdout.flush()
    return 0
