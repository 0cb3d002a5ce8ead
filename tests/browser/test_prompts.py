"""The Prompt API lane in real Chromium: a LanguageModel stand-in injected before the page runs (Chromium 156
ships the interface, but no model here: availability() is "unavailable"), wrapped by the agent; each step
reaches the relay with exact counts and no text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from relay_bridge.exports.capture import build_capture
from tests.browser.conftest import open_page, session_of

pytestmark = pytest.mark.browser

CANARY = "CANARY-prompt-41f0aa"
CHUNKS = ["Bon", "jour ", "☕😀", " " + CANARY]
ANSWER = "Voilà " + CANARY

STAND_IN = """
(() => {
  const CHUNKS = %s, ANSWER = %s
  class Session {
    async prompt(input) {
      await new Promise((r) => setTimeout(r, 5))
      if (input === "fail") throw new DOMException("too long", "QuotaExceededError")
      return ANSWER
    }
    promptStreaming(input) {
      let i = 0
      return new ReadableStream({
        async pull(ctl) {
          await new Promise((r) => setTimeout(r, 3))
          if (i < CHUNKS.length) ctl.enqueue(CHUNKS[i++])
          else ctl.close()
        },
      }, { highWaterMark: 0 })
    }
    async clone() { return new Session() }
    destroy() {}
  }
  globalThis.LanguageModel = class LanguageModel {
    static async availability() { return "available" }
    static async create() { await new Promise((r) => setTimeout(r, 2)); return new Session() }
  }
})()
""" % (json.dumps(CHUNKS), json.dumps(ANSWER))


def test_prompt_sessions_streaming_included(browser, pages, relay_server) -> None:
    page, errors = open_page(browser, pages.url("debugger.html", relay_server), init_script=STAND_IN)
    sid = page.evaluate("__webmcpPerf.sessionId")
    got = page.evaluate("""async () => {
      const s = await LanguageModel.create()
      const answer = await s.prompt([{ role: "user", content: "Hé 😀" }])
      let failed = null
      try { await s.prompt("fail") } catch (e) { failed = e.name }
      const chunks = []
      for await (const c of s.promptStreaming("Tell me")) chunks.push(c)
      const c2 = await s.clone()
      const r = c2.promptStreaming("x").getReader()
      const first = await r.read()
      await r.cancel()
      c2.destroy()
      s.destroy()
      return { answer, failed, chunks, first: first.value }
    }""")
    assert got == {"answer": ANSWER, "failed": "QuotaExceededError", "chunks": CHUNKS, "first": CHUNKS[0]}, (
        "the page reads exactly what the model gave"
    )

    def prompts() -> dict:
        def read() -> dict:
            s = relay_server.store.sessions.get(sid)
            if s is None:
                return {}
            return {
                ps.id: {
                    "destroyed": ps.destroyed_at is not None,
                    "calls": [
                        (c.kind, c.seq, c.chunks, c.charsIn, c.charsOut, c.error, c.firstChunkMs is not None, c.totalMs is not None) for c in ps.calls
                    ],
                }
                for ps in s.prompts.values()
            }

        return relay_server.call(read)

    relay_server.wait_for(lambda s: session_of(s, sid) and sum(e["kind"] == "prompt-destroy" for e in session_of(s, sid)["timeline"]) == 2)
    seen = prompts()
    assert len(seen) == 2
    first, second = seen.values()
    chars_out = sum(len(c) for c in CHUNKS)  # code points, as Python counts: "😀" is one, not two UTF-16 units
    assert first == {
        "destroyed": True,
        "calls": [
            ("prompt", 0, None, 4, len(ANSWER), None, False, True),
            ("prompt", 1, None, 4, 0, "too long", False, True),
            ("stream", 2, 4, 7, chars_out, None, True, True),
        ],
    }
    assert second == {"destroyed": True, "calls": [("stream", 0, 1, 1, 3, "cancelled", True, True)]}
    snap = relay_server.snapshot()
    kinds = [e["kind"] for e in session_of(snap, sid)["timeline"] if e["kind"].startswith("prompt")]
    assert kinds == ["prompt-create", "prompt", "prompt", "prompt-stream", "prompt-create", "prompt-stream", "prompt-destroy", "prompt-destroy"]
    assert snap["counters"].get("rejected", 0) == 0

    relay_server.call(lambda: relay_server.relay.session_log.flush())
    places = {
        "socket": "\n".join(page.evaluate("window.__socketLog")),
        "prompts()": json.dumps(page.evaluate("__webmcpPerf.prompts()")),
        "relay store": json.dumps(snap, default=str),
        "capture": json.dumps(relay_server.call(lambda: build_capture(relay_server.store)), default=str),
        "log": "\n".join(p.read_text(encoding="utf-8") for p in Path(relay_server.tmp, "logs").glob("*.jsonl")),
    }
    assert '"type":"prompt"' in places["socket"] and '"type":"prompt"' in places["log"], "observed"
    for where, text in places.items():
        assert CANARY not in text and "Bonjour" not in text, f"prompt text leaked into {where}"
    assert errors == []
    page.context.close()
