"""What the words say once calls arrive (issue 49): the headless summary of a session with no measured call says
why and what to do, counted calls are never reported as 0 errors, and the pasted lines put the script tag first
(the console line, pasted into a loaded page, only counts the tools already registered)."""

from __future__ import annotations

from rich.console import Console

from relay_bridge.cli import session_line
from relay_bridge.core import synth
from relay_bridge.core.store import Store
from relay_bridge.relay.snippet import Snippet
from tests.frames import frame
from tui.palette import Palette
from tui.widgets.tool_table import make_cells
from tui.widgets.waiting import waiting_text

SID = "5e55101a"


def _session(*objs: dict) -> Store:
    store = Store()
    store.connect(1)
    for obj in (synth.hello(SID, "https://shop.example"), *objs):
        store.apply(1, frame(obj))
    return store


def test_a_summary_of_zeros_says_why() -> None:
    bare = session_line(_session().sessions[SID])
    assert bare.endswith("no call yet: no tool registered (the page registers its tools with document.modelContext.registerTool)"), bare
    tools = session_line(_session(synth.tool(SID, "search", 1.0)).sessions[SID])
    assert "tools 0.0ms" in tools and tools.endswith(
        "no call yet: let the agent call a tool, or call one from the page (document.modelContext.executeTool)"
    )
    ledger = {"sessionId": SID, "tools": {"search": {"schemaBytes": 90, "measured": False, "counted": 2}}}
    counted = session_line(_session(synth.tool(SID, "search", 1.0), {"type": "ledger", "session": SID, "rev": 1, "ledger": ledger}).sessions[SID])
    assert counted.endswith("2 call(s) counted, not measured: the tools were registered before the agent (load it first)"), counted
    measured = _session(synth.tool(SID, "search", 1.0), synth.spans_frame(SID, [synth.span(SID, 0, "search", 5.0, 3.0)]))
    assert "no call" not in session_line(measured.sessions[SID]) and "counted" not in session_line(measured.sessions[SID])


def test_counted_calls_show_an_unknown_error_count() -> None:
    palette = Palette()
    row = {"tool": "search", "calls": 0, "errors": 0, "minMs": None, "p50Ms": None, "p95Ms": None, "maxMs": None}
    row |= {"blockingMs": 0.0, "totalBytes": 0, "estTokens": 0, "schemaBytes": 90}
    assert make_cells(row, palette, True, counted=2)["err"].plain == "?"  # two calls threw or not: unseen
    assert make_cells(row | {"calls": 3, "errors": 1}, palette, True, counted=2)["err"].plain == "1+?"
    assert make_cells(row | {"calls": 3, "errors": 1}, palette, True)["err"].plain == "1"


def test_the_script_tag_comes_first_and_the_console_line_says_what_it_misses() -> None:
    snippet = Snippet("127.0.0.1", 7431, "0" * 32)
    lines = snippet.text().splitlines()
    assert lines[0].startswith("Paste the script tag first in the <head>") and lines[1].lstrip().startswith("script tag:")
    assert lines[2].startswith("Late, into a page already loaded: only tools registered after it are measured")
    console = Console(width=200, record=True)
    console.print(waiting_text(snippet, width=200))
    screen = console.export_text()
    assert screen.index(snippet.script_tag) < screen.index("Late, into a page already loaded") < screen.index(snippet.console_line)
    assert "or in the DevTools console" not in screen
