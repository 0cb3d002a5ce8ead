"""`wmcp-top attach --cdp URL` headless: one line per call; reports with --report-on-exit DIR.

The dashboard form is wired by the front end (tui), which calls `attach(url, store, stop_event=...)` on its own
loop with its own store. Here the store is shared with a relay on `--port` (page agents may connect too) and
the CDP sessions' frames go to the same session log.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
from pathlib import Path
from typing import Any

from relay_bridge import cli as core
from relay_bridge import errors
from relay_bridge.core import protocol as p
from relay_bridge.core.inert import inert_str
from relay_bridge.core.store import Store
from relay_bridge.core.units import fmt_bytes, fmt_ms
from relay_bridge.lanes.cdp.client import START_HINT, CDPError
from relay_bridge.lanes.cdp.lane import CallRecord, attach


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--cdp", required=True, metavar="URL", help="the browser's DevTools endpoint, e.g. http://127.0.0.1:9222")
    core.add_relay_options(parser)
    parser.add_argument("--report-on-exit", metavar="DIR", help="on exit write DIR/<session>.json and DIR/capture.json")
    parser.add_argument(
        "--error-policy", choices=("message", "name", "none"), default="message", help="what to keep of an error (default: message, 200 chars)"
    )
    parser.add_argument("--no-ui", action="store_true", help="no dashboard: one line per call (the default when stdout is not a terminal)")
    parser.epilog = "How to start the browser: " + START_HINT


COMMAND = "attach"


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser = subparsers.add_parser("attach", help="watch a Chrome started with --remote-debugging-port (nothing injected)")
    add_arguments(parser)
    return parser


def call_line(call: CallRecord) -> str:
    outcome = {"Completed": "ok", "Error": "error", "Canceled": "canceled"}.get(call.status, call.status.lower())
    if call.status == "Completed" and call.isError:
        outcome = "isError"
    return f"{call.session} #{call.seq} {inert_str(call.tool, 128)} {outcome} {fmt_ms(call.wallMs)} in {fmt_bytes(call.inputBytes)} out {fmt_bytes(call.resultBytes)}"


async def _main(args: argparse.Namespace) -> int:
    store = Store(buffer=args.buffer)
    relay = await core.start_relay(core.relay_config(args), store)
    log = relay.session_log

    def on_frame(conn: int, raw: bytes, frame: Any) -> None:
        if log is not None:
            log.frame(conn, raw, frame)
        if isinstance(frame, p.Hello):
            info = frame.session
            print(f"{info.id} {inert_str(info.origin + info.path, 200)}: new session, watched over CDP ({inert_str(frame.agent, 80)})", flush=True)
        elif isinstance(frame, p.Bye):
            print(f"{frame.session} ended: {inert_str(frame.reason, 120)}", flush=True)

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    ready = asyncio.Event()

    async def announce() -> None:
        await ready.wait()
        print(f"wmcp-top attach: watching {args.cdp} over the DevTools Protocol (relay on http://127.0.0.1:{relay.port})", flush=True)

    announcer = loop.create_task(announce())
    try:
        lane = await attach(
            args.cdp,
            store,
            stop_event=stop,
            ready=ready,
            error_policy=args.error_policy,
            on_call=lambda call: print(call_line(call), flush=True),
            on_frame=on_frame,
        )
        if lane.no_domain:
            print(
                "wmcp-top attach: the browser refused WebMCP.enable: restart it with --enable-features=WebMCPTesting,DevToolsWebMCPSupport",
                flush=True,
            )
        if not stop.is_set():
            print("wmcp-top attach: the browser closed the DevTools connection", flush=True)
    except CDPError as exc:
        raise errors.UsageError(str(exc)) from None
    finally:
        announcer.cancel()
        await relay.stop()
        if args.report_on_exit:
            for path in core.write_reports(store, Path(args.report_on_exit)):
                print(f"wrote {path}", flush=True)
    return 0


def run(args: argparse.Namespace) -> int:
    try:
        return asyncio.run(_main(args))
    except errors.UsageError as exc:
        return errors.fail(str(exc))
    except KeyboardInterrupt:
        return 130


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="wmcp-top attach", description="Watch WebMCP calls over the DevTools Protocol.")
    add_arguments(parser)
    return run(parser.parse_args(argv))
