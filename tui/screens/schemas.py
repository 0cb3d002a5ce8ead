"""Schema weight (issue 6 item 3): every tool registered in every session as one catalog.

Per tool: canonical bytes, rough tokens (ceil(bytes / 4), labelled rough), its share of the catalog as a bar,
duplicates across sessions and origins (exact match / same name, different definition / similar description),
lint findings; for the selected tool, where its bytes go (description, property names, property descriptions,
enums, nested definitions, other), its duplicates and its findings with their locations.

The analysis (relay_bridge.lanes.footprint.live.analyze_sessions) is O(catalog): it runs when the set of registered
tools changes (checked on the app's coalesced change notices, at most 4 times a second, by a cheap signature),
never per frame. Everything from the pages (names, origins, messages, pointers) goes through sanitize.inert.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import DataTable, Static

from relay_bridge.core.lint import SEVERITIES
from relay_bridge.lanes.footprint.errors import FootprintError
from relay_bridge.lanes.footprint.live import analyze_sessions
from tui import keys
from tui.model.changes import Changes
from tui.model.sanitize import inert
from tui.screens.live import LiveView
from tui.widgets import tables
from tui.widgets.keys_footer import KeysFooter

PART_LABELS = {
    "description": "description",
    "propertyNames": "property names",
    "propertyDescriptions": "property descriptions",
    "types": "types",
    "constraints": "constraints (required, limits, formats, defaults)",
    "enums": "enums",
    "definitions": "nested definitions",
    "structure": "schema structure (braces, keys, $ref, titles)",
    "other": "other (name, title, annotations)",
}
# short marks for the table's duplicates column
LABEL_MARKS = {"exact match": "=", "same name, different definition": "≠", "similar description": "≈"}
BLOCKS = " ▏▎▍▌▋▊▉█"


def bar(share: float, width: int) -> str:
    """A left-aligned bar of `width` cells for 0 <= share <= 1, in eighths."""
    eighths = max(0, min(width * 8, round(share * width * 8)))
    full, rest = divmod(eighths, 8)
    return ("█" * full + (BLOCKS[rest] if rest else "")).ljust(width)


def catalog_signature(store: Any) -> tuple:
    """Changes whenever the registered tools (or their descriptors) change: cheap, O(tools), no JSON work."""
    return tuple(
        (
            s.id,
            s.info.origin,
            tuple((r.name, r.registered, r.registeredAt, r.unregisteredAt, len(r.descriptor or b""), r.drift) for r in s.tools.values()),
        )
        for s in store.sessions.values()
    )


def split_server(name: str) -> tuple[str, str]:
    """`<origin> #<session id>` -> (origin, session id)."""
    origin, sep, sid = name.rpartition(" #")
    return (origin, sid) if sep else (name, "")


def row_key(server: str, tool: str) -> str:
    return f"{server}\x00{tool}"


class SchemasScreen(LiveView[None]):
    class Analysed(Message):
        """Posted to the app: the catalog was analysed again (registrations changed, or the view opened)."""

    KEY_SCOPE = "schemas"
    BINDINGS = keys.bindings(KEY_SCOPE)
    AUTO_FOCUS = "#tools"
    DEFAULT_CSS = """
    SchemasScreen #title { background: $panel; text-style: bold; padding: 0 1; }
    SchemasScreen #summary { padding: 0 1; height: auto; background: $boost; }
    SchemasScreen #tools { height: auto; max-height: 60%; min-height: 4; }
    SchemasScreen #detail-box { height: 1fr; padding: 0 1; border-top: solid $panel; }
    """

    def __init__(self) -> None:
        super().__init__()
        self._sig: tuple | None = None
        self.report: dict[str, Any] | None = None
        self._pairs: dict[tuple[str, str], list[tuple[str, str, list[str]]]] = {}
        self._findings: dict[tuple[str, str], list[dict[str, str]]] = {}
        self._rows: dict[str, dict[str, Any]] = {}

    def compose(self) -> ComposeResult:
        yield Static(id="title")
        yield Static(id="summary")
        yield tables.Table(cursor_type="row", id="tools", zebra_stripes=False)
        with VerticalScroll(id="detail-box"):
            yield Static(id="detail")
        yield KeysFooter(compact=True)  # two rows from 80 to 119 columns: no key is cut off

    def on_mount(self) -> None:
        self.refresh_view()

    def _on_changes(self, changes: Changes) -> None:
        if changes.touches(None):
            self.refresh_view()

    @property
    def compact(self) -> bool:
        return bool(getattr(self.app, "compact", False))

    # -- data -----------------------------------------------------------------------------------------------

    def refresh_view(self) -> None:
        sig = (catalog_signature(self.app.view_store), self.compact)
        if sig == self._sig:
            return
        self._sig = sig
        title = Text("schemas  ")
        title.append("(esc: back)" if self.compact else "what every registered tool costs in each conversation (esc: back)", style="dim")
        self.query_one("#title", Static).update(title)
        try:
            report = analyze_sessions(self.app.view_store)
        except FootprintError as exc:  # pragma: no cover - live data is skipped with notes, not refused
            self.report = None
            self.query_one("#summary", Static).update(Text("cannot analyse: ") + inert(exc, limit=200))
            return
        self.app.post_message(self.Analysed())
        self.report = report
        self._index(report)
        self._show_summary(report)
        self._show_table(report)
        self._show_detail()

    def _index(self, report: dict[str, Any]) -> None:
        pairs: dict[tuple[str, str], list[tuple[str, str, list[str]]]] = {}
        for item in report["pairs"]["items"]:
            a, b, labels = item["a"], item["b"], item["labels"]
            pairs.setdefault((a["server"], a["tool"]), []).append((b["server"], b["tool"], labels))
            pairs.setdefault((b["server"], b["tool"]), []).append((a["server"], a["tool"], labels))
        findings: dict[tuple[str, str], list[dict[str, str]]] = {}
        for f in report["lint"]:
            findings.setdefault((f["server"], f["tool"]), []).append(f)
        self._pairs, self._findings = pairs, findings
        self._rows = {row_key(t["server"], t["name"]): t for t in report["tools"]}

    def _show_summary(self, report: dict[str, Any]) -> None:
        s = report["summary"]
        palette = self.app.palette
        out = Text()
        # The header adds up to the rows: sessions that have rows, bytes as the rows count them (B), and the
        # catalog envelope ({"servers":[{"name","tools"}]} punctuation) named as the difference.
        with_tools = len({t["server"] for t in report["tools"]})
        without = s["servers"] - with_tools
        defs, envelope, catalog = s["definitionBytes"], s["envelopeBytes"], s["catalogBytes"]
        if self.compact:
            out.append(f"{s['tools']} tools · {with_tools} sessions · {defs} B (+{envelope} envelope) · ~{s['roughTokens']} tok (rough)")
        else:
            out.append(f"{s['tools']} tool{'s' if s['tools'] != 1 else ''} in {with_tools} session{'s' if with_tools != 1 else ''}")
            if without:
                out.append(f" ({without} more with none)", style=palette.style("muted"))
            out.append(f" · {defs} B of definitions + {envelope} B envelope = catalog {catalog} B · ~{s['roughTokens']} tok (rough)")
        by = s["pairsByLabel"]
        dup = [f"{LABEL_MARKS[k]} {n} {k}" for k, n in by.items() if n]
        out.append("\nrepeated: " if not self.compact else "\n")
        if dup:
            out.append(" · ".join(dup), style=palette.style("slow"))
        else:
            out.append("no repeated definitions", style=palette.style("muted"))
        sev = s["findingsBySeverity"]
        total = sum(sev.values())
        out.append(" · lint: ")
        if total:
            out.append(", ".join(f"{n} {k}" for k, n in sev.items() if n), style=palette.style("error"))
        else:
            out.append("clean", style=palette.style("ok"))
        if report["pairs"]["truncated"]:
            out.append(f" · pairs kept {report['pairs']['kept']} of {report['pairs']['found']}", style=palette.style("slow"))
        if not report["similarity"]["complete"]:
            out.append(f" · similarity scan incomplete ({report['similarity']['notExamined']} pairs not examined)", style=palette.style("slow"))
        if report["notes"]:
            out.append(f" · {len(report['notes'])} not measured (see below)", style=palette.style("muted"))
        self.query_one("#summary", Static).update(out)

    def _show_table(self, report: dict[str, Any]) -> None:
        table = self.query_one("#tools", DataTable)
        keep = None
        if table.row_count:
            try:
                keep = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
            except Exception:
                keep = None
        compact = self.compact
        palette = self.app.palette
        columns: list[tables.Column] = [] if compact else [("#", "rank")]
        columns += [("tool", "tool"), ("session", "session"), (Text("bytes", justify="right"), "bytes")]
        if not compact:
            columns.append((Text("~tok", justify="right"), "tok"))
        columns += [("share", "share"), ("dup", "dup"), ("lint", "lint")]
        width = 4 if compact else 12
        rows: list[tables.Row] = []
        for t in report["tools"]:
            origin, sid = split_server(t["server"])
            session = Text(sid)
            if not compact:
                session.append(" ")
                session.append_text(inert(_host(origin), style="dim", limit=24))
            marks = sorted(
                {LABEL_MARKS[label] for _, _, labels in self._pairs.get((t["server"], t["name"]), []) for label in labels}, key="=≠≈".index
            )
            dup = Text(" ".join(marks), style=palette.style("slow")) if marks else Text("")
            findings = self._findings.get((t["server"], t["name"]), [])
            worst = _worst(findings)
            lint = Text(f"{len(findings)} {worst}" if findings else "", style=palette.style("error" if worst in ("high", "error") else "slow"))
            cells: list[Text] = [] if compact else [Text(str(t["rank"]), justify="right")]
            cells += [
                inert(t["name"], limit=20 if compact else 40),
                session,
                Text(str(t["bytes"]), justify="right"),
            ]
            if not compact:
                cells.append(Text(f"~{t['roughTokens']}", justify="right"))
            share = Text(bar(t["share"], width), style=palette.style("inflight"))
            share.append(f" {t['share'] * 100:4.1f}%" if not compact else f"{t['share'] * 100:3.0f}%")
            cells += [share, dup, lint]
            rows.append((cells, row_key(t["server"], t["name"])))
        tables.fill(table, columns, rows)
        if keep is not None and keep in self._rows:
            table.move_cursor(row=table.get_row_index(keep))

    # -- the selected tool ------------------------------------------------------------------------------------

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_detail()

    def selected(self) -> dict[str, Any] | None:
        table = self.query_one("#tools", DataTable)
        if not table.row_count:
            return None
        try:
            key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        except Exception:
            return None
        return self._rows.get(key or "")

    def _show_detail(self) -> None:
        report = self.report
        widget = self.query_one("#detail", Static)
        if report is None:
            return
        palette = self.app.palette
        t = self.selected()
        out = Text()
        if t is None:
            out.append("no registered tools with a descriptor yet", style=palette.style("muted"))
        else:
            origin, sid = split_server(t["server"])
            out.append_text(inert(t["name"], limit=60))
            out.append(f"  {sid} ", style="bold")
            out.append_text(inert(origin, limit=50))
            out.append(f"\n{t['bytes']} bytes, ~{t['roughTokens']} tok (rough), {t['share'] * 100:.1f}% of the definitions\n")
            out.append("where its bytes go\n", style="bold")
            width = 10 if self.compact else 24
            for part, label in PART_LABELS.items():
                n = t["breakdown"][part]
                share = n / t["bytes"] if t["bytes"] else 0.0
                out.append(f"  {bar(share, width)}", style=palette.style("inflight"))
                out.append(f" {n:>6} B {share * 100:5.1f}%  {label if not self.compact else label.split(' (')[0]}\n")
            pairs = self._pairs.get((t["server"], t["name"]), [])
            out.append("repeated in other sessions\n", style="bold")
            if not pairs:
                out.append("  none\n", style=palette.style("muted"))
            for server, tool, labels in pairs:
                o, s = split_server(server)
                out.append("  " + " · ".join(labels) + ": ", style=palette.style("slow"))
                out.append_text(inert(tool, limit=40))
                out.append(f" in {s} ")
                out.append_text(inert(o, limit=40))
                out.append("\n")
            findings = self._findings.get((t["server"], t["name"]), [])
            out.append("lint\n", style="bold")
            if not findings:
                out.append("  no findings\n", style=palette.style("ok"))
            for f in findings:
                out.append(f"  {f['severity']} {f['code']} ", style=palette.style("error" if f["severity"] in ("high", "error") else "slow"))
                out.append_text(inert(f["pointer"], limit=60))
                out.append("  ")
                out.append_text(inert(f["message"], limit=240))
                if not self.compact:
                    out.append(f"  ({f['source']})", style=palette.style("muted"))
                out.append("\n")
        if report["notes"]:
            out.append("not measured\n", style="bold")
            for note in report["notes"][:20]:
                out.append("  ")
                out.append_text(inert(note, limit=200))
                out.append("\n")
        sim = report["similarity"]
        out.append(
            f"similar descriptions: Jaccard >= 0.8 over word sets; {sim['examinedPairs']} of {sim['eligiblePairs']} eligible pairs examined",
            style=palette.style("muted"),
        )
        widget.update(out)


def _host(origin: str) -> str:
    for prefix in ("https://", "http://"):
        if origin.startswith(prefix):
            return origin[len(prefix) :]
    return origin


def _worst(findings: list[dict[str, str]]) -> str:
    for severity in SEVERITIES:
        if any(f["severity"] == severity for f in findings):
            return severity
    return ""
