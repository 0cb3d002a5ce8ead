"""The HTML report in headless Chromium: the treemap shows, the search box filters rows as you type, nothing
reaches the network, nothing logs an error, and hostile names and descriptions stay text."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser.conftest import BASE_ARGS, headless_path

from .conftest import FIXTURES, run_main, tool, write_json

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=headless_path(), args=BASE_ARGS)
        try:
            yield b
        finally:
            b.close()


def _report(tmp_path: Path, capsys: pytest.CaptureFixture[str], *args: str) -> Path:
    page = tmp_path / "report.html"
    code, _, err = run_main([*args, "--html", str(page)], capsys)
    assert code == 0, err
    return page


class Watch:
    """Everything a page does that the report must never do."""

    def __init__(self, page: Any, url: str) -> None:
        self.url = url
        self.requests: list[str] = []
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        page.on("request", lambda r: self.requests.append(r.url))
        page.on("console", lambda m: self.errors.append(m.text) if m.type in ("error", "warning") else None)
        page.on("pageerror", lambda e: self.errors.append(str(e)))
        page.on("dialog", self._dismiss)

    def _dismiss(self, dialog: Any) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def check(self) -> None:
        assert [u for u in self.requests if u != self.url] == [], "the report made network requests"
        assert self.errors == []
        assert self.dialogs == [], "input text executed as script"


def test_treemap_search_no_network_no_errors(browser: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _report(tmp_path, capsys, "--demo")
    page = browser.new_page()
    watch = Watch(page, path.as_uri())
    page.goto(path.as_uri(), wait_until="load")
    cells = page.locator("#treemap .cell")
    assert cells.count() == 3
    box = page.locator("#treemap").bounding_box()
    assert box is not None and box["width"] > 100 and box["height"] > 100
    areas = [cells.nth(i).bounding_box() for i in range(3)]
    assert all(a is not None and a["width"] * a["height"] > 100 for a in areas), "treemap cells are not drawn"
    rows = page.locator("#tools tbody tr")
    assert rows.count() == 10
    assert rows.first.locator("td").nth(2).inner_text() == "search_files"
    page.locator("#search").press_sequentially("read_f")  # typed key by key, as a user would
    page.wait_for_function("document.querySelectorAll('#tools tbody tr:not([hidden])').length === 2")
    assert page.locator("#count").inner_text() == "2 of 10 tools shown"
    page.locator("#search").fill("tickets search")  # every word must match: server and name
    page.wait_for_function("document.querySelectorAll('#tools tbody tr:not([hidden])').length === 1")
    page.locator("#search").fill("workspace index")  # the description is searchable too
    page.wait_for_function("document.querySelectorAll('#tools tbody tr:not([hidden])').length === 1")
    page.locator("#search").fill("")
    page.wait_for_function("document.querySelectorAll('#tools tbody tr:not([hidden])').length === 10")
    cells.filter(has_text="tickets").click()  # a treemap cell filters to its server
    page.wait_for_function("document.querySelectorAll('#tools tbody tr:not([hidden])').length === 4")
    assert page.locator("#server-filter").inner_text() == "server: tickets ×"
    page.locator("#server-filter").click()
    page.wait_for_function("document.querySelectorAll('#tools tbody tr:not([hidden])').length === 10")
    watch.check()
    page.close()


def test_treemap_click_is_the_exact_server_and_definitions_open_on_demand(browser: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 17 items 9 and 11: a server whose name holds another's is not caught by its click, and each tool's
    description and schema are in the page, folded until asked for."""
    a = write_json(tmp_path / "a.json", {"tools": [tool("read", "Read one file from the workspace"), tool("write")]})
    b = write_json(tmp_path / "b.json", {"tools": [tool("archive_read"), tool("archive_list"), tool("archive_purge")]})
    path = _report(tmp_path, capsys, "--input", f"files={a}", "--input", f"files-archive={b}")
    page = browser.new_page()
    watch = Watch(page, path.as_uri())
    page.goto(path.as_uri(), wait_until="load")
    page.locator("#treemap .cell[data-server='files']").click()
    page.wait_for_function("document.querySelectorAll('#tools tbody tr:not([hidden])').length === 2")
    shown = page.locator("#tools tbody tr:not([hidden]) td:nth-child(2)").all_inner_texts()
    assert shown == ["files", "files"], shown
    page.locator("#search").fill("read")  # the text filter still narrows within the server
    page.wait_for_function("document.querySelectorAll('#tools tbody tr:not([hidden])').length === 1")
    row = page.locator("#tools tbody tr:not([hidden])")
    assert not row.locator("details pre").is_visible(), "folded until asked for"
    row.locator("details summary").click()
    assert row.locator("details p.desc").inner_text() == "Read one file from the workspace"
    assert json.loads(row.locator("details pre").inner_text()) == tool("read")["inputSchema"]
    watch.check()
    page.close()


def test_hostile_input_stays_text(browser: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _report(tmp_path, capsys, "--input", str(FIXTURES / "xss.json"))
    html = path.read_text(encoding="utf-8")
    assert html.count("<script>") == 1 and html.count("</script>") == 1  # only our own script element
    assert "<img" not in html and "<iframe" not in html and "<link" not in html and "<svg" not in html
    assert "<a " not in html and "&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;" in html
    page = browser.new_page()
    watch = Watch(page, path.as_uri())
    page.goto(path.as_uri(), wait_until="load")
    assert page.locator("script").count() == 1
    assert page.locator("img, iframe, svg, a, link[rel=stylesheet]").count() == 0
    texts = page.locator("#tools tbody td:nth-child(2)").all_inner_texts()
    assert "</script><script>alert(1)</script>" in texts  # shown literally, as text
    assert page.locator("#tools tbody td:nth-child(3)").all_inner_texts()[0] == '<img src=x onerror="alert(2)">'
    page.locator("#search").fill("<img")
    page.wait_for_function("document.querySelectorAll('#tools tbody tr:not([hidden])').length === 1")
    page.locator("#treemap .cell").first.click()
    watch.check()
    assert page.evaluate("typeof window.alert") == "function"
    page.close()
