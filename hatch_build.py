"""Build the page agent's scripts when a wheel, an editable wheel or an sdist is built (never committed).

In a clone, `node page_agent/build.mjs` writes page_agent/dist/{agent,agent-eager,agent-rest,open}.js and the extension's four scripts;
Node 20 or newer is needed, and without it the build stops with one line saying so. An sdist carries the built
scripts (`artifacts` in pyproject.toml), so a wheel built from it, and an install from either, needs no Node.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

NODE_MAJOR = 20
BUILT = (
    "page_agent/dist/agent.js",
    "page_agent/dist/agent-eager.js",
    "page_agent/dist/agent-rest.js",
    "page_agent/dist/open.js",
    "page_agent/extension/agent.js",
    "page_agent/extension/bridge.js",
    "page_agent/extension/sw.js",
    "page_agent/extension/rest.js",
)


class AgentBuildHook(BuildHookInterface):
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        root = Path(self.root)
        if (root / "PKG-INFO").is_file():  # an unpacked sdist: the scripts were built when it was made
            missing = [f for f in BUILT if not (root / f).is_file()]
            if missing:
                raise SystemExit(f"wmcp-top: this sdist lacks the built page agent ({', '.join(missing)}); rebuild it from a clone")
            return
        node = shutil.which("node")
        major = _major(node)
        if node is None or major is None or major < NODE_MAJOR:
            found = "no `node` on PATH" if node is None else f"{node} is Node {major if major is not None else '?'}"
            raise SystemExit(
                f"wmcp-top: building from a clone needs Node {NODE_MAJOR} or newer to build the page agent ({found}); install it, or install a built wheel or sdist, which need no Node"
            )
        done = subprocess.run([node, str(root / "page_agent" / "build.mjs")], cwd=root, capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"wmcp-top: the page agent did not build: {(done.stderr or done.stdout).strip()}")
        self.app.display_info(done.stdout.strip())


def _major(node: str | None) -> int | None:
    if node is None:
        return None
    try:
        out = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30).stdout
    except OSError:
        return None
    m = re.match(r"v(\d+)\.", out.strip())
    return int(m.group(1)) if m else None
