"""Headless commands: `wmcp-top relay`, `wmcp-top snippet`, `wmcp-top replay FILE --report DIR`.

The `wmcp-top` entry point (tui/cli.py) parses the command line and calls these without importing Textual.
Errors are one clear line on stderr and exit code 2.
"""

from __future__ import annotations

import argparse
import asyncio
import difflib
import errno
import os
import signal
import socket
import sys
from pathlib import Path
from typing import Any, NoReturn
from urllib.parse import urlsplit

from relay_bridge import __version__
from relay_bridge.core.inert import inert_str
from relay_bridge.core.store import Store
from relay_bridge.errors import UsageError
from relay_bridge.exports.capture import build_capture
from relay_bridge.exports.jsonfile import indented
from relay_bridge.exports.report import build_report
from relay_bridge.findings.document import session_findings
from relay_bridge.lanes.otlp.exporter import BadEndpoint, OtlpUnavailable, traces_endpoint
from relay_bridge.relay.auth import load_key, load_token
from relay_bridge.relay.heap import freeze_startup_heap
from relay_bridge.relay.logsetup import configure as configure_logging
from relay_bridge.relay.paths import config_dir, log_dir, state_dir
from relay_bridge.relay.replay import ReplayError, load_store
from relay_bridge.relay.server import DEFAULT_PORT, Relay, RelayConfig

SUMMARY_EVERY = 5.0  # seconds between the headless relay's summaries (relay --summary-every)


class OneLineParser(argparse.ArgumentParser):
    """argparse with its errors as one line on stderr and exit code 2, like every other usage error (argparse's
    own form is a usage block plus the message). Subcommand parsers inherit the class. An option it does not
    know is named, with the likeliest one meant ("unknown option --repot; did you mean --report?"), rather than
    argparse's "unrecognized arguments" at the end of the line."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        parsed, extras = super().parse_known_args(args, namespace)
        unknown = next((a for a in extras if a.startswith("-") and a != "-"), None)
        if unknown is not None:
            self.error(unknown_option(unknown, option_strings(self)))
        return parsed, extras


def option_strings(parser: argparse.ArgumentParser) -> list[str]:
    """The long options a parser takes (--help and --version aside: they are never the option meant)."""
    return [o for o in parser._option_string_actions if o.startswith("--") and o not in ("--help", "--version")]


def unknown_option(token: str, known: list[str]) -> str:
    """What to say of an option no parser here takes: its name, and the closest known one if any is close."""
    name = token.split("=", 1)[0]
    near = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    return f"unknown option {name}" + (f"; did you mean {near[0]}?" if near else "")


def unknown_command(word: str, known: list[str]) -> str:
    near = difflib.get_close_matches(word, known, n=1, cutoff=0.6)
    return f"unknown command {word!r}; " + (f"did you mean {near[0]}?" if near else f"the commands are {', '.join(known)}")


def positive_float(text: str) -> float:
    """A speed factor: above 0 (a finite number)."""
    value = _float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be above 0: {text!r}")
    return value


def speed_type(text: str) -> float:
    """`replay --speed`: 0 means all at once, otherwise real time x SPEED."""
    value = _float(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 (all at once) or above: {text!r}")
    return value


def _float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise argparse.ArgumentTypeError(f"not a finite number: {text!r}")
    return value


def origin_type(text: str) -> str:
    """A page origin as browsers send it in the Origin header: scheme://host[:port], nothing after."""
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - raises on a bad port
    except ValueError:
        parts = None
    if (
        parts is None
        or not parts.scheme
        or not parts.hostname
        or parts.path
        or parts.query
        or parts.fragment
        or parts.username
        or parts.password
        or text != text.strip()
    ):
        raise argparse.ArgumentTypeError(f"not an origin: {text!r} (scheme://host[:port], e.g. https://shop.example)")
    return text.rstrip("/").lower()


OUTPUT_DIRS = {"report": "--report", "report_on_exit": "--report-on-exit", "export_dir": "--export-dir"}


def check_output_dirs(args: argparse.Namespace) -> None:
    """Every directory an option names is checked at start: a bad one is one line and exit 2 before anything
    runs, not a traceback (or lost reports) when the files are due."""
    for attr, option in OUTPUT_DIRS.items():
        value = getattr(args, attr, None)
        if value:
            setattr(args, attr, str(usable_dir(value, option)))


def usable_dir(value: str | Path, what: str) -> Path:
    """A directory we will write into, checked now (made if missing) rather than when the files are due."""
    path = Path(value).expanduser()
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"{what} {path}: {exc.strerror or exc}") from None
    if not path.is_dir():
        raise UsageError(f"{what} {path}: not a directory")
    if not os.access(path, os.W_OK | os.X_OK):
        raise UsageError(f"{what} {path}: not writable")
    return path


def port_type(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError("port must be 0..65535 (0 picks a free port)")
    return value


def listening_port(text: str) -> int:
    """A port some relay already listens on (`snippet --port`): 0 picks a free port only when a relay starts, so
    a snippet cannot point at it."""
    value = port_type(text)
    if value == 0:
        raise argparse.ArgumentTypeError("0 picks a free port when a relay starts; give the port it printed (1..65535)")
    return value


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def add_relay_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--port", type=port_type, default=DEFAULT_PORT, help="loopback port (0 = any free port)")
    parser.add_argument("--buffer", type=positive_int, default=500, help="spans kept per session (default 500)")
    parser.add_argument(
        "--allow-origin", action="append", default=[], metavar="ORIGIN", type=origin_type, help="only these page origins may connect (repeatable)"
    )
    parser.add_argument("--rotate-token", action="store_true", help="make a new token (pasted snippets stop working)")
    parser.add_argument("--no-log", action="store_true", help="do not write the session log")
    parser.add_argument("--allow-invoke", action="store_true", help="let the terminal call a page's tools (the tool inspector's x); off by default")
    parser.add_argument(
        "--otlp",
        metavar="URL",
        default=None,
        help="send every call to an OpenTelemetry collector over OTLP/HTTP (default: $OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT)",
    )
    parser.add_argument(
        "--show-payloads",
        action="store_true",
        help="show the arguments and results of calls (and Prompt API text) in the timeline's detail, for pages "
        "that allow it (capturePayloads); held in memory for the shown session only, never written anywhere",
    )
    parser.add_argument(
        "--otlp-service", metavar="NAME", default=None, help="service.name of the exported spans (default: $OTEL_SERVICE_NAME, else webmcp-page)"
    )


def relay_config(args: argparse.Namespace) -> RelayConfig:
    try:
        otlp = traces_endpoint(args.otlp)
    except BadEndpoint as exc:
        raise UsageError(str(exc)) from None
    return RelayConfig(
        port=args.port,
        token=load_token(rotate=args.rotate_token),
        buffer=args.buffer,
        allow_origins=tuple(args.allow_origin),
        log_dir=None if args.no_log else log_dir(),
        otlp=otlp,
        otlp_service=args.otlp_service,
        allow_invoke=args.allow_invoke,
        show_payloads=args.show_payloads,
        resume_key=load_key(state_dir() / "resume.key"),
    )


def port_free(port: int, host: str = "127.0.0.1") -> bool:
    """Whether a relay could listen on `port` now (as the server binds: TIME_WAIT is fine)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError:
            return False
    return True


def preflight_port(config: RelayConfig) -> None:
    """Fail before a UI takes the terminal when the port is plainly taken (the real bind still decides)."""
    if config.port == 0:
        return
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the server binds: TIME_WAIT is fine
        try:
            probe.bind((config.host, config.port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise UsageError(f"port {config.port} is in use (another wmcp-top?); try --port 0") from None
            raise UsageError(f"cannot listen on {config.host}:{config.port}: {exc.strerror}") from None


async def start_relay(config: RelayConfig, store: Store | None = None) -> Relay:
    configure_logging(state_dir() / "relay.log")
    try:
        relay = Relay(config, store)
    except OtlpUnavailable as exc:
        raise UsageError(str(exc)) from None
    try:
        await relay.start()
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise UsageError(f"port {config.port} is in use (another wmcp-top?); try --port 0") from None
        raise UsageError(f"cannot listen on {config.host}:{config.port}: {exc.strerror}") from None
    return relay


def write_json(path: Path, doc: Any) -> None:
    """Write a report, capture or trace whole (via a temporary file), readable by its owner only (0600), like
    the session log and the token: what a page registered and called is the user's business."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as fh:
            # A piece at a time: a capture of 64 sessions' descriptors written as one string took 640 MB.
            for chunk in indented(doc):
                fh.write(chunk)
            fh.flush()
            os.fsync(fh.fileno())  # whole on disk before it takes the name
        os.chmod(tmp, 0o600)  # an older .tmp left by a crash keeps its mode through O_CREAT
        tmp.replace(path)
    except BaseException:
        tmp.unlink(missing_ok=True)  # a full disk leaves neither a torn file nor the .tmp
        raise


def check_state_dirs() -> None:
    """The config (token) and state (logs) directories are checked at start: unusable, it is one line and
    exit 2 before anything runs, never a traceback."""
    usable_dir(config_dir(), "config directory")
    usable_dir(state_dir(), "state directory")


def write_reports(store: Store, directory: Path) -> list[Path]:
    """`DIR/<sessionId>.json` (report v2) for every session, `DIR/capture.json` and `DIR/findings.json`."""
    written = []
    for session in store.sessions.values():
        path = directory / f"{session.id}.json"
        write_json(path, build_report(session))
        written.append(path)
    path = directory / "capture.json"
    write_json(path, build_capture(store, lazy=True))  # a session at a time, as it is written
    written.append(path)
    path = directory / "findings.json"  # report v2 is closed: the diagnosis of every session, beside the reports
    write_json(path, session_findings(list(store.sessions.values())))
    written.append(path)
    return written


def session_line(session: Any) -> str:
    ctx = session.info.context
    # Page text (the origin) shows every control inert, line breaks included: a page cannot print a line of its
    # own. The stream (InertStream) passes our own CR/LF, so the page's must be made inert here.
    line = f"{session.id} {inert_str(session.info.origin, 120)} [{ctx}, {session.state}] {session.stats.summary()}"
    return line + no_call_hint(session)


def no_call_hint(session: Any) -> str:
    """What a summary of zeros means and what to do, while no call has been measured (`tools 0.0ms` alone reads
    like a fast page)."""
    if session.stats.totals.calls:
        return ""
    counted = sum(n or 0 for n in session.counted_only().values())
    if counted:
        return f" · {counted} call(s) counted, not measured: the tools were registered before the agent (load it first)"
    if session.stats.schema_bytes:
        return " · no call yet: let the agent call a tool, or call one from the page (document.modelContext.executeTool)"
    return " · no call yet: no tool registered (the page registers its tools with document.modelContext.registerTool)"


async def _relay_main(args: argparse.Namespace) -> int:
    relay = await start_relay(relay_config(args))
    print(f"wmcp-top relay {__version__} listening on http://127.0.0.1:{relay.port}", flush=True)
    print(relay.snippet.text(), flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    # The session log says when writing fails or works again (its on_health hook), so this loop sleeps until
    # then, a signal, or the next summary: polling it would wake an idle relay four times a second.
    health = asyncio.Event()
    session_log = relay.session_log
    if session_log is not None:
        told = session_log.on_health

        def on_health() -> None:
            if told is not None:
                told()
            health.set()

        session_log.on_health = on_health
    log_said: str | None = None
    capped_said = False  # the run's log cap is said once, with the summary after it first deletes a part
    otlp_said = "ok"  # the collector's state is said when it changes, not every summary
    every = args.summary_every
    next_summary = loop.time() + every
    try:
        while not stop.is_set():
            waits = [asyncio.ensure_future(stop.wait()), asyncio.ensure_future(health.wait())]
            await asyncio.wait(waits, timeout=max(0.0, next_summary - loop.time()), return_when=asyncio.FIRST_COMPLETED)
            for waiting in waits:
                waiting.cancel()
            if health.is_set():
                health.clear()
                log_said = _say_log_health(relay, log_said)
            if loop.time() < next_summary:
                continue
            next_summary = loop.time() + every
            for session in relay.store.live_sessions():
                print(session_line(session), flush=True)
            if not capped_said and relay.session_log is not None and relay.session_log.capped is not None:
                print(f"session log: {relay.session_log.capped}", flush=True)
                capped_said = True
            if relay.otlp is not None:
                otlp_said = _say_otlp(relay.otlp.stats, otlp_said)
    finally:
        otlp = relay.otlp  # stop() lets go of it
        await relay.stop()
    if otlp is not None and otlp.stats.dropped:
        print(f"otlp: {otlp.stats.dropped} spans dropped in all", flush=True)
    if args.report_on_exit:
        for path in write_reports(relay.store, Path(args.report_on_exit)):
            print(f"wrote {path}", flush=True)
    return 0


def _say_otlp(stats: Any, said: str) -> str:
    """One line when the collector becomes unreachable, one with the count when it takes spans again."""
    if stats.state == "unreachable" and said != "unreachable":
        print(f"otlp: {stats.endpoint} unreachable: {stats.last_error}; dropping spans and counting them", flush=True)
        return "unreachable"
    if stats.state == "ok" and said == "unreachable":
        print(f"otlp: {stats.endpoint} reachable again ({stats.dropped} spans dropped meanwhile)", flush=True)
        return "ok"
    return said


def _say_log_health(relay: Relay, said: str | None) -> str | None:
    """One line when the session log starts failing, one when it writes again; returns what was said."""
    log = relay.session_log
    if log is None:
        return said
    if log.error is not None and said is None:
        print(f"session log: cannot write: {log.error}; lines wait in memory, frames past its bound are refused (not acked)", flush=True)
        return log.error
    if log.error is None and said is not None:
        print(f"session log: writing again ({log.refused} frames refused, {log.dropped} lines dropped meanwhile)", flush=True)
        return None
    return said


def cmd_relay(args: argparse.Namespace) -> int:
    freeze_startup_heap()
    return asyncio.run(_relay_main(args))


def cmd_snippet(args: argparse.Namespace) -> int:
    from relay_bridge.relay.snippet import Snippet

    print(Snippet("127.0.0.1", DEFAULT_PORT if args.port is None else args.port, load_token(rotate=args.rotate_token)).text())
    return 0


def cmd_replay_report(args: argparse.Namespace) -> int:
    notes: list[str] = []
    try:
        store = load_store(Path(args.file), notes=notes)
    except ReplayError as exc:
        raise UsageError(str(exc)) from None
    for note in notes:
        print(f"wmcp-top replay: {inert_str(note)}", file=sys.stderr)
    for path in write_reports(store, Path(args.report)):
        print(f"wrote {path}")
    return 0
