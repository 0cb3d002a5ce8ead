"""The first screen: where the relay listens, the line to paste, and what to check while nothing arrives."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from relay_bridge.snippet import Snippet


def waiting_text(snippet: Snippet | None, replay: str | None = None) -> Text:
    out = Text()
    if snippet is None:
        out.append("waiting", style="bold")
        out.append(f" — replaying {replay}: no session in it yet." if replay else " — no relay in this mode.")
        return out
    out.append("waiting", style="bold")
    out.append(f" — relay listening on {snippet.base}; no page agent has connected yet.\n\n")
    out.append("Paste this into the page you want to watch (")
    out.append("c", style="bold")
    out.append(" copies it):\n\n  ")
    out.append(snippet.script_tag, style="bold")
    out.append("\n\n  or in the DevTools console:  ")
    out.append(snippet.console_line)
    out.append("\n\nNothing arrives?\n", style="bold")
    out.append("  › paste the line above, or load the script tag from your page's HTML\n")
    out.append("  › accept Chrome's local-network access prompt for the page (it asks before a site may reach 127.0.0.1)\n")
    out.append(f"  › under a Content-Security-Policy, allow the relay: connect-src {snippet.ws_url.split('/relay')[0]} ; script-src {snippet.base}\n")
    out.append("  › press d for status and troubleshooting, ? for keys")
    return out


class WaitingPanel(Static):
    DEFAULT_CSS = """
    WaitingPanel { height: 1fr; padding: 1 2; }
    """
