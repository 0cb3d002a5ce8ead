"""Start the UI for `wmcp-top`, `wmcp-top --demo`, `wmcp-top replay FILE`, and the dashboard forms of
`wmcp-top attach --cdp URL` and `wmcp-top open URL`.

The relay is started by the app on its own event loop (Textual's); a port in use or any other problem the
user can fix comes back as a `UsageError` (one line, exit code 2) after the terminal is restored.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
from pathlib import Path

from relay_bridge.cli import preflight_port, relay_config, write_reports
from relay_bridge.core.store import Store
from relay_bridge.errors import UsageError
from relay_bridge.relay.heap import freeze_grown, freeze_startup_heap, refreeze
from relay_bridge.relay.replay import ReplayError, StepClock


def build_app(args: argparse.Namespace):
    """The app for parsed `wmcp-top` arguments (not started). Raises UsageError for what the user can fix."""
    from tui.app import WmcpTopApp
    from tui.feed import demo_feed, replay_feed

    export_dir = Path(args.export_dir).expanduser() if getattr(args, "export_dir", None) else None
    theme = getattr(args, "theme", None)
    if theme:
        check_theme(theme)
    probe = None
    if os.environ.get("WMCP_TOP_PROBE"):
        from tui.probes.latency import Probe

        probe = Probe(Path(os.environ["WMCP_TOP_PROBE"]))
    if args.command == "replay":
        path = Path(args.file)
        try:
            feed = replay_feed(path, args.speed)
        except ReplayError as exc:
            raise UsageError(str(exc)) from None
        store = Store(clock=StepClock())  # stamps carry the log's time, not the replay's
        return WmcpTopApp(store=store, feed=feed, theme_name=theme, export_dir=export_dir, source_label=f"replay {path.name}", probe=probe)
    config = relay_config(args)
    preflight_port(config)
    cdp_url = None
    if args.command == "attach":
        from tui.lanes import cdp_feed

        cdp_url = args.cdp
        feed = cdp_feed(args.cdp, args.error_policy)
    elif args.command == "open":
        from tui.lanes import open_feed

        feed = open_feed(args.url, True if args.headless else None, args.browser, args.error_policy)
    elif getattr(args, "demo", False):
        if config.log_dir is not None:  # a demo's frames are not mixed with (or pruning) the real runs' logs
            config = dataclasses.replace(config, log_dir=config.log_dir / "demo")
        seed = getattr(args, "seed", None)
        speed = getattr(args, "demo_speed", 1.0)
        feed = demo_feed(seed if seed is not None else 7, speed)
    else:
        feed = None
    return WmcpTopApp(relay_config=config, feed=feed, theme_name=theme, export_dir=export_dir, probe=probe, cdp_url=cdp_url)


def check_theme(name: str) -> None:
    """An unknown --theme is a usage error at start (not a toast after the screen is up)."""
    from textual.theme import BUILTIN_THEMES

    from tui.themes import load_themes

    known = set(BUILTIN_THEMES) | set(load_themes().themes)
    if name not in known:
        raise UsageError(f"unknown theme {name!r}; known: {', '.join(sorted(known))}")


def run_app(args: argparse.Namespace) -> int:
    app = build_app(args)
    freeze_startup_heap()
    app.on_first_paint = freeze_startup_heap  # and the screen's own objects, once drawn
    app.on_grown = freeze_grown  # and a flood's diagnosis, as it is kept
    app.on_settled = refreeze  # and once kept, its garbage collected first
    app.run()
    if app.startup_error:
        raise UsageError(app.startup_error)
    report_dir = getattr(args, "report_on_exit", None)
    if report_dir:
        for path in write_reports(app.store, Path(report_dir)):
            print(f"wrote {path}", flush=True)
    return int(app.return_code or 0)
