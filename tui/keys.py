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

from relay_bridge.paths import config_dir


@dataclass(frozen=True)
class Action:
    id: str
    key: str
    action: str
    description: str
    show: bool = True
    priority: bool = False
    help: str = ""
    scope: str = "app"  # "dashboard": bound on the dashboard screen only (over a view the key passes on)


ACTIONS: tuple[Action, ...] = (
    Action("wmcp.quit", "q", "quit", "Quit", help="stop the relay and leave"),
    Action("wmcp.help", "question_mark", "help", "Help", help="keys, their ids and the keymap file"),
    Action("wmcp.filter", "slash", "filter", "Filter", help="filter tools by name (esc clears)", scope="dashboard"),
    Action("wmcp.sort", "s", "sort", "Sort", help="sort by the next column (a header click sorts too)", scope="dashboard"),
    Action("wmcp.sort_reverse", "S", "sort_reverse", "Reverse", show=False, help="reverse the sort order", scope="dashboard"),
    Action("wmcp.pause", "p", "pause", "Pause", help="freeze the screen; data is still recorded"),
    Action("wmcp.next_session", "tab", "next_session", "Next", priority=True, help="next session tab", scope="dashboard"),
    Action("wmcp.prev_session", "shift+tab", "prev_session", "Prev", show=False, priority=True, help="previous session tab", scope="dashboard"),
    Action("wmcp.dismiss_ended", "D", "dismiss_ended", "Dismiss ended", show=False,
           help="close the tabs of ended and disconnected sessions (their data stays in exports and the log)", scope="dashboard"),
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
    Action("wmcp.invoke", "x", "invoke", "Call", show=False,
           help="call the selected tool from the terminal (input editor; needs wmcp-top --allow-invoke)"),
    Action("wmcp.copy_snippet", "c", "copy_snippet", "Copy", show=False, help="copy the script tag (OSC 52)"),
)

KEY_DISPLAY = {"question_mark": "?", "slash": "/", "shift+tab": "⇧tab"}


def bindings(scope: str = "app") -> list[BindingType]:
    """The bindings of one scope: "app" (every screen) or "dashboard" (the dashboard screen only)."""
    return [
        Binding(a.key, a.action, a.description, show=a.show, priority=a.priority, id=a.id,
                key_display=KEY_DISPLAY.get(a.key))
        for a in ACTIONS
        if a.scope == scope
    ]


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
