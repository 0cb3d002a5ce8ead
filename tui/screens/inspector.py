"""The tool inspector: descriptor, schema bytes and tokens, annotations sent versus kept, result-shape facts."""

from __future__ import annotations

import json
import math
from collections import Counter

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static

from relay_bridge.stats import quantile
from relay_bridge.store import Session
from relay_bridge.units import fmt_bytes, fmt_count

from ..changes import Changes
from ..sanitize import inert


def annotations_table(sent: dict | None, kept: dict | None) -> Table | Text:
    sent = sent or {}
    if kept is None and not sent:
        return Text("  no annotations", style="dim")
    table = Table(box=None, pad_edge=False, header_style="bold")
    table.add_column("annotation")
    table.add_column("sent by the page")
    table.add_column("kept by the host")
    for key in sorted(set(sent) | set(kept or {})):
        s = sent.get(key, "–")
        if kept is None:
            k = Text("unknown", style="dim")
        elif key in kept:
            k = inert(json.dumps(kept[key]))
        else:
            k = Text("dropped", style="bold")
        table.add_row(inert(key), inert(json.dumps(s) if key in sent else "–"), k)
    return table


def result_facts(session: Session, tool: str) -> Text:
    spans = [s for s in session.spans() if s.tool == tool]
    out = Text()
    counted = session.counted_only()
    if tool in counted:
        out.append(f"  counted, not measured: {counted[tool]} calls seen through toolactivated (no timing, no bytes);\n"
                   "  the tool was registered before the agent loaded (d: how to measure it)\n", style="bold")
    if not spans:
        out.append("  no calls in the buffer yet", style="dim")
        return out
    kinds = Counter(s.resultType or "unknown" for s in spans)
    content = Counter()
    for s in spans:
        content.update(s.contentTypes)
    n = len(spans)
    out.append(f"  {n} calls in the buffer\n")
    out.append("  result type: " + ", ".join(f"{inert_plain(k)} ×{v}" for k, v in kinds.most_common()) + "\n")
    env = sum(1 for s in spans if s.envelope)
    out.append(f"  MCP envelope {{content:[…]}}: {env}/{n} (the host passes it on as JSON text, not unwrapped)\n")
    subst = sum(1 for s in spans if s.substituted)
    if subst:
        out.append(f"  empty result replaced by the host's text: {subst}/{n}\n")
    unser = sum(1 for s in spans if not s.serializable)
    if unser:
        out.append(f"  not serialisable (bytes read 0): {unser}/{n}\n")
    if content:
        out.append("  content: " + ", ".join(f"{inert_plain(k)} ×{v}" for k, v in content.most_common()) + "\n")
    image = [s.imageBytes for s in spans if s.imageBytes]
    if image:
        out.append(f"  images: {len(image)} calls, up to {fmt_bytes(max(image))} base64 (~{fmt_count(math.ceil(max(image) * 0.75 / 4))} tok each)\n")
    sizes = sorted(s.resultBytes for s in spans)
    out.append(f"  result bytes: min {fmt_bytes(sizes[0])} · median {fmt_bytes(quantile(sizes, 0.5))} · max {fmt_bytes(sizes[-1])}\n")
    errors = [s for s in spans if s.isError]
    if errors:
        out.append(f"  errors: {len(errors)}; last: ")
        out.append_text(inert(errors[-1].error or "(no message kept)", limit=200))
        out.append("\n")
    return out


def inert_plain(value: object) -> str:
    return inert(value, limit=40).plain


class InspectorScreen(Screen[None]):
    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", id="wmcp.view.back"),
        Binding("x", "app.invoke", "Call tool", id="wmcp.inspect.invoke"),
    ]
    DEFAULT_CSS = """
    InspectorScreen #title { background: $panel; text-style: bold; padding: 0 1; }
    InspectorScreen VerticalScroll { padding: 0 1; }
    InspectorScreen .head { text-style: bold; margin-top: 1; }
    """

    def __init__(self, session_id: str, tool: str) -> None:
        super().__init__()
        self.session_id = session_id
        self.tool = tool

    def compose(self) -> ComposeResult:
        yield Static(id="title")
        with VerticalScroll():
            yield Static("Schema", classes="head")
            yield Static(id="schema")
            yield Static("Annotations", classes="head")
            yield Static(id="annotations")
            yield Static("Result shape", classes="head")
            yield Static(id="facts")
            yield Static("Descriptor (what the host ships to the model)", classes="head")
            yield Static(id="descriptor")
        yield Footer()

    def on_mount(self) -> None:
        self.app.changes.subscribe(self, self._on_changes)  # type: ignore[attr-defined]
        self.refresh_view()

    def on_unmount(self) -> None:
        self.app.changes.unsubscribe(self)  # type: ignore[attr-defined]

    def _on_changes(self, changes: Changes) -> None:
        if changes.touches(self.session_id):
            self.refresh_view()

    def refresh_view(self) -> None:
        session = self.app.store.sessions.get(self.session_id)
        title = Text("inspect  ")
        title.append_text(inert(self.tool, limit=60))
        title.append(f"  in {self.session_id}  (esc: back · x: call it", style="dim")
        relay = getattr(self.app, "relay", None)
        title.append(")" if relay is not None and relay.config.allow_invoke else ", needs --allow-invoke)", style="dim")
        self.query_one("#title", Static).update(title)
        if session is None:
            return
        rec = session.tools.get(self.tool)
        schema = Text()
        if rec is None:
            schema.append("  not registered in this session (calls only)", style="dim")
        else:
            schema.append(f"  {fmt_bytes(rec.schemaBytes)} (~{fmt_count(math.ceil(rec.schemaBytes / 4))} tok), paid in every conversation while registered\n")
            state = "registered" if rec.registered else ("rejected by the host: " if rec.rejected else "unregistered")
            schema.append(f"  {state}")
            if rec.rejected:
                schema.append_text(inert(rec.rejected, limit=200))
            schema.append(f" at +{rec.registeredAt / 1000:.3f}s")
            if rec.internal:
                schema.append(" · internal (never measured)")
        self.query_one("#schema", Static).update(schema)
        self.query_one("#annotations", Static).update(
            annotations_table(rec.annotationsSent if rec else None, rec.annotationsKept if rec else None))
        self.query_one("#facts", Static).update(result_facts(session, self.tool))
        if rec is not None and rec.descriptor:
            try:
                pretty = json.dumps(json.loads(rec.descriptor), indent=2, ensure_ascii=False)
            except ValueError:
                pretty = rec.descriptor.decode("utf-8", "replace")
            self.query_one("#descriptor", Static).update(inert(pretty, keep_newlines=True))
        else:
            self.query_one("#descriptor", Static).update(Text("  none received", style="dim"))
