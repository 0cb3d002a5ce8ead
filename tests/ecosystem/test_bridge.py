"""chrome-devtools-mcp (pinned in tests/ecosystem) is how a coding agent reaches a page's tools: its
`execute_webmcp_tool`, driven by the official MCP SDK client over stdio, with the agent in the page. The bridge
re-wraps each result outside the browser (`{status, output}`, pretty-printed). The page agent's resultBytes
stay what left the page, the compact JSON of the output; what the bridge adds is what docs/ecosystem.md says."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.browser.conftest import headless_path
from tests.ecosystem.harness import AGENT, HERE

pytestmark = pytest.mark.browser


def utf8(text: str) -> int:
    return len(text.encode("utf-8"))


def test_chrome_devtools_mcp_re_wraps_what_left_the_page() -> None:
    if not (HERE / "node_modules" / "chrome-devtools-mcp").is_dir():
        pytest.fail("tests/ecosystem/node_modules is missing: npm ci --prefix tests/ecosystem", pytrace=False)
    run = subprocess.run(
        ["node", str(Path(HERE, "bridge.mjs")), str(AGENT), headless_path()], capture_output=True, text=True, timeout=120, check=True
    )
    out = json.loads(run.stdout)
    calls, spans = out["calls"], out["spans"]
    assert [(s["tool"], s["isError"]) for s in spans] == [("rows", False), ("items", False)], "every call once"
    growth = {}
    for call, span in zip(calls, spans, strict=True):
        assert call["items"] == 1 and not call["isError"], call
        got = json.loads(call["text"])
        assert list(got) == ["status", "output"] and got["status"] == "Completed"
        # What left the page: the output as the browser's executeTool serialised it (compact JSON).
        assert span["resultBytes"] == utf8(json.dumps(got["output"], separators=(",", ":"), ensure_ascii=False))
        # What the coding agent received: the same output inside {status, output}, indented by two.
        assert call["text"] == json.dumps(got, indent=2, ensure_ascii=False)
        growth[call["tool"]] = utf8(call["text"]) / span["resultBytes"]
    # docs/ecosystem.md's figures: about a third more for long strings, more than double for many short fields.
    assert 1.25 < growth["items"] < 1.40 and 2.1 < growth["rows"] < 2.4, growth
