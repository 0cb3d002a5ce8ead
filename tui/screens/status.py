"""Status and troubleshooting: every session's phase, sentence, hints and coverage; relay health; the snippet."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from relay_bridge import __version__
from relay_bridge.relay.extension import STATUS_HELP as EXTENSION_HELP
from relay_bridge.relay.extension import is_extension_agent, pairing_link
from tui import keys
from tui.model.changes import Changes
from tui.model.sanitize import inert
from tui.screens.live import LiveView
from tui.widgets.keys_footer import KeysFooter
from tui.widgets.status_pane import invoke_allowed, phase_text
from tui.widgets.waiting import refused_text

# Tools registered before the agent loaded: their calls are counted from `toolactivated`, never timed.
COUNTED_HELP = (
    "registered before the agent loaded: calls are counted (toolactivated), with no timing or bytes",
    "load the agent first: its script tag first in <head>, or the extension (runs before page scripts)",
    "wmcp-top open URL starts a browser with the agent injected before any page script",
    "wmcp-top attach --cdp watches every call over the DevTools Protocol, whenever the tool was registered",
)


def status_text(app) -> Text:
    store = app.view_store
    palette = app.palette
    out = Text()
    out.append("Relay\n", style="bold")
    relay = app.relay
    if relay is not None:
        out.append(f"  listening on {relay.snippet.base} (loopback only) · wmcp-top {__version__}\n")
    elif app.source_label:
        out.append("  no relay: ")
        out.append_text(inert(app.source_label))
        out.append("\n")
    if relay is not None:
        out.append("  session log: ")
        log = relay.session_log
        if log is None:
            out.append("off (--no-log)", style=palette.style("muted"))
        elif log.path is None:
            out.append(f"nothing written yet (in {log.directory})", style=palette.style("muted"))
        else:
            out.append(str(log.path))
        out.append("\n")
    c = store.counters
    health = [
        f"connections {c.get('connections', 0)}",
        f"frames {c.get('frames', 0)}",
        f"spans {c.get('spans', 0)}",
        f"duplicates {c.get('duplicates', 0)}",
    ]
    out.append("  " + " · ".join(health) + "\n")
    problems = [f"{k} {v}" for k, v in sorted(c.items()) if v and (k.startswith(("rejected", "refused", "limit")) or k in ("lost", "evicted"))]
    if problems:
        out.append("  " + " · ".join(problems) + "\n", style=palette.style("error"))
        if app.store.token_refusals:
            out.append("  ")
            out.append_text(refused_text(app.store.token_refusals))
            out.append("\n")
    else:
        out.append("  no rejected frames, no lost spans, no refused connections\n", style=palette.style("ok"))
    log = relay.session_log if relay is not None else None
    if log is not None and (log.error is not None or log.errors):
        out.append("  session log: ", style=palette.style("error"))
        if log.error is not None:
            out.append("CANNOT WRITE ", style=palette.style("error"))
            out.append_text(inert(log.error, limit=160))
            out.append(" · lines wait in memory; frames past its bound are refused (log_full), not acked")
        else:
            out.append("writing again")
        out.append(f" · {log.dropped} lines dropped\n")
    if log is not None and log.capped is not None:
        out.append(f"  session log: {log.capped}\n", style=palette.style("error"))
    otlp = relay.otlp.stats if relay is not None and relay.otlp is not None else None
    if otlp is not None:
        out.append("\nOpenTelemetry export (--otlp)\n", style="bold")
        out.append("  ")
        out.append_text(inert(otlp.endpoint, limit=100))
        state = {"starting": "starting: nothing sent yet", "ok": "ok", "unreachable": "UNREACHABLE"}.get(otlp.state, otlp.state)
        out.append("  ")
        out.append(state, style=palette.style({"ok": "ok", "unreachable": "error"}.get(otlp.state, "muted")))
        out.append(f"\n  exported {otlp.exported} · dropped {otlp.dropped}")
        if otlp.dropped:
            out.append(f" ({otlp.dropped_unreachable} collector unreachable, {otlp.dropped_queue_full} queue full)")
        out.append(f" · queued {otlp.queued}\n")
        if otlp.last_error and otlp.state != "ok":
            out.append("  last error: ", style=palette.style("error"))
            out.append_text(inert(otlp.last_error, limit=200))
            out.append("\n")
        if otlp.state == "unreachable":
            out.append("  › spans are dropped and counted while the collector is down; the dashboard is not affected\n")
            out.append("  › check the URL (OTLP/HTTP, usually http://127.0.0.1:4318/v1/traces) and that the collector runs\n")
    if getattr(app, "cdp_url", None):
        out.append("\nDevTools Protocol (attach --cdp)\n", style="bold")
        out.append("  watching ")
        out.append_text(inert(app.cdp_url, limit=100))
        if app.lane_state:
            out.append(" · ")
            out.append_text(inert(app.lane_state, limit=160))
        out.append("\n")
        from relay_bridge.lanes.cdp.client import STATUS_HELP  # only when attach is in use

        for line in STATUS_HELP:
            out.append("  › ", style=palette.style("muted"))
            out.append(line)
            out.append("\n")
    elif getattr(app, "lane_state", None):
        out.append("\nBrowser (open)\n", style="bold")
        out.append("  ")
        out.append_text(inert(app.lane_state, limit=160))
        out.append("\n")
    extension_section(app, out)
    if relay is not None:
        out.append("\nThe line to paste (c copies it)\n", style="bold")
        out.append(f"  {relay.snippet.script_tag}\n")
        out.append(f"  DevTools console: {relay.snippet.console_line}\n")
        out.append(f"  CSP: connect-src {relay.snippet.ws_url.split('/relay')[0]} ; script-src {relay.snippet.base}\n")
    out.append(f"\nSessions ({len(store.sessions)})\n", style="bold")
    if not store.sessions:
        out.append("  waiting: no page agent has connected yet.\n")
        out.append("  › paste the line above, or load the script tag in the page\n")
        out.append("  › accept Chrome's local-network access prompt for the page\n")
        out.append("  › a Content-Security-Policy must allow the relay in connect-src\n")
    for session in store.sessions.values():
        out.append("\n  ")
        out.append(session.id, style="bold")
        out.append(" ")
        out.append_text(inert(session.info.origin, limit=60))
        out.append(f"  {session.info.context}")
        if session.info.via:
            out.append(f" via {session.info.via}")
        out.append(f" · {session.state} · ")
        out.append_text(inert(session.info.visibility, limit=16))  # page text: the hello's or an event's
        out.append(" · ")
        out.append_text(inert(session.agent, limit=40))
        if session.agent.startswith("cdp/"):
            out.append(" (watched over the DevTools Protocol, nothing injected)", style=palette.style("muted"))
        elif is_extension_agent(session.agent):
            out.append(" (through the wmcp-top browser extension)", style=palette.style("muted"))
        out.append("\n  ")
        body = phase_text(session, palette, with_hints=True, invoke_on=invoke_allowed(app))
        body = Text("\n  ").join(body.split("\n", allow_blank=True))
        out.append_text(body)
        reasons = session.coverage_reasons()
        for reason in reasons[:4]:
            out.append("\n    incomplete: ", style=palette.style("error"))
            out.append_text(inert(reason, limit=160))
        counted = session.counted_only()
        if counted:
            out.append("\n  counted, not measured: ", style=palette.style("slow"))
            names = sorted(counted)
            out.append_text(inert(", ".join(f"{n} ({counted[n]} calls)" for n in names[:6]) + (" …" if len(names) > 6 else ""), limit=200))
            for line in COUNTED_HELP:
                out.append("\n    › ", style=palette.style("muted"))
                out.append(line)
        out.append("\n")
    return out


def extension_section(app, out: Text) -> None:
    """The browser-extension lane: how many sessions came through it, and why it may stay silent."""
    if app.relay is None:
        return
    muted = app.palette.style("muted")
    live = [s for s in app.store.sessions.values() if is_extension_agent(s.agent)]
    out.append("\nBrowser extension (wmcp-top extension)\n", style="bold")
    if live:
        out.append(f"  {len(live)} session{'s' if len(live) != 1 else ''} through the extension\n")
    else:
        out.append("  no session through the extension yet\n")
        for line in EXTENSION_HELP:
            out.append("  › ", style=muted)
            out.append(line)
            out.append("\n")
    link = pairing_link(app.relay.port, app.relay.config.token)
    if link:
        out.append("  pairing link: ", style=muted)
        out.append(link + "\n")


class StatusScreen(LiveView[None]):
    AUTO_FOCUS = "VerticalScroll"  # Down, PgDn, End scroll it (the app focuses nothing by itself)
    KEY_SCOPE = "status"
    BINDINGS = keys.bindings(KEY_SCOPE)
    DEFAULT_CSS = """
    StatusScreen VerticalScroll { padding: 0 1; }
    StatusScreen #title { background: $panel; text-style: bold; padding: 0 1; }
    """

    def compose(self) -> ComposeResult:
        yield Static(Text("status and troubleshooting  (esc: back)"), id="title")
        with VerticalScroll():
            yield Static(id="body")
        yield KeysFooter(compact=True)  # two rows from 80 to 119 columns: no key is cut off

    def on_mount(self) -> None:
        self.refresh_view()

    def _on_changes(self, changes: Changes) -> None:
        if changes.touches(None):
            self.refresh_view()

    def refresh_view(self) -> None:
        self.query_one("#body", Static).update(status_text(self.app))
