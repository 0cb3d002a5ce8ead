"""Form values and a form's answers are bodies: a canary typed into a declarative tool's fields (by the browser's
executeTool, as an agent would) and put into the page's respondWith answers — validation messages, a promise's
value, the query of a form that navigates — appears nowhere the product writes: not on the socket, in the relay's
store, the session log, the report or the capture."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import msgspec
import pytest

from relay_bridge.cli import write_reports
from tests.browser.conftest import browser, open_page, pages, playwright, spans_of, wait_phase  # noqa: F401  (fixtures)

pytestmark = pytest.mark.browser

CANARY = "CANARY-form-77ab"

CALLS = [
    ("book_table", {"name": CANARY, "guests": 2, "area": "in"}),
    ("check_order", {"order": CANARY}),  # answered with validation messages holding the canary
    ("slow_quote", {"product": CANARY}),
    ("book_table", {"name": CANARY, "area": CANARY}),  # refused by the browser: the value is in its error
]

CALL = """async ({ name, input }) => {
  const mc = document.modelContext
  const t = (await mc.getTools()).find((x) => x.name === name)
  try { return { ok: true, text: await mc.executeTool(t, input) } } catch (e) { return { ok: false, error: e.message } }
}"""


def test_form_values_and_answers_never_leave_the_page(browser, pages, relay_server, tmp_path: Path) -> None:
    page, errors = open_page(browser, pages.url("forms.html", relay_server, canary=CANARY))
    wait_phase(page, "tools-registered")
    sid = page.evaluate("__webmcpPerf.sessionId")
    got = [page.evaluate(CALL, {"name": n, "input": i}) for n, i in CALLS]
    # The canary really went through the forms and back to the calling agent.
    assert CANARY in got[0]["text"] and CANARY in got[1]["text"] and CANARY in got[2]["text"] and CANARY in got[3]["error"]
    relay_server.wait_for(lambda s: len(spans_of(s, sid)) == len(CALLS))
    socket_log = page.evaluate("window.__socketLog")
    # A form that navigates: its query (the canary in a hidden field) is the next page's URL.
    page.evaluate("""async () => { const mc = document.modelContext
      mc.executeTool((await mc.getTools()).find((t) => t.name === "search_site"), { q: "tea" }) }""")
    page.wait_for_url("**/result.html?*")
    snap = relay_server.wait_for(
        lambda s: len(spans_of(s, sid)) == len(CALLS) + 1 and any(x["navigated_from"] == sid for x in s["sessions"].values())
    )
    assert spans_of(snap, sid)[-1]["outcome"] == "navigated"
    reports = write_reports(relay_server.store, tmp_path / "reports")
    store_bytes = relay_server.call(lambda: pickle.dumps(dict(relay_server.store.sessions)))
    relay_server.call(lambda: relay_server.relay.session_log.flush())
    places = {
        "socket": "\n".join(socket_log),
        "store": store_bytes.decode("latin-1"),
        "snapshot": json.dumps(snap, default=str),
        "timeline": msgspec.json.encode([list(s.timeline) for s in relay_server.store.sessions.values()]).decode(),
    }
    places.update({f"export:{p.name}": p.read_text(encoding="utf-8") for p in reports})
    logs = list((relay_server.tmp / "logs").glob("*.jsonl"))
    assert logs, "the session log was written"
    places.update({f"log:{p.name}": p.read_text(encoding="utf-8") for p in logs})
    assert any('"type":"spans"' in frame for frame in socket_log), "the socket was observed"
    for where, text in places.items():
        assert CANARY not in text, f"the canary leaked into {where}"
    assert errors == []
