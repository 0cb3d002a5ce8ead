"""Architecture checks: the headless core never pulls in the UI toolkit."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_relay_bridge_imports_neither_textual_nor_rich() -> None:
    # Every module but `__main__` ones (importing those runs a command).
    modules = [
        p.relative_to(ROOT).with_suffix("").as_posix().replace("/", ".") for p in (ROOT / "relay_bridge").rglob("*.py") if p.name != "__main__.py"
    ]
    code = (
        "import importlib, sys\n"
        f"for m in {modules!r}: importlib.import_module(m)\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich'))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"relay_bridge imported: {out.stdout.strip()}"


def test_headless_commands_do_not_import_textual() -> None:
    code = "import sys\nfrom tui.cli import main\ntry:\n    main(['--version'])\nexcept SystemExit: pass\nprint(any(m.startswith('textual') for m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip().endswith("False")


# The one module allowed a private Textual import: it replaces the Linux driver's input thread, which needs
# Textual's terminal parser. Textual is pinned exactly (pyproject.toml), and tests/tui/test_tmux.py drives the
# thread in a real terminal.
PRIVATE_ALLOWED = {"tui/quiet_driver.py": "textual._xterm_parser"}


def test_the_ui_uses_textual_through_public_modules_only() -> None:
    """`textual.widgets._tabbed_content` and friends are Textual's internals: they move between releases."""
    private = []
    for path in (ROOT / "tui").rglob("*.py"):
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            words = line.split()
            if (
                words[:1] in (["from"], ["import"])
                and len(words) > 1
                and words[1].startswith("textual")
                and any(part.startswith("_") for part in words[1].split("."))
                and PRIVATE_ALLOWED.get(path.relative_to(ROOT).as_posix()) != words[1]
            ):
                private.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert not private, "\n".join(private)


def test_every_type_ignore_says_why() -> None:
    """A `type: ignore` names its error code and, after it, the reason (pyproject's mypy section says so)."""
    bare = re.compile(r"type: ignore(?!\[[^\]]+\]\s+#\s*\S)")
    found = [
        f"{path.relative_to(ROOT)}:{n}"
        for folder in ("relay_bridge", "tui", "tests", "scripts")
        for path in sorted((ROOT / folder).rglob("*.py"))
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if bare.search(line) and path != Path(__file__).resolve()
    ]
    assert not found, f"type: ignore without a code and a reason: {found}"


def test_no_import_circles() -> None:
    """No module imports one that (directly or not) imports it back, top-level or lazy (grimp, import-linter's
    graph, sees both). Imports for the type checker only are left out: the screens name the app's class for
    their typed `app` (tui/screens/live.py), as Textual's own MessagePump does."""
    import grimp

    circles = set()
    for package in ("relay_bridge", "tui"):
        graph = grimp.build_graph(package, exclude_type_checking_imports=True)
        for module in graph.modules:
            for imported in graph.find_modules_directly_imported_by(module):
                if imported != module and graph.chain_exists(imported, module):
                    circles.add(" <-> ".join(sorted((module, imported))))
    assert not circles, sorted(circles)
