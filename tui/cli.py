"""The `wmcp-top` command line. Headless commands run without importing Textual."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from collections.abc import Callable
from typing import Any

from relay_bridge import __version__, errors
from relay_bridge import cli as core
from relay_bridge.core.inert import inert_output
from tui import starting


class TopParser(core.OneLineParser):
    """The top-level parser: after parsing, options given before the subcommand are placed (place_top_options),
    so every caller of parse_args (main, tests, scripts) gets the same namespace."""

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        mistake = before_command(self, sys.argv[1:] if args is None else list(args))
        if mistake is not None:
            self.error(mistake)
        parsed, extras = super().parse_known_args(args, namespace)
        try:
            place_top_options(self, parsed)
        except errors.UsageError as exc:
            self.error(str(exc))
        return parsed, extras


def build_parser() -> argparse.ArgumentParser:
    parser = TopParser(
        prog="wmcp-top",
        description="A terminal profiler for WebMCP: page compute, payload weight and host wait, live.",
    )
    parser.add_argument("--version", action="version", version=f"wmcp-top {__version__}")
    core.add_relay_options(parser)
    parser.add_argument("--theme", default=None, help="theme name (built-in or a file in the config dir)")
    parser.add_argument("--export-dir", default=None, help="where e/E/t/ctrl+s write (default: user data dir)")
    parser.add_argument(
        "--demo", action="store_true", help="feed the dashboard a synthetic demo over a real socket (on the usual port when it is free, else on any)"
    )
    parser.add_argument("--seed", type=int, default=None, help="the demo's random seed (default 7: the same feed every run)")
    parser.add_argument("--demo-speed", type=core.positive_float, default=1.0, help="play the demo at this many times real time (above 0)")
    _hold_top_options(parser)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=core.OneLineParser)

    relay = sub.add_parser("relay", help="run the relay headless, print one summary line per session")
    core.add_relay_options(relay)
    relay.add_argument("--report-on-exit", metavar="DIR", help="on Ctrl-C/SIGTERM write DIR/<session>.json and DIR/capture.json")
    relay.add_argument(
        "--summary-every",
        metavar="SECONDS",
        type=core.positive_float,
        default=core.SUMMARY_EVERY,
        help=f"print the summary lines every SECONDS (above 0; default {core.SUMMARY_EVERY:g})",
    )

    snippet = sub.add_parser("snippet", help="print the script tag, console import() and bookmarklet")
    snippet.add_argument(
        "--port", type=core.listening_port, default=None, help=f"the port the relay listens on, 1..65535 (default {core.DEFAULT_PORT})"
    )
    snippet.add_argument("--rotate-token", action="store_true", help="make a new token first (pasted snippets stop working)")

    replay = sub.add_parser("replay", help="open a session log or capture in the UI, or write reports with --report")
    replay.add_argument("file", help="a session log (session-*.jsonl; later parts of a rotated run follow) or a capture (capture-*.json)")
    replay.add_argument("--report", metavar="DIR", help="write reports headlessly instead of opening the UI")
    replay.add_argument("--speed", type=core.speed_type, default=0.0, help="replay in real time x SPEED (0 = all at once)")
    replay.add_argument("--theme", default=None, help="dashboard theme (built-in or a file in the config dir)")
    replay.add_argument("--export-dir", default=None, help="where e/E/t/ctrl+s write in the dashboard")
    for lane in headless_lanes():
        lane_parser = lane.add_parser(sub)
        if lane.COMMAND in UI_FORMS:
            UI_FORMS[lane.COMMAND](lane_parser)
    return parser


def before_command(parser: argparse.ArgumentParser, argv: list[str]) -> str | None:
    """The mistake in what comes before the command, named: argparse takes an unknown option's value for the
    command (`--prot 7421` was "invalid choice: '7421'"). Walks the options up to the command word; None when
    they and the command are all known."""
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    commands = list(sub.choices)
    known = core.option_strings(parser)
    i = 0
    while i < len(argv):
        word = argv[i]
        if word == "--":
            return None
        if not word.startswith("-") or word == "-":
            return None if word in sub.choices else core.unknown_command(word, commands)
        name = word.split("=", 1)[0]
        matches = [o for o in parser._option_string_actions if o == name] or [o for o in known if o.startswith(name) and len(name) > 2]
        if len(matches) != 1:
            owners = [c for c, p in sub.choices.items() if name in p._option_string_actions]
            if owners and not matches:
                return f"{name} is an option of `wmcp-top {owners[0]}`: put it after the command (wmcp-top {owners[0]} … {name})"
            if matches:
                return None  # ambiguous: argparse names the candidates
            return core.unknown_option(word, known)
        takes_value = parser._option_string_actions[matches[0]].nargs != 0
        i += 2 if takes_value and "=" not in word else 1
    return None


TOP = "top:"
TOP_DEFAULTS: dict[str, Any] = {}


def _hold_top_options(parser: argparse.ArgumentParser) -> None:
    """Options before the subcommand get a dest of their own: argparse lets a subcommand's defaults overwrite
    them (`wmcp-top --port 7431 relay` listened on 7420). `place_top_options` then honours or refuses each."""
    for action in parser._actions:
        if action.option_strings and action.dest not in ("help", "version"):
            TOP_DEFAULTS[action.dest] = action.default
            if action.metavar is None and action.nargs != 0:  # --help shows PORT, not the held dest's TOP:PORT
                action.metavar = action.dest.upper()
            action.dest, action.default = TOP + action.dest, None


def place_top_options(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """An option given before the subcommand counts as if given after it when the subcommand has it; when it
    does not (`--demo relay`), or both places name it differently, it is a usage error, never ignored."""
    command = args.command
    sub = next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)
    target = sub.choices[command] if command is not None and sub is not None else None
    for action in parser._actions:
        if not action.dest.startswith(TOP):
            continue
        dest = action.dest[len(TOP) :]
        given = getattr(args, action.dest)
        delattr(args, action.dest)
        if target is None:
            setattr(args, dest, TOP_DEFAULTS[dest] if given is None else given)
            continue
        if given is None:
            if not hasattr(args, dest):  # as before: code reading the dashboard's options finds their defaults
                setattr(args, dest, TOP_DEFAULTS[dest])
            continue
        option = action.option_strings[0]
        theirs = next((a for a in target._actions if a.dest == dest), None)
        if theirs is None:
            raise errors.UsageError(f"{option} is not an option of `wmcp-top {command}`; put options after the command")
        current = getattr(args, dest, theirs.default)
        if current not in (theirs.default, given):
            raise errors.UsageError(f"{option} is given both before and after `{command}`: give it once")
        setattr(args, dest, given)


def _attach_ui(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Watch a Chrome started with --remote-debugging-port, with nothing injected in the page. Opens the dashboard "
        "(CDP sessions are marked 'cdp' in their tabs; d shows how to start Chrome for it). When stdout is not a "
        "terminal (piped, CI), or with --no-ui, it prints one line per call instead. A DevTools endpoint that cannot be reached exits with code 2."
    )
    parser.add_argument("--theme", default=argparse.SUPPRESS, help="dashboard theme")
    parser.add_argument("--export-dir", default=argparse.SUPPRESS, help="where e/E/t/ctrl+s write in the dashboard")


def _open_ui(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Open URL in Chromium with WebMCP on and the page agent injected before any page script, and watch it in the "
        "dashboard: closing the browser quits wmcp-top, quitting wmcp-top closes the browser. When stdout is not a "
        "terminal (piped, CI), or with --no-ui, it prints one line per session instead of the dashboard. "
        "--headless is about the browser window (no window), not the dashboard."
    )
    parser.add_argument("--no-ui", action="store_true", help="no dashboard: one line per session (the default when stdout is not a terminal)")
    parser.add_argument("--theme", default=argparse.SUPPRESS, help="dashboard theme")
    parser.add_argument("--export-dir", default=argparse.SUPPRESS, help="where e/E/t/ctrl+s write in the dashboard")


# Lanes that also have a dashboard form: the parser gets its options; `wants_ui` says which form runs.
UI_FORMS = {"attach": _attach_ui, "open": _open_ui}


def wants_ui(args: argparse.Namespace) -> bool:
    """attach and open: the dashboard unless --no-ui or stdout is not a terminal (one meaning for both; open's
    --headless is about the browser window; open --check-lanes never opens it)."""
    if args.command in ("attach", "open"):
        return not args.no_ui and not getattr(args, "check_lanes", False) and sys.stdout.isatty()
    return False


def headless_lanes() -> list:
    """Subcommands that live in relay_bridge and run without the UI: each has add_parser(sub) and run(args)."""
    from relay_bridge.findings import cli as diagnose
    from relay_bridge.lanes import compare
    from relay_bridge.lanes.bench import cli as bench
    from relay_bridge.lanes.cdp import cli as attach
    from relay_bridge.lanes.footprint import cli as footprint
    from relay_bridge.lanes.open import lane as browser
    from relay_bridge.mcp import cli as mcp_server
    from relay_bridge.relay import extension

    return [footprint, compare, bench, attach, browser, extension, diagnose, mcp_server]


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        core.check_output_dirs(args)
        if not (args.command == "replay" and args.report):  # everything else keeps a token or a log
            core.check_state_dirs()
        headless = headless_command(args)
        if headless is None:
            from tui.run import run_app  # Textual is imported only for the UI

            settle_demo_port(args)

            started(ui=True)
            return run_app(args)
        started()
        # What a headless command prints can hold page text (origins, tool names): never let it reach the
        # terminal as control sequences.
        with inert_output():
            return headless()
    except errors.UsageError as exc:
        with inert_output():
            return errors.fail(str(exc))
    except BrokenPipeError:
        # The reader went away (`wmcp-top snippet | head -1`): stop quietly, as a tool killed by SIGPIPE does, and
        # point stdout at /dev/null so the interpreter's final flush cannot complain either.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except OSError as exc:
        # A file-system fault the start checks could not foresee (the disk went read-only meanwhile): one line.
        with inert_output():
            return errors.fail(f"{exc.filename or 'file'}: {exc.strerror or exc}")
    except KeyboardInterrupt:
        return 130


def settle_demo_port(args: argparse.Namespace, usual: int = core.DEFAULT_PORT) -> None:
    """`--demo` feeds its own relay, so any port serves: the usual one when free, else one the system picks (a
    wmcp-top already running there is no reason to refuse the demo). Another --port is taken as given."""
    if args.command is None and args.demo and args.port == usual and not core.port_free(usual):
        args.port = 0


def started(ui: bool = False) -> None:
    """The program is loaded: from here a Ctrl-C is the command's to handle (KeyboardInterrupt, or the handler of
    its own event loop, which stops it cleanly), no longer tui.__main__'s exit during the imports. The dashboard's
    is noted until the app is mounted (tui/starting.py)."""
    handler = signal.getsignal(signal.SIGINT)
    if getattr(handler, "__qualname__", None) == "_stop_at_once" and threading.current_thread() is threading.main_thread():
        if ui:
            starting.hold()
        else:
            signal.signal(signal.SIGINT, signal.default_int_handler)


def headless_command(args: argparse.Namespace) -> Callable[[], int] | None:
    """The command to run without the dashboard, or None for the UI."""
    if args.command == "relay":
        return lambda: core.cmd_relay(args)
    if args.command == "snippet":
        return lambda: core.cmd_snippet(args)
    if args.command == "replay" and args.report:
        return lambda: core.cmd_replay_report(args)
    if args.command == "bench" and sys.stderr.isatty():
        from rich.console import Console

        from relay_bridge.lanes.bench import cli as bench
        from tui.widgets.bench_progress import RichBenchProgress  # rich, not Textual: the bench has no dashboard

        progress = RichBenchProgress(Console(file=sys.stderr))  # our own escapes: bound before stderr is made inert
        return lambda: bench.run(args, progress=progress)
    for lane in headless_lanes():
        if args.command == lane.COMMAND and not wants_ui(args):
            return lambda: lane.run(args)
    return None


if __name__ == "__main__":
    sys.exit(main())
