"""The privacy promise on the coding agent's path: a canary placed in tool inputs and results in a real Chromium page
appears in no answer of `wmcp-top mcp` (structured or text, every tool), nor in what it writes to stderr, nor in
the relay's view it reads them through."""

from __future__ import annotations

import asyncio
import json
import urllib.request
from pathlib import Path
from urllib.parse import urlencode

import pytest
from playwright.async_api import async_playwright

from tests.browser.conftest import BASE_ARGS, RUN_ALL, WEBMCP_ARGS, PageServer, headless_path
from tests.liveness import LIVENESS_S
from tests.mcp.client import mcp_client, write_token
from tests.relay_thread import TOKEN, RelayThread

pytestmark = pytest.mark.browser

CANARY = "CANARY-mcp-7d1f"
NAMES = ["obj", "str", "empty", "env", "strenv", "img", "flagged", "thrower", "cyclic", "slow", "echo", "annotated"]


async def test_canary_is_in_no_answer_of_the_mcp_server(relay_server: RelayThread, tmp_path: Path) -> None:
    pages = PageServer()
    home = tmp_path / "home"
    write_token(home, TOKEN)
    try:
        async with async_playwright() as pw, mcp_client(relay_server.port, home) as client:
            browser = await pw.chromium.launch(executable_path=headless_path(), args=BASE_ARGS + WEBMCP_ARGS)
            page = await browser.new_page()
            agent = relay_server.http_url("/agent.js")
            await page.goto(f"http://127.0.0.1:{pages.port}/native.html?" + urlencode({"agent": agent, "canary": CANARY}))
            await page.evaluate("window.registered")
            sid = await page.evaluate("__webmcpPerf.sessionId")
            # The agent's uplink is part of the rest, which the read above asked for (issue 47): the relay knows the
            # session once it has dialled.
            await asyncio.to_thread(relay_server.wait_for, lambda snap: sid in snap["sessions"])
            cursor = (await client.ok("list_sessions"))["cursor"]
            waiting = asyncio.create_task(client.call("wait_for_calls", count=len(NAMES), session=sid, timeout_s=60, after=cursor))
            got = await page.evaluate(RUN_ALL, {"names": NAMES, "input": {"q": CANARY}, "stringInput": False})
            # The canary really travelled through the tools and back to the browser's agent.
            assert CANARY in got["str"]["text"] and CANARY in got["echo"]["text"] and CANARY in got["env"]["text"]
            answers = [await waiting]
            assert answers[0].structured["count"] == len(NAMES)
            answers.append(await client.call("mark", name="before"))
            await page.evaluate(RUN_ALL, {"names": ["echo"], "input": {"q": CANARY}, "stringInput": False})
            for tool, arguments in (
                ("list_sessions", {}),
                ("get_session", {"session": sid}),
                ("get_findings", {}),
                ("get_findings", {"session": sid}),
                ("get_report", {"session": sid, "spans": 500}),
                ("compare", {"mark": "before", "session": sid}),
            ):
                answer = await client.call(tool, **arguments)
                assert not answer.error, answer.text
                answers.append(answer)
            await browser.close()
        for answer in answers:
            assert CANARY not in answer.everything(), f"the canary leaked into an answer: {answer.text}"
        assert CANARY not in (home / "stderr.txt").read_text()
        with urllib.request.urlopen(relay_server.http_url("/view/capture"), timeout=LIVENESS_S) as reply:
            view = reply.read().decode()
        assert sid in view and CANARY not in view
        assert CANARY not in json.dumps(relay_server.snapshot())
    finally:
        pages.close()
