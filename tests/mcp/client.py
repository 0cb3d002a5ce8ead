"""`wmcp-top mcp` as a coding agent runs it: a subprocess spoken to by the official MCP SDK's stdio client."""

from __future__ import annotations

import json
import os
import socket
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Answer:
    structured: dict[str, Any] | None
    text: str
    error: bool

    def everything(self) -> str:
        """All the answer says, for a test that looks for a string in any of it."""
        return self.text + json.dumps(self.structured, ensure_ascii=False)


class Client:
    def __init__(self, session: ClientSession) -> None:
        self.session = session

    async def call(self, tool: str, /, **arguments: Any) -> Answer:
        result = await self.session.call_tool(tool, arguments)
        (content,) = result.content
        assert content.type == "text"
        return Answer(result.structuredContent, content.text, result.isError)

    async def ok(self, tool: str, /, **arguments: Any) -> dict[str, Any]:
        answer = await self.call(tool, **arguments)
        assert not answer.error, answer.text
        assert answer.structured is not None
        return answer.structured


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def write_token(home: Path, token: str) -> None:
    """The token a running relay was started with, where `wmcp-top mcp` looks for it (the user's config directory)."""
    (home / "config").mkdir(parents=True, exist_ok=True)
    (home / "config" / "token").write_text(token + "\n")


@asynccontextmanager
async def mcp_client(port: int, home: Path) -> AsyncIterator[Client]:
    """`wmcp-top mcp --port PORT` with its own home (token, state), initialized; its stderr in home/stderr.txt."""
    env = dict(os.environ, WMCP_TOP_HOME=str(home))
    params = StdioServerParameters(command=sys.executable, args=["-m", "tui.cli", "mcp", "--port", str(port), "--no-log"], env=env, cwd=ROOT)
    home.mkdir(parents=True, exist_ok=True)
    with (home / "stderr.txt").open("w", encoding="utf-8") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            await session.list_tools()  # the client validates every structuredContent against these outputSchemas
            yield Client(session)
