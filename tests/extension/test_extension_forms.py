"""Two features meeting: declarative (form) tools watched through the browser extension. Each form call is one
span from the extension's agent, and a canary in the form's values and answers stays out of the relay's store,
its session log and the extension's storage, as for imperative tools."""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.conftest import pages  # noqa: F401  (fixture)
from tests.extension.conftest import pair, sid, until, wait_js
from tests.extension.test_extension import canary_nowhere
from tests.lanes.helpers import CANARY

pytestmark = pytest.mark.browser

CALL = """async ({ name, input }) => {
  const mc = document.modelContext
  const t = (await mc.getTools()).find((x) => x.name === name)
  try { return { ok: true, text: await mc.executeTool(t, input) } } catch (e) { return { ok: false, error: e.message } }
}"""

CALLS = [
    ("book_table", {"name": CANARY, "guests": 2, "area": "in"}),
    ("check_order", {"order": CANARY}),  # answered with validation messages holding the canary
    ("slow_quote", {"product": CANARY}),
]


def test_form_tools_through_the_extension_are_measured_and_their_values_stay_in_the_page(ext_browser, ext_id, pages, relay_server, tmp_path) -> None:
    ctx = ext_browser
    pair(ctx, ext_id, relay_server.port, relay_server.token)
    page = ctx.new_page()
    page.goto(pages.url("forms.html", canary=CANARY))  # no script tag: the extension's agent is the only one
    wait_js(page, "window.__webmcpPerf && __webmcpPerf.ledger().registeredTools.includes('slow_quote')")
    session = sid(page)
    got = [page.evaluate(CALL, {"name": n, "input": i}) for n, i in CALLS]
    assert all(CANARY in g.get("text", "") for g in got), "the canary went through the forms and back"

    def stored() -> dict[str, Any] | None:
        s = relay_server.snapshot()["sessions"].get(session)
        return s if s and len(s["spans"]) == len(CALLS) else None

    s = until(stored, "three form spans at the relay")
    assert s["agent"].startswith("wmcp-top-extension/")
    assert [x["tool"] for x in s["spans"]] == [n for n, _ in CALLS]
    assert all(s["tools"][n]["kind"] == "form" for n, _ in CALLS)
    assert s["spans"][1]["isError"] is True, "validation messages are the form's error answer"
    canary_nowhere(relay_server, tmp_path, ctx)
    page.close()
