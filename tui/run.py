"""Start the UI for `wmcp-top`, `wmcp-top --demo` and `wmcp-top replay FILE`.

The relay is started by the app on its own event loop (Textual's); a port in use or any other problem the
user can fix comes back as a `UsageError` (one line, exit code 2) after the terminal is restored.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from relay_bridge.cli import UsageError, relay_config
from relay_bridge.replay import ReplayError


def run_app(args: argparse.Namespace) -> int:
    from .app import WmcpTopApp
    from .feed import demo_feed, replay_feed

    export_dir = Path(args.export_dir).expanduser() if getattr(args, "export_dir", None) else None
    theme = getattr(args, "theme", None)
    probe = None
    if os.environ.get("WMCP_TOP_PROBE"):
        from .probe import Probe

        probe = Probe(Path(os.environ["WMCP_TOP_PROBE"]))
    if args.command == "replay":
        path = Path(args.file)
        try:
            feed = replay_feed(path, args.speed)
        except ReplayError as exc:
            raise UsageError(str(exc)) from None
        app = WmcpTopApp(feed=feed, theme_name=theme, export_dir=export_dir, source_label=f"replay {path.name}", probe=probe)
    else:
        config = relay_config(args)
        if getattr(args, "demo", False):
            seed = getattr(args, "seed", None)
            speed = getattr(args, "demo_speed", 1.0) or 1.0
            feed = demo_feed(seed if seed is not None else 7, speed)
        else:
            feed = None
        app = WmcpTopApp(relay_config=config, feed=feed, theme_name=theme, export_dir=export_dir, probe=probe)
    app.run()
    if app.startup_error:
        raise UsageError(app.startup_error)
    return int(app.return_code or 0)
