"""Key bindings, each with an id, and the user's keymap file.

Every binding below can be remapped by id in `config_dir()/keymap.toml`:

    # ~/.config/wmcp-top/keymap.toml  (WMCP_TOP_HOME/config/keymap.toml when that is set)
    [keys]
    "wmcp.pause" = "space"
    "wmcp.next_session" = "tab,n"      # several keys: comma-separated

Keys use Textual's names (`ctrl+s`, `question_mark`, `slash`, ...); unknown ids are reported on start and
ignored. The help screen (`?`) lists every id with its current key.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from textual.binding import Binding, BindingType

from relay_bridge.relay.paths import config_dir


@dataclass(frozen=True)
class Action:
    id: str
    key: str
    action: str
    description: str
    show: bool = True
    priority: bool = False
    help: str = ""
    scope: str = "app"  # "dashboard": bound on the dashboard screen only (over a view the key passes on); any
    # other scope is a view's (its screen's KEY_SCOPE), bound there, in the palette only there
    native: bool = False  # the widget's own key (enter in a list): listed in help, bound by the widget
    palette: bool = True  # a command palette entry (moving a cursor is not a command)


ACTIONS: tuple[Action, ...] = (
    Action("wmcp.quit", "q,ctrl+c", "quit", "Quit", help="stop the relay and leave (ctrl+c too, as in htop and k9s)"),
    Action("wmcp.help", "question_mark", "help", "Help", help="keys, their ids and the keymap file"),
    Action("wmcp.filter", "slash", "filter", "Filter", help="filter tools by name (esc clears)", scope="dashboard"),
    Action("wmcp.sort", "s", "sort", "Sort", help="sort by the next column (a header click sorts too)", scope="dashboard"),
    Action("wmcp.sort_reverse", "S", "sort_reverse", "Reverse", show=False, help="reverse the sort order", scope="dashboard"),
    Action(
        "wmcp.sort_by",
        "o,greater_than_sign",
        "sort_by",
        "Sort by",
        show=False,
        help="pick the column to sort by (htop's F6 / >): j/k or the arrows, enter",
        scope="dashboard",
    ),
    Action("wmcp.pause", "p", "pause", "Pause", help="freeze the screen; data is still recorded"),
    Action("wmcp.next_session", "tab", "next_session", "Next", priority=True, help="next session tab", scope="dashboard"),
    Action("wmcp.prev_session", "shift+tab", "prev_session", "Prev", show=False, priority=True, help="previous session tab", scope="dashboard"),
    Action(
        "wmcp.dismiss_ended",
        "D",
        "dismiss_ended",
        "Dismiss ended",
        show=False,
        help="close the tabs of ended and disconnected sessions (their data stays in exports and the log)",
        scope="dashboard",
    ),
    Action("wmcp.export_report", "e", "export_report", "Report", help="write the selected session's report (v2)"),
    Action("wmcp.export_capture", "E", "export_capture", "Capture", show=False, help="write a capture of all sessions"),
    Action("wmcp.export_trace", "t", "export_trace", "Trace", show=False, help="write a Chrome trace of all sessions"),
    Action("wmcp.screenshot", "ctrl+s", "screenshot", "Screenshot", show=False, help="save an SVG screenshot in the export dir"),
    Action("wmcp.status", "d", "status", "Status", help="status and troubleshooting"),
    Action("wmcp.timeline", "l", "timeline", "Timeline", help="the selected session's timeline"),
    Action("wmcp.inspect", "i", "inspect", "Inspect", help="inspect the selected tool"),
    Action("wmcp.schemas", "w", "schemas", "Schemas", help="schema weight: bytes, tokens, duplicates and lint of every registered tool"),
    Action("wmcp.findings", "f", "findings", "Findings", show=False, help="what to fix first: findings ranked by what each fix saves (tokens, ms)"),
    Action("wmcp.prompts", "m", "prompts", "Prompts", help="the selected session's Prompt API (LanguageModel) sessions and prompts"),
    Action(
        "wmcp.invoke",
        "x",
        "invoke",
        "Call",
        show=False,
        help="call the selected tool from the terminal (input editor; needs wmcp-top --allow-invoke)",
    ),
    Action("wmcp.copy_snippet", "c", "copy_snippet", "Copy", show=False, help="copy the script tag (OSC 52)"),
    # every list and scrolling pane, as in vim, less, k9s and lazygit: the key the widget already knows for it
    Action("wmcp.down", "j", "list_key('down')", "Down", show=False, palette=False, help="next row (or scroll down), as ↓"),
    Action("wmcp.up", "k", "list_key('up')", "Up", show=False, palette=False, help="previous row (or scroll up), as ↑"),
    Action("wmcp.first", "g", "list_key('home')", "First", show=False, palette=False, help="first row (top), as home"),
    Action("wmcp.last", "G", "list_key('end')", "Last", show=False, palette=False, help="last row (bottom), as end"),
    # the views: each screen binds its scope (KEY_SCOPE), so help and the keymap know them too
    Action("wmcp.view.back", "escape,q", "app.pop_screen", "Back", help="back to the dashboard", scope="view"),
    Action("wmcp.view.open", "enter", "select_cursor", "Open", native=True, help="in a list: open the row's detail", scope="view"),
    Action("wmcp.timeline.clear", "ctrl+l", "clear", "Clear", help="list only what happens from now on", scope="timeline"),
    Action("wmcp.timeline.tools", "1", "toggle_group('tools')", "Tools", show=False, help="show or hide tool registrations", scope="timeline"),
    Action("wmcp.timeline.calls", "2", "toggle_group('calls')", "Calls", show=False, help="show or hide calls", scope="timeline"),
    Action("wmcp.timeline.prompts", "3", "toggle_group('prompts')", "Prompts", show=False, help="show or hide Prompt API events", scope="timeline"),
    Action(
        "wmcp.timeline.system",
        "4",
        "toggle_group('system')",
        "System",
        show=False,
        help="show or hide page events (reload, visibility, ...)",
        scope="timeline",
    ),
    # a log's End is its newest line (and follows it from there); the table's own End scrolls sideways
    Action("wmcp.timeline.newest", "end,G", "newest", "Newest", show=False, priority=True, help="newest entry, and follow", scope="timeline"),
    Action("wmcp.timeline.oldest", "home,g", "oldest", "Oldest", show=False, priority=True, help="oldest entry", scope="timeline"),
    Action("wmcp.inspect.invoke", "x", "app.invoke", "Call", help="in the inspector: call the tool (input editor)", scope="inspector"),
    Action(
        "wmcp.invoke.run",
        "ctrl+r",
        "run",
        "Call",
        priority=True,
        help="in the call dialog: validate the input, confirm if not read-only, call",
        scope="invoke",
    ),
    Action("wmcp.invoke.reset", "ctrl+g", "reset", "Reset input", help="in the call dialog: back to the generated input", scope="invoke"),
    Action("wmcp.invoke.close", "escape", "close", "Close", priority=True, help="close the call dialog", scope="invoke"),
    Action("wmcp.invoke.yes", "y", "answer(True)", "Call it", help="confirm a call of a tool that is not read-only", scope="confirm"),
    Action("wmcp.invoke.no", "n,escape", "answer(False)", "Cancel", help="do not call it", scope="confirm"),
    Action("wmcp.detail.close", "escape", "close", "Close", help="close an entry's detail", scope="detail"),
    Action("wmcp.sort.close", "escape,q", "close", "Close", help="keep the sort as it was", scope="sort"),
    Action("wmcp.help.close", "escape,question_mark,q", "app.pop_screen", "Close", help="close this help", scope="help"),
)

# A view's scope also holds the keys every view has (back, enter in its list).
VIEW_SCOPES = frozenset({"timeline", "inspector", "prompts", "schemas", "status"})
LIST_KEYS = ("wmcp.down", "wmcp.up", "wmcp.first", "wmcp.last")
MODAL_LISTS = frozenset({"help", "sort", "detail"})
SCOPE_TITLES = {
    "app": "everywhere",
    "dashboard": "dashboard",
    "view": "every view",
    "timeline": "timeline (l)",
    "inspector": "tool inspector (i)",
    "invoke": "call dialog (x)",
    "confirm": "call confirmation",
    "detail": "entry detail",
    "sort": "sort by (o)",
    "help": "this help",
}

KEY_DISPLAY = {"question_mark": "?", "slash": "/", "shift+tab": "⇧tab", "greater_than_sign": ">"}


def bindings(scope: str = "app") -> list[BindingType]:
    """The bindings of one scope: "app" (every screen), "dashboard" (the dashboard screen only), or a view's
    (with the keys every view has: back)."""
    scopes = {scope, "view"} if scope in VIEW_SCOPES else {scope}
    own: list[BindingType] = [
        Binding(a.key, a.action, a.description, show=a.show, priority=a.priority, id=a.id, key_display=KEY_DISPLAY.get(a.key))
        for a in ACTIONS
        if a.scope in scopes and not a.native
    ]
    if scope in MODAL_LISTS:  # a modal screen hides the app's bindings: its list gets j/k/g/G of its own
        own += [Binding(a.key, f"app.{a.action}", a.description, show=False, id=a.id) for a in ACTIONS if a.id in LIST_KEYS]
    return own


def keymap_path() -> Path:
    return config_dir() / "keymap.toml"


def load_keymap(path: Path | None = None) -> tuple[dict[str, str], list[str]]:
    """The user's remapping {binding id: keys} and any problems found in the file."""
    path = path or keymap_path()
    if not path.is_file():
        return {}, []
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return {}, [f"{path}: {exc}"]
    table = data.get("keys", data)
    known = {a.id for a in ACTIONS}
    keymap: dict[str, str] = {}
    problems: list[str] = []
    for key, value in table.items():
        if key not in known:
            problems.append(f"{path}: unknown binding id {key!r}")
        elif not isinstance(value, str) or not value.strip():
            problems.append(f"{path}: {key} needs a key string")
        else:
            keymap[key] = value.strip()
    return keymap, problems
