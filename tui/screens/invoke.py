"""Calling a tool from the terminal (issue 8 item 3): an input editor, schema validation, confirmation, the result.

Opened with `x` in the tool inspector (or on the selected row of the tool table). The editor is prefilled with
one input generated from the tool's inputSchema by the bench's generator (relay_bridge.lanes.bench.gen.generate,
case 0 of 1, seed 0: deterministic, every optional property present). `ctrl+r` validates the JSON against the
schema (jsonschema), asks for confirmation when the tool is not marked readOnlyHint, then sends the `invoke`
command through `app.relay.invoke`.

The result text is the page's data. It is shown in this dialog only, made inert (sanitize.inert), and dropped
when the dialog closes: it is never logged, stored, exported, put in a notification or kept on the app. While
the dialog is open, the app refuses screenshots and exports (WmcpTopApp.check_action).
"""

from __future__ import annotations

import json
from typing import Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import Button, Footer, Static, TextArea

from relay_bridge.core.units import fmt_bytes, fmt_ms
from relay_bridge.lanes.bench.gen import generate
from tui import keys
from tui.model.sanitize import inert
from tui.screens.live import AppModal

MAX_ERRORS = 6


def input_schema(descriptor: bytes | None) -> dict[str, Any] | None:
    """The tool's inputSchema from its recorded descriptor, or None when there is none to use."""
    if not descriptor:
        return None
    try:
        doc = json.loads(descriptor)
    except ValueError:
        return None
    schema = doc.get("inputSchema") if isinstance(doc, dict) else None
    return schema if isinstance(schema, dict) else None


def prefill(schema: dict[str, Any] | None, tool: str) -> str:
    """One deterministic input for `schema` (the bench's generator), pretty-printed; `{}` without a schema."""
    if schema is None:
        return "{}"
    try:
        value = generate(schema, 1, seed=0, salt=tool)[0]
    except Exception:
        value = {}
    return json.dumps(value, indent=2, ensure_ascii=False)


def is_read_only(sent: dict[str, Any] | None, kept: dict[str, Any] | None) -> bool:
    """readOnlyHint as the host sees it (what it kept) when known, else as the page declared it."""
    effective = kept if kept is not None else (sent or {})
    return effective.get("readOnlyHint") is True


def validate(schema: dict[str, Any] | None, value: Any) -> list[str]:
    """Problems with `value` against `schema` (empty when it conforms). Uses jsonschema (a runtime dependency:
    see tui/NOTES-for-relay.md)."""
    if not isinstance(value, dict):
        return ["the input must be a JSON object"]
    if schema is None:
        return []
    try:
        import jsonschema
    except ImportError:  # pragma: no cover - jsonschema is a dependency; say so rather than skip silently
        return ["cannot validate: the jsonschema package is missing (pip install jsonschema)"]
    try:
        cls = jsonschema.validators.validator_for(schema)
        cls.check_schema(schema)
    except jsonschema.SchemaError as exc:
        return [f"the tool's inputSchema is not a valid JSON Schema: {exc.message}"]
    validator = cls(schema, format_checker=cls.FORMAT_CHECKER)
    out = []
    for error in sorted(validator.iter_errors(value), key=lambda e: list(e.absolute_path)):
        where = "/" + "/".join(str(p) for p in error.absolute_path)
        out.append(f"{where}: {error.message}")
    return out


class ConfirmCall(AppModal[bool]):
    """Asks before calling a tool that is not marked readOnlyHint."""

    KEY_SCOPE = "confirm"
    BINDINGS = keys.bindings(KEY_SCOPE)
    DEFAULT_CSS = """
    ConfirmCall { align: center middle; }
    ConfirmCall > Vertical { width: 64; max-width: 95%; height: auto; border: thick $warning; background: $surface; padding: 0 1; }
    ConfirmCall Horizontal { height: auto; align-horizontal: right; }
    ConfirmCall Button { margin-left: 1; }
    """

    def __init__(self, tool: str) -> None:
        super().__init__()
        self.tool = tool

    def compose(self) -> ComposeResult:
        text = Text()
        text.append_text(inert(self.tool, limit=60))
        text.append(" is not marked readOnlyHint: calling it may change the page's state (a cart, a form, a message sent). Call it?")
        with Vertical():
            yield Static(text)
            with Horizontal():
                yield Button("Call it (y)", variant="warning", id="yes")
                yield Button("Cancel (n)", id="no")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")


class InvokeScreen(AppModal[None]):
    class Answered(Message):
        """Posted to the app: the page answered a call started here (`ok` only; the text stays in the dialog)."""

        def __init__(self, ok: bool) -> None:
            super().__init__()
            self.ok = ok

    KEY_SCOPE = "invoke"
    BINDINGS = keys.bindings(KEY_SCOPE)
    AUTO_FOCUS = "#input"
    DEFAULT_CSS = """
    InvokeScreen { align: center middle; }
    InvokeScreen > Vertical { width: 96%; max-width: 110; height: 94%; border: round $primary; background: $surface; }
    InvokeScreen #title { background: $panel; text-style: bold; padding: 0 1; }
    InvokeScreen TextArea { height: 1fr; min-height: 3; }
    InvokeScreen #problems { height: auto; max-height: 6; padding: 0 1; }
    InvokeScreen #result-box { height: 1fr; min-height: 3; border-top: solid $panel; padding: 0 1; }
    """

    def __init__(self, session_id: str, tool: str, schema: dict[str, Any] | None, read_only: bool) -> None:
        super().__init__()
        self.session_id = session_id
        self.tool = tool
        self.schema = schema
        self.read_only = read_only
        self.calling = False

    def compose(self) -> ComposeResult:
        title = Text("call  ")
        title.append_text(inert(self.tool, limit=48))
        title.append(f"  in {self.session_id}", style="dim")
        title.append("  read-only" if self.read_only else "  not read-only: asks first", style="dim")
        with Vertical():
            yield Static(title, id="title")
            yield TextArea(prefill(self.schema, self.tool), id="input", soft_wrap=True, show_line_numbers=False, tab_behavior="indent")
            yield Static(self._hint(), id="problems")
            with VerticalScroll(id="result-box"):
                yield Static("", id="result")
            yield Footer()

    def _hint(self) -> Text:
        where = "the tool's inputSchema" if self.schema is not None else "no inputSchema recorded (any object)"
        return Text(f"input checked against {where} · ctrl+r call · ctrl+g reset · esc close (the result is never kept)", style="dim")

    def action_reset(self) -> None:
        self.query_one("#input", TextArea).text = prefill(self.schema, self.tool)
        self.query_one("#problems", Static).update(self._hint())

    def _problems(self, lines: list[str], head: str) -> None:
        out = Text(head + "\n", style=self.app.palette.style("error"))
        for line in lines[:MAX_ERRORS]:
            out.append("  • ")
            out.append_text(inert(line, limit=200))
            out.append("\n")
        if len(lines) > MAX_ERRORS:
            out.append(f"  … {len(lines) - MAX_ERRORS} more\n")
        self.query_one("#problems", Static).update(out)

    def action_run(self) -> None:
        if self.calling:
            return
        raw = self.query_one("#input", TextArea).text
        try:
            value = json.loads(raw)
        except ValueError as exc:
            self._problems([str(exc)], "not JSON:")
            return
        problems = validate(self.schema, value)
        if problems:
            self._problems(problems, "the input does not match the schema:")
            return
        self.query_one("#problems", Static).update(Text("input valid", style=self.app.palette.style("ok")))
        if self.read_only:
            self._call(value)
        else:

            def answered(yes: bool | None) -> None:
                if yes:
                    self._call(value)
                else:
                    self._cancelled()

            self.app.push_screen(ConfirmCall(self.tool), answered)

    def _cancelled(self) -> None:
        self.query_one("#problems", Static).update(Text("not called", style="dim"))

    @work(exclusive=True, group="invoke")
    async def _call(self, value: dict[str, Any]) -> None:
        from relay_bridge.relay.server import InvokeRefused

        relay = self.app.relay
        result_widget = self.query_one("#result", Static)
        if relay is None:
            result_widget.update(Text("no relay in this mode: nothing to call", style="dim"))
            return
        self.calling = True
        result_widget.update(Text("calling…", style="dim"))
        try:
            result = await relay.invoke(self.session_id, self.tool, value)
        except InvokeRefused as exc:
            result_widget.update(Text(f"refused: {exc}", style=self.app.palette.style("error")))
            return
        finally:
            self.calling = False
        self.app.post_message(self.Answered(result.ok))
        palette = self.app.palette
        out = Text()
        if result.ok:
            out.append("ok", style=palette.style("ok"))
        else:
            out.append("error", style=palette.style("error"))
        if result.wall_ms is not None:
            out.append(f"  {fmt_ms(result.wall_ms)}")
        if result.result_bytes is not None:
            out.append(f"  {fmt_bytes(result.result_bytes)}")
        out.append("  (shown here only: dropped when this dialog closes)\n", style="dim")
        if result.error:
            out.append_text(inert(result.error, limit=400))
            out.append("\n")
        if result.text is not None:
            # Our own line breaks (each line made inert separately) in this box only; control characters and
            # markup in the page's text stay visible and harmless.
            out.append_text(inert(_pretty(result.text), keep_newlines=True))
        result_widget.update(out)
        del result, out

    def action_close(self) -> None:
        self.workers.cancel_group(self, "invoke")
        self.query_one("#result", Static).update("")  # drop the page's text before the screen goes
        self.dismiss(None)


def _pretty(text: str) -> str:
    try:
        return json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    except ValueError:
        return text
