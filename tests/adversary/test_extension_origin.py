"""Origin from the browser, never from the page, through the real extension in real Chromium (issue 31, item 1).

A tokenless `http://localhost` page talks to the extension's isolated-world bridge itself (the handshake any of
its scripts can post) and says hello as `https://bank.example`, as the extension's agent, with forged 98,765 ms
calls, on as many ports and sessions as the bridge lets it open, trying to fill the relay's session table. A
script-tag page (it holds the token) opens its own socket and claims the extension's agent name. Then the user's
real page, in another tab, must be whole: its session recorded under its own origin, every call once."""

from __future__ import annotations

import json
from typing import Any

import pytest

from relay_bridge.core import synth
from relay_bridge.relay.extension import is_extension_agent
from tests.extension.conftest import (  # noqa: F401  (fixtures)
    ext_browser,
    ext_id,
    ext_site,
    pair,
    run_tools,
    sid,
    until,
)
from tests.liveness import LIVENESS_S
from tests.relay_thread import RelayThread

pytestmark = pytest.mark.browser

EVIL = """<!doctype html><html><head><meta charset="utf-8"><title>Bank</title></head><body>evil</body></html>"""

# What the page's own script does: the bridge's one handshake (a window message carrying a MessagePort), then
# frames straight into that port, the way the agent would send them. Each wait ends when its condition holds, or
# after `ms` (the liveness bound).
FORGE = """async ({ hellos, spans, ports, perPort, ms }) => {
  const settle = (pred, ms) => new Promise((done) => { const t0 = Date.now(); const tick = () => (pred() || Date.now() - t0 > ms) ? done(pred()) : setTimeout(tick, 20); tick() })
  const answers = []
  let opened = 0
  for (let p = 0; p < ports; p++) {
    const ch = new MessageChannel()
    const got = []
    ch.port1.onmessage = (e) => got.push(e.data)
    window.postMessage({ "wmcp-top:bridge/1": "connect" }, "*", [ch.port2])
    if (!(await settle(() => got.some((m) => m && m.t === "open"), ms))) continue
    opened++
    for (let k = 0; k < perPort; k++) {
      const i = p * perPort + k
      ch.port1.postMessage({ t: "send", d: JSON.stringify(hellos[i]) })
      ch.port1.postMessage({ t: "send", d: JSON.stringify(spans[i]) })
    }
    await settle(() => got.filter((m) => m && m.t === "msg").length >= perPort + 1, ms)
    answers.push(...got.filter((m) => m && m.t === "msg").map((m) => m.d))
  }
  return { opened, answers }
}"""

SCRIPT_TAG = """async ({ url, hello, ms }) => new Promise((done) => {
  const ws = new WebSocket(url)
  const got = []
  ws.onmessage = (e) => { got.push(e.data); if (got.length === 2) { ws.close(); done(got) } }
  ws.onopen = () => ws.send(JSON.stringify(hello))
  ws.onerror = () => done(["error"])
  setTimeout(() => done(got), ms)
})"""


def forged(n: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    ids = [f"ba{i:06x}" for i in range(n)]
    hellos = [synth.hello(s, "https://bank.example", title="Online banking", agent="wmcp-top-extension/0.1.0") for s in ids]
    spans = [synth.spans_frame(s, [synth.span(s, 0, "transfer", 1.0, 98_765.0)]) for s in ids]
    return hellos, spans


def test_a_tokenless_page_speaks_only_for_itself_and_the_real_page_is_whole(ext_browser, ext_id, ext_site, relay_server: RelayThread) -> None:
    ctx = ext_browser
    pair(ctx, ext_id, relay_server.port, relay_server.token)
    evil_url = ext_site.url("/evil.html", host="localhost")
    ctx.route(evil_url, lambda route: route.fulfill(status=200, content_type="text/html; charset=utf-8", body=EVIL))
    evil = ctx.new_page()
    evil.goto(evil_url)
    evil_sid = sid(evil)  # the extension's own agent runs there too: the page's honest session

    hellos, spans = forged(64)
    out = evil.evaluate(FORGE, {"hellos": hellos, "spans": spans, "ports": 4, "perPort": 16, "ms": LIVENESS_S * 1000})
    assert out["opened"] >= 1, "the page reached the bridge (the attack is real)"
    codes = [json.loads(a).get("code") for a in out["answers"]]
    assert "session_limit" in codes, "the extension refused sessions past the frame's share itself"

    # A script-tag page holds the token: its socket carries its own Origin, and the extension's name is refused.
    port = ext_site.port
    tag = ctx.new_page()
    tag.goto(ext_site.url("/opener.html"))
    tagged = tag.evaluate(
        SCRIPT_TAG,
        {
            "url": relay_server.ws_url,
            "hello": synth.hello("5c417a90", ext_site.url("").rstrip("/"), agent="wmcp-top-extension/0.1.0"),
            "ms": LIVENESS_S * 1000,
        },
    )
    assert any('"forbidden_origin"' in m for m in tagged), (tagged, json.dumps(relay_server.snapshot()["counters"]))

    real = ctx.new_page()
    real.goto(ext_site.url("/plain.html"))
    real_sid = sid(real)
    calls = run_tools(real, "plain")
    snap = relay_server.wait_for(lambda s: real_sid in s["sessions"] and len(s["sessions"][real_sid]["spans"]) == len(calls))

    sessions = snap["sessions"]
    assert not [s for s in sessions.values() if s["info"]["origin"] == "https://bank.example"], "no session speaks for another origin"
    forged_ids = {h["session"]["id"] for h in hellos}  # by id, not prefix: a real session's random id began "ba" once
    mine = [s for s in sessions.values() if s["id"] in forged_ids or s["id"] == evil_sid]
    # At most 8 at once: the relay keeps a session whose pipe closed (`disconnected`, resumable), so over a run the
    # frame's sessions in its table can pass 8 (9 on a loaded machine, one never acked); the cap is on the live ones.
    live = [s for s in mine if s["state"] == "live"]
    states = {s["id"]: s["state"] for s in mine}
    assert mine and len(live) <= 8, f"one frame holds at most 8 sessions at once through the extension, had {len(live)}: {states}"
    for s in mine:
        assert (s["info"]["origin"], s["info"]["context"]) == (f"http://localhost:{port}", "top"), s["info"]
        assert is_extension_agent(s["agent"])  # it did come through the extension: marked so, under its own origin
    assert "5c417a90" not in sessions
    print(
        f"\nforged hellos 64 on {out['opened']} ports: {len(live)} sessions live (own origin), "
        f"{codes.count('session_limit')} refused by the extension, 0 as https://bank.example"
    )

    page = sessions[real_sid]
    assert page["info"]["origin"] == ext_site.url("").rstrip("/") and is_extension_agent(page["agent"])
    assert [x["tool"] for x in page["spans"]] == [c["name"] for c in calls] and page["counters"]["rejected"] == 0
    assert page["state"] == "live" and page["coverage"] == "running"
    until(lambda: real.evaluate("(id) => window.__webmcpPerf.relay().acked[id]", real_sid) == len(calls) - 1, "the real page's calls are all acked")
