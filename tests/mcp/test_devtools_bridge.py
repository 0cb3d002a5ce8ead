"""The coding agent's whole chain: chrome-devtools-mcp (the real npm package, pinned in tests/ecosystem) opens a page
with the agent in its own Chromium and calls the page's WebMCP tools, as Claude Code or Gemini CLI would through it;
`wmcp-top mcp` answers what those calls cost."""

from __future__ import annotations

import asyncio
import json
import os
import re
from pathlib import Path

import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.types import CallToolResult

from tests.browser.conftest import BASE_ARGS, PageServer, headless_path
from tests.mcp.client import free_port, mcp_client

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
BRIDGE = ROOT / "tests" / "ecosystem" / "node_modules" / "chrome-devtools-mcp" / "build" / "src" / "bin" / "chrome-devtools-mcp.js"
CHROME_ARGS = [*BASE_ARGS, "--enable-features=WebMCPTesting,DevToolsWebMCPSupport", "--enable-experimental-web-platform-features"]


def bridge_parameters() -> StdioServerParameters:
    if not BRIDGE.is_file():
        pytest.fail(f"{BRIDGE} is missing: run `npm ci --prefix tests/ecosystem` (pinned chrome-devtools-mcp)", pytrace=False)
    args = [str(BRIDGE), "--headless", "--isolated", "--executablePath", headless_path(), "--categoryExperimentalWebmcp", "--no-usage-statistics"]
    args += [f"--chromeArg={arg}" for arg in CHROME_ARGS]
    return StdioServerParameters(command="node", args=args, env=dict(os.environ, CI="1"))


def text_of(result: CallToolResult) -> str:
    """The bridge's answer: one text block (it gives no structuredContent)."""
    assert not result.isError, result.content
    content = result.content[0]
    assert content.type == "text"
    return content.text


async def test_calls_made_through_chrome_devtools_mcp_are_read_back_by_wmcp_top_mcp(pages: PageServer, tmp_path: Path) -> None:
    port = free_port()
    home = tmp_path / "home"
    async with mcp_client(port, home) as top:
        token = (home / "config" / "token").read_text().strip()
        url = pages.url("native.html", agent=f"http://127.0.0.1:{port}/agent.js?t={token}")
        with (tmp_path / "bridge-stderr.txt").open("w") as errlog:
            async with stdio_client(bridge_parameters(), errlog=errlog) as (read, write), ClientSession(read, write) as bridge:
                await bridge.initialize()
                opened = text_of(await bridge.call_tool("new_page", {"url": url}))
                (page_id,) = re.findall(r"^(\d+): native host .*\[selected\]$", opened, re.M)
                listed = text_of(await bridge.call_tool("list_webmcp_tools", {"pageId": int(page_id)}))
                assert 'name="obj"' in listed
                start = await top.ok("list_sessions")
                waiting = asyncio.create_task(top.ok("wait_for_calls", count=2, timeout_s=60, after=start["cursor"]))
                for name in ("obj", "slow"):
                    done = text_of(
                        await bridge.call_tool("execute_webmcp_tool", {"pageId": int(page_id), "toolName": name, "input": json.dumps({"q": "x"})})
                    )
                    assert '"status": "Completed"' in done, done
                waited = await waiting
        assert not waited["timedOut"], "released by the timeout, not by the bridge's calls"
        spans = {c["span"]["tool"]: c["span"] for c in waited["calls"]}
        assert set(spans) == {"obj", "slow"}
        # What left the page: the object result as JSON text, in UTF-8 bytes (the bridge's own wrapping is outside it).
        result = {"items": [1, 2, 3], "note": "tée ☕", "echo": "x"}
        assert spans["obj"]["resultBytes"] == len(json.dumps(result, separators=(",", ":"), ensure_ascii=False).encode())
        sid = waited["calls"][0]["session"]
        rows = {r["tool"]: r for r in (await top.ok("get_session", session=sid))["tools"]}
        assert (rows["obj"]["calls"], rows["slow"]["calls"], rows["str"]["calls"]) == (1, 1, 0)
        assert rows["slow"]["p50Ms"] >= 30
