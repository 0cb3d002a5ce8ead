"""`wmcp-top mcp`: the Model Context Protocol server over stdio, for coding agents (docs/mcp.md).

Wiring contract (as the other headless lanes): `add_parser(subparsers)`, `run(args)` returns the exit code.
stdout carries the protocol only: whatever this command says for a person goes to stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from relay_bridge.cli import port_type, start_relay
from relay_bridge.errors import UsageError
from relay_bridge.relay.auth import load_key, load_token
from relay_bridge.relay.paths import log_dir, state_dir
from relay_bridge.relay.server import DEFAULT_PORT, RelayConfig

COMMAND = "mcp"


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "mcp",
        help="an MCP server over stdio: coding agents read sessions, findings, reports and before/after (pip install 'wmcp-top[mcp]')",
        description="A Model Context Protocol server over stdio, read-only. It reads the wmcp-top already listening on --port "
        "(the dashboard or `wmcp-top relay`) through its token-gated view, or runs a headless relay there itself when none "
        "listens, so a page's script tag works either way.",
    )
    parser.add_argument("--port", type=port_type, default=DEFAULT_PORT, help=f"the relay's loopback port (default {DEFAULT_PORT})")
    parser.add_argument("--no-log", action="store_true", help="when it runs the relay itself: do not write the session log")
    return parser


def run(args: argparse.Namespace) -> int:
    try:
        import mcp.server.lowlevel  # noqa: F401 - the SDK (an optional extra), checked before any relay starts
    except ImportError:
        raise UsageError("`wmcp-top mcp` needs the MCP SDK: pip install 'wmcp-top[mcp]'") from None
    from relay_bridge.mcp.server import serve

    return asyncio.run(_main(args, serve))


async def _main(args: argparse.Namespace, serve: Any) -> int:
    from relay_bridge.mcp.source import Attached, OwnRelay, Source, probe

    token = load_token()
    found = await asyncio.to_thread(probe, args.port)
    source: Source
    if found is True:
        source = Attached(args.port, token)
        print(f"wmcp-top mcp: reading the wmcp-top on port {args.port}", file=sys.stderr, flush=True)
    elif found is None or args.port == 0:
        config = RelayConfig(
            port=args.port,
            token=token,
            log_dir=None if args.no_log else log_dir(),
            resume_key=load_key(state_dir() / "resume.key"),
        )
        relay = await start_relay(config)
        source = OwnRelay(relay)
        print(f"wmcp-top mcp: no wmcp-top was listening; running the relay on port {relay.port}", file=sys.stderr, flush=True)
        print(relay.snippet.text(), file=sys.stderr, flush=True)
    else:
        raise UsageError(f"port {args.port} is in use by something that is not wmcp-top; try --port")
    try:
        await serve(source)
    finally:
        await source.close()
    return 0
