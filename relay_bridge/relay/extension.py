"""`wmcp-top extension`: where the unpacked browser extension is, how to load it, and its pairing link.

The extension (built into page_agent/extension/, shipped in the wheel as relay_bridge/_extension) has a fixed
id: its manifest carries a public `key`, and Chromium derives the id from it (SHA-256 of the key, first 32
hex digits spelled a-p). So the relay can print a link to the extension's own pairing page,
`chrome-extension://ID/pair.html#relay=…&t=…`. Opening it once stores the relay address and token in the
extension (its service worker dials the relay; the page world never sees either). The fragment is never sent
over a network, and the pairing page wipes it from the address bar.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import quote

from relay_bridge.core.identity import EXTENSION_AGENT_PREFIX
from relay_bridge.relay.auth import load_token
from relay_bridge.relay.snippet import DEFAULT_PORT, LOOPBACK

COMMAND = "extension"
# EXTENSION_AGENT_PREFIX: the agent name the extension's service worker stamps on every hello, the dashboard's
# mark for this lane; the relay accepts it only from the extension's own socket (relay_bridge.core.identity).


def is_extension_agent(agent: str) -> bool:
    return agent.startswith(EXTENSION_AGENT_PREFIX)


# The status view's troubleshooting for the extension lane, one line each: the three ways it stays silent.
STATUS_HELP = (
    "not paired (badge ?): run `wmcp-top extension` and open the link it prints once in that browser",
    "relay down (badge !): start wmcp-top on the port the extension was paired with, or pair it again with this relay",
    "site access not granted (no badge on the tab): open the extension's popup and click 'Allow on this site', "
    "or set its site access to 'On all sites'; then reload the tab",
    "the popup's 'watch' switch is off for the site: switch it on and reload the tab",
)


def extension_dir() -> Path | None:
    """The unpacked extension: inside the installed package, else the source tree's build output."""
    package = Path(__file__).resolve().parents[1]  # relay_bridge/
    for folder in (package / "_extension", package.parent / "page_agent" / "extension"):
        if (folder / "manifest.json").is_file():
            return folder
    return None


def extension_origins() -> frozenset[str]:
    """The Origin header of the built extension's own sockets (empty when it is not built): the only sockets
    whose hellos may carry the extension's agent name."""
    folder = extension_dir()
    if folder is None:
        return frozenset()
    try:
        manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
        return frozenset({f"chrome-extension://{extension_id(manifest)}"})
    except (OSError, ValueError, KeyError):
        return frozenset()


def extension_id(manifest: dict[str, Any]) -> str:
    """Chromium's id for an extension whose manifest has `key` (base64 DER public key)."""
    digest = hashlib.sha256(base64.b64decode(manifest["key"])).hexdigest()[:32]
    return "".join(chr(ord("a") + int(c, 16)) for c in digest)


def pairing_link(port: int, token: str) -> str | None:
    """The pairing link for a relay on `port` with `token`; None when the extension is not built."""
    folder = extension_dir()
    if folder is None:
        return None
    return pairing_url(extension_id(json.loads((folder / "manifest.json").read_text(encoding="utf-8"))), port, token)


def pairing_url(ext_id: str, port: int, token: str, host: str = LOOPBACK) -> str:
    relay = f"ws://{host}:{port}/relay"
    return f"chrome-extension://{ext_id}/pair.html#relay={quote(relay, safe='')}&t={token}"


def relay_running(port: int, host: str = LOOPBACK) -> bool:
    try:
        with urllib.request.urlopen(f"http://{host}:{port}/healthz", timeout=1) as r:
            return bool(json.loads(r.read()).get("ok"))
    except (OSError, ValueError):
        return False


def instructions(folder: Path, port: int, token: str, running: bool) -> str:
    return "\n".join(
        [
            f"The wmcp-top browser extension (unpacked, Manifest V3) is in:\n  {folder}",
            "",
            "Load it once:",
            "  1. open chrome://extensions and switch on Developer mode",
            "  2. Load unpacked -> choose the folder above",
            f"     (or start Chromium with --load-extension={folder})",
            "",
            "Pair it with the relay (open this link once in that browser; the token is in the link, nothing to type):",
            f"  {pairing_link(port, token)}",
            "",
            "relay on port %d: %s" % (port, "running" if running else "not running now (start `wmcp-top`; the pairing link stays valid)"),
            "Site access: all sites by default; in the extension's menu choose 'On click' to allow one site at a time.",
            "The toolbar badge shows the relay state (? not paired, ! relay down) and this tab's call count.",
        ]
    )


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(COMMAND, help="where the browser extension is, how to load it, and its pairing link")
    parser.description = (
        "Print the folder of the unpacked browser extension (the recommended lane for pages you do not own: first in "
        "every frame, through any Content-Security-Policy), how to load it, and the link that pairs it with the relay."
    )
    parser.add_argument("--port", type=relay_port, default=DEFAULT_PORT, help=f"the relay's port, 1..65535 (default {DEFAULT_PORT})")
    return parser


def relay_port(text: str) -> int:
    """The port of a relay that runs (or will): 0 ("any free port") cannot be paired with, so only 1..65535."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 1 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"port must be 1..65535 (the port the relay listens on): {text!r}")
    return value


def run(args: argparse.Namespace) -> int:
    from relay_bridge.errors import UsageError

    folder = extension_dir()
    if folder is None:
        raise UsageError("the extension is not built: run `node page_agent/build.mjs`")
    print(instructions(folder, args.port, load_token(), relay_running(args.port)))
    return 0
