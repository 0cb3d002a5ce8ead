#!/usr/bin/env python3
"""Make screenshots/*.svg: wmcp-top's main views, drawn by the app itself from the demo feed.

The feed is the demo scenario with a fixed seed, its first 30 s applied as the relay would, with every clock
frozen (tui.feed.frozen_demo_app), so the files are byte-identical on every run:

  python scripts/screenshots.py            # writes screenshots/
  python scripts/screenshots.py --check    # fails if the files on disk differ from what the app draws now
"""

from __future__ import annotations

import argparse
import asyncio
import difflib
import html
import itertools
import os
import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# (file, keys pressed, terminal size, what it shows)
SHOTS = [
    ("main.svg", [], (120, 36), "the shop tab: summary line, per-tool table, sparklines, calls in flight"),
    ("main-agent.svg", ["tab"], (120, 36), "the hidden agent tab: overlapping calls and a long call still in flight"),
    ("timeline.svg", ["l"], (120, 36), "the shop tab's timeline"),
    ("inspector.svg", ["down", "down", "down", "down", "i"], (120, 36), "render_preview in the tool inspector"),
    ("status.svg", ["d"], (120, 36), "status and troubleshooting"),
    ("schemas.svg", ["w"], (120, 36), "schema weight of every registered tool: bytes, tokens, duplicates, lint"),
    ("prompts.svg", ["m"], (120, 36), "the shop tab's Prompt API sessions and prompts"),
    ("findings.svg", ["f"], (120, 36), "findings: what to fix first: attacks, then what each fix saves"),
    ("compact.svg", [], (60, 20), "the compact layout for a narrow split pane"),
]
SECONDS = 30.0
SEED = 7


async def shoot(keys: list[str], size: tuple[int, int], title: str) -> str:
    # The snapshot tests' wait (a condition, not a count of turns): a loaded machine once drew the `w` view before
    # it was at rest.
    from tests.tui.helpers import at_rest
    from tui.feed import frozen_demo_app

    app = frozen_demo_app(SECONDS, SEED, export_dir=Path(tempfile.gettempdir()))
    async with app.run_test(size=size) as pilot:
        await at_rest(pilot, app, keys)
        return app.export_screenshot(title=title)


def _differences(path: Path, svg: str, most: int = 40) -> str:
    """What differs between the file and `svg`, for a check's log (a check on another machine leaves no file to
    open): the rows of text that differ; when none does, the first line of markup that does."""
    old = path.read_text(encoding="utf-8").splitlines() if path.is_file() else []
    new = svg.splitlines()

    def text(lines: list[str]) -> list[str]:
        return [html.unescape(re.sub(r"<[^>]+>", "", line)).replace("\xa0", " ").rstrip() for line in lines]

    diff = list(itertools.islice(difflib.unified_diff(text(old), text(new), "on disk", "drawn now", n=0, lineterm=""), most))
    if len(diff) > 2:
        return "\n".join(diff)
    first = next((i for i, (a, b) in enumerate(zip(old, new, strict=False)) if a != b), min(len(old), len(new)))
    return f"the same text; the markup differs from line {first + 1}:\n- {old[first][:240] if first < len(old) else ''}\n+ {new[first][:240] if first < len(new) else ''}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "screenshots")
    parser.add_argument("--check", action="store_true", help="compare with the files on disk instead of writing")
    args = parser.parse_args()
    os.environ.setdefault("WMCP_TOP_HOME", tempfile.mkdtemp(prefix="wmcp-shots-"))  # no user keymap or themes
    os.environ.pop("NO_COLOR", None)
    args.out.mkdir(parents=True, exist_ok=True)
    stale = []
    drawn: Path | None = None  # where a check puts what the app draws now, when it differs
    for name, keys, size, what in SHOTS:
        svg = asyncio.run(shoot(keys, size, f"wmcp-top — {what}"))
        path = args.out / name
        if args.check:
            if not path.is_file() or path.read_text(encoding="utf-8") != svg:
                stale.append(name)
                drawn = drawn or Path(tempfile.mkdtemp(prefix="wmcp-shots-drawn-"))
                (drawn / name).write_text(svg, encoding="utf-8")
                print(_differences(path, svg), file=sys.stderr)
            continue
        path.write_text(svg, encoding="utf-8")
        print(f"wrote {path} ({size[0]}x{size[1]})")
    if stale:
        print(f"out of date: {', '.join(stale)} (run python scripts/screenshots.py; what the app draws now is in {drawn})", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
