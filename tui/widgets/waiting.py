"""The first screen: where the relay listens, the line to paste, and what to check while nothing arrives."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from relay_bridge.relay.snippet import LATE_ROUTES, Snippet
from tui.model.sanitize import inert


def waiting_text(snippet: Snippet | None, replay: str | None = None, width: int | None = None, refused: dict[str, int] | None = None) -> Text:
    """The first screen's text. Under `width` columns the lines to paste are cut with an ellipsis rather than
    wrapped mid-word (a wrapped tag pastes broken): `c` copies the whole script tag. `refused`: pages the relay
    turned away for their token, by origin (the store's token_refusals)."""
    out = Text()
    if snippet is None:
        out.append("waiting", style="bold")
        out.append(f" — replaying {replay}: no session in it yet." if replay else " — no relay in this mode.")
        return out
    out.append("waiting", style="bold")
    out.append(f" — relay listening on {snippet.base}; no page agent has connected yet.\n\n")
    if refused:
        out.append_text(refused_text(refused))
        out.append("\n\n")
    tag, console = snippet.script_tag, snippet.console_line
    room = None if width is None else max(20, width - 2)
    cut = room is not None and (len(tag) > room or len(console) > room)
    out.append("Press ")
    out.append("c", style="bold")
    out.append(" to copy the script tag" + (" (cut short below to fit)" if cut else "") + ", then paste it first in the page's <head>:\n\n  ")
    out.append(_fit(tag, room), style="bold")
    out.append(f"\n\n  {LATE_ROUTES}, in the DevTools console:\n  ", style="dim")
    out.append(_fit(console, room), style="dim")
    out.append("\n\nNothing arrives?\n", style="bold")
    out.append("  › put the script tag first in your page's <head> and reload\n")
    out.append("  › accept Chrome's local-network access prompt for the page (it asks before a site may reach 127.0.0.1)\n")
    out.append(f"  › under a Content-Security-Policy, allow the relay: connect-src {snippet.ws_url.split('/relay')[0]} ; script-src {snippet.base}\n")
    out.append("  › press d for status and troubleshooting, ? for keys")
    return out


def refused_text(refused: dict[str, int]) -> Text:
    """Which pages were refused for their token: their tag is an old one (after `snippet --rotate-token`)."""
    out = Text()
    out.append("refused for its token: ", style="bold")
    shown = sorted(refused.items(), key=lambda kv: -kv[1])[:3]
    for i, (origin, n) in enumerate(shown):
        out.append(", " if i else "")
        out.append_text(inert(origin, limit=60))
        out.append(f" ({n}×)")
    if len(refused) > len(shown):
        out.append(f" and {len(refused) - len(shown)} more")
    out.append("\n  › the page's tag has an old token (wmcp-top snippet --rotate-token makes a new one): paste the line below again")
    return out


def _fit(line: str, room: int | None) -> str:
    return line if room is None or len(line) <= room else line[: room - 1] + "…"


class WaitingPanel(Static):
    DEFAULT_CSS = """
    WaitingPanel { height: 1fr; padding: 1 2; }
    """
