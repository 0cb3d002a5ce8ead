"""Themes: data files (TOML or JSON) turned into Textual `Theme`s.

Built-in themes ship in the wheel as `tui/_themes` (pyproject force-include of `themes/`); in a source checkout
they are read from the repository's `themes/` folder. The user's own files in `config_dir()/themes` are loaded
after them, so a user file may also replace a built-in theme of the same name.

A theme file holds Textual Theme fields (`name`, `primary`, `background`, `dark`, ...) and a `[variables]`
table. wmcp-top reads these app variables (defaults below, so Textual's own themes work too):
`wmcp-ok`, `wmcp-slow`, `wmcp-error`, `wmcp-inflight`, `wmcp-muted`.
"""

from __future__ import annotations

import json
import logging
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from textual.theme import Theme

from relay_bridge.relay.paths import config_dir

log = logging.getLogger("wmcp_top.tui")

DEFAULT_THEME = "wmcp-dark"
APP_VARIABLES = {
    "wmcp-ok": "#7EC699",
    "wmcp-slow": "#E5C07B",
    "wmcp-error": "#E06C75",
    "wmcp-inflight": "#56B6C2",
    "wmcp-muted": "#7F8794",
}
_FIELDS = ("primary", "secondary", "warning", "error", "success", "accent", "foreground", "background", "surface", "panel", "boost")


class ThemeError(ValueError):
    pass


def builtin_dirs() -> list[Path]:
    here = Path(__file__).resolve().parent
    return [here / "_themes", here.parent / "themes"]


def user_dir() -> Path:
    return config_dir() / "themes"


def theme_from_data(data: dict[str, Any], source: str = "") -> Theme:
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ThemeError(f"{source}: a theme needs a name")
    if not isinstance(data.get("primary"), str):
        raise ThemeError(f"{source}: a theme needs a primary colour")
    kwargs: dict[str, Any] = {k: str(data[k]) for k in _FIELDS if isinstance(data.get(k), str)}
    variables = data.get("variables") or {}
    if not isinstance(variables, dict):
        raise ThemeError(f"{source}: [variables] must be a table")
    theme = Theme(
        name=name.strip(),
        dark=bool(data.get("dark", True)),
        variables={**APP_VARIABLES, **{str(k): str(v) for k, v in variables.items()}},
        **kwargs,
    )
    # Parse every colour now, so a broken file is reported instead of failing later at render time.
    try:
        theme.to_color_system().generate()
        from textual.color import Color

        for key, value in theme.variables.items():
            if key.startswith("wmcp-"):
                Color.parse(value)
    except Exception as exc:
        raise ThemeError(f"{source}: {exc}") from None
    return theme


def load_file(path: Path) -> Theme:
    try:
        if path.suffix == ".toml":
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        else:
            data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ThemeError(f"{path}: {exc}") from None
    if not isinstance(data, dict):
        raise ThemeError(f"{path}: not a table/object")
    return theme_from_data(data, str(path))


def _files(folder: Path) -> list[Path]:
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.suffix in (".toml", ".json") and p.is_file())


@dataclass
class ThemeSet:
    themes: dict[str, Theme]
    errors: list[str]


def load_themes(extra_dirs: list[Path] | None = None) -> ThemeSet:
    """Built-in themes (first folder found), then the user's; later files win on a name clash."""
    themes: dict[str, Theme] = {}
    errors: list[str] = []
    folders: list[Path] = []
    for folder in builtin_dirs():
        if _files(folder):
            folders.append(folder)
            break
    folders.append(user_dir())
    folders.extend(extra_dirs or [])
    for folder in folders:
        for path in _files(folder):
            try:
                theme = load_file(path)
            except ThemeError as exc:
                errors.append(str(exc))
                log.warning("theme skipped: %s", exc)
                continue
            themes[theme.name] = theme
    return ThemeSet(themes, errors)
