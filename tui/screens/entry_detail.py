"""One timeline entry, opened with Enter: its facts always; for a call (and a Prompt API step) the arguments and
the result as the browser delivered them, when both sides opted in.

Facts are what the relay stored: the span's numbers and what the agent received (sizes, types, timings, the
error text errorPolicy lets out), or the call in flight. Payloads need the page's `capturePayloads: true` AND
`wmcp-top --show-payloads`; they come from the relay's PayloadView (the shown session only, bounded, in memory)
and are shown here and nowhere else. Page text is made inert (tui/model/sanitize.py).
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer, Static

from relay_bridge.core.payloads import Held, PayloadView
from relay_bridge.core.store import Session, TimelineEntry
from relay_bridge.core.units import fmt_bytes, fmt_ms
from tui import keys
from tui.model.sanitize import inert, inert_str

CALL_KINDS = ("start", "settle", "error", "toolcancel")
PROMPT_STEPS = ("prompt", "prompt-stream")
PAYLOAD_SHOWN = 64 * 1024  # characters of one text drawn (the page already cut it at its maxPayloadLength)

# Span facts in the order they are listed, with how each is written.
_SPAN_FACTS: tuple[tuple[str, str], ...] = (
    ("wallMs", "ms"),
    ("blockingMs", "ms"),
    ("gapSincePrevCallMs", "ms"),
    ("inputBytes", "bytes"),
    ("resultBytes", "bytes"),
    ("imageBytes", "bytes"),
    ("estTokens", "n"),
    ("estInputTokens", "n"),
    ("estTextTokens", "n"),
    ("estImageTokens", "n"),
    ("contentTypes", "v"),
    ("resultType", "v"),
    ("envelope", "v"),
    ("substituted", "v"),
    ("serializable", "v"),
    ("isError", "v"),
    ("errorType", "v"),
    ("error", "v"),
    ("refusal", "v"),
    ("consent", "v"),
    ("consentMismatch", "v"),
    ("overlapped", "v"),
    ("depth", "v"),
    ("parent", "v"),
    ("synthetic", "v"),
    ("invokedBy", "v"),
)


def _fmt(value: Any, how: str) -> str:
    if value is None:
        return "—"
    if how == "ms":
        return f"{fmt_ms(value)} ({value:g} ms)"
    if how == "bytes":
        return f"{fmt_bytes(value)} ({value} B)"
    if isinstance(value, dict):
        return ", ".join(f"{k} {v}" for k, v in value.items()) or "none"
    return str(value)


def entry_facts(session: Session, entry: TimelineEntry) -> list[tuple[str, Text]]:
    """(label, value) rows for one entry: the stored facts, never a body."""
    rows: list[tuple[str, Text]] = [("kind", Text(entry.kind)), ("at", Text(f"+{entry.at / 1000:.3f}s (page clock)"))]
    seq = entry.detail.get("seq")
    if entry.kind in CALL_KINDS and isinstance(seq, int):
        rows.append(("call", Text(f"#{seq}")))
        rows.append(("tool", inert(entry.detail.get("tool", "?"), limit=128)))
        span = session.stats.ring.get(seq)
        flight = session.inflight.get(seq)
        if span is not None:
            rows.append(("state", Text("settled")))
            for name, how in _SPAN_FACTS:
                value = getattr(span, name)
                if value is not None or name in ("gapSincePrevCallMs", "error"):
                    rows.append((name, inert(_fmt(value, how), limit=240)))
        elif flight is not None:
            rows.append(("state", Text("in flight")))
            rows.append(("depth", Text(str(flight.depth))))
            if flight.parent is not None:
                rows.append(("parent", Text(f"#{flight.parent}")))
            if flight.terminal:
                rows.append(("invokedBy", Text("terminal")))
            if flight.cancelled_at is not None:
                rows.append(("toolcancel", Text("the host cancelled it")))
        else:
            rows.append(("state", Text("no longer held (evicted from the span buffer)", style="dim")))
        return rows
    for key, value in entry.detail.items():
        rows.append((inert_str(key, limit=64), inert(value, limit=240)))  # an event's keys are page text too
    return rows


def held_payload(session: Session, entry: TimelineEntry, view: PayloadView | None) -> Held | None:
    if view is None:
        return None
    seq = entry.detail.get("seq")
    if not isinstance(seq, int):
        return None
    if entry.kind in CALL_KINDS:
        return view.call(session.id, seq)
    if entry.kind in PROMPT_STEPS and isinstance(entry.detail.get("promptSession"), str):
        return view.prompt(session.id, entry.detail["promptSession"], seq)
    return None


def has_payload_section(entry: TimelineEntry) -> bool:
    return isinstance(entry.detail.get("seq"), int) and (entry.kind in CALL_KINDS or entry.kind in PROMPT_STEPS)


def payload_text(entry: TimelineEntry, view: PayloadView | None, held: Held | None) -> Text:
    """The payload part of the pane: the texts, or one line saying why there are none."""
    out = Text()
    prompt = entry.kind in PROMPT_STEPS
    if view is None:
        out.append(
            "payloads are off: start wmcp-top with --show-payloads, and let the page send them (capturePayloads: true in its agent config)",
            style="dim",
        )
        return out
    if held is None:
        out.append(
            f"no payload held for this entry: the page does not send them (capturePayloads), or it is older than the {view.max_entries} newest held",
            style="dim",
        )
        return out
    parts = (
        (("prompt", held.arguments), ("answer", held.result))
        if prompt
        else (("arguments", held.arguments), ("result (as the agent read it)", held.result), ("error message", held.error))
    )
    for label, text in parts:
        if text is None:
            continue
        out.append(f"{label}\n", style="bold")
        out.append_text(inert(text, limit=PAYLOAD_SHOWN, keep_newlines=True))
        out.append("\n\n")
    return out


class EntryDetailScreen(ModalScreen[None]):
    KEY_SCOPE = "detail"
    BINDINGS = keys.bindings(KEY_SCOPE)
    # The whole width up to 120 columns: at 96% the view below showed through a column or two beside the box,
    # a letter glued to its corner ("╯e" at 100 columns).
    DEFAULT_CSS = """
    EntryDetailScreen { align: center middle; }
    EntryDetailScreen > Vertical { width: 100%; max-width: 120; height: 94%; border: round $primary; background: $surface; }
    EntryDetailScreen #title { background: $panel; text-style: bold; padding: 0 1; }
    EntryDetailScreen #body { height: 1fr; padding: 0 1; }
    """

    def __init__(self, session: Session, entry: TimelineEntry, payloads: PayloadView | None) -> None:
        super().__init__()
        self.session = session
        self.entry = entry
        self.payloads = payloads
        self.held = held_payload(session, entry, payloads) if has_payload_section(entry) else None

    def compose(self) -> ComposeResult:
        title = Text(f"{self.entry.kind}  ")
        if "tool" in self.entry.detail:
            title.append_text(inert(self.entry.detail["tool"], limit=48))
        title.append(f"  in {self.session.id}  (esc: back)", style="dim")
        body = Text()
        for label, value in entry_facts(self.session, self.entry):
            body.append(f"{label:<20}", style="dim")
            body.append_text(value)
            body.append("\n")
        if has_payload_section(self.entry):
            body.append("\n")
            body.append_text(payload_text(self.entry, self.payloads, self.held))
        with Vertical():
            yield Static(title, id="title")
            with VerticalScroll(id="body"):
                yield Static(body, id="facts")
            yield Footer()

    def action_close(self) -> None:
        self.dismiss()

    @property
    def holds_payload(self) -> bool:
        """A body is on screen: the app takes no screenshot (a file) while this is true."""
        return self.held is not None
