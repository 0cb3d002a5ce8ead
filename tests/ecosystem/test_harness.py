"""The harness's one allowance for Chromium 156: a frame whose native host never answers getTools() is opened
again, once (harness.open_stack). A host silenced by the page itself stands in for Chromium's."""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser, Page

from tests.ecosystem import harness
from tests.ecosystem.harness import HostSilent, Server, open_stack

# Every registry the frame gets (@mcp-b/global installs its own after load) stops answering getTools().
SILENCE = """(() => {
  const silence = () => {
    const mc = document.modelContext
    if (mc && !mc.__silenced) {
      try { Object.defineProperty(mc, "getTools", { value: () => new Promise(() => {}), configurable: true }); mc.__silenced = true } catch {}
    }
  }
  silence()
  setInterval(silence, 5)
})()"""


def test_a_host_silent_once_is_opened_again(
    hosts: dict[str, Browser], eco_server: Server, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(harness, "HOST_SILENT_MS", 300)
    pages: list[Page] = []

    def before(page: Page) -> None:
        pages.append(page)
        if len(pages) == 1:
            page.add_init_script(SILENCE)

    o = open_stack(hosts["native"], eco_server, "global", "document-start", before=before)
    assert len(pages) == 2 and pages[0].is_closed() and o.page is pages[1]
    assert "never answered getTools()" in capsys.readouterr().out
    o.page.context.close()


def test_a_host_silent_twice_fails(hosts: dict[str, Browser], eco_server: Server, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(harness, "HOST_SILENT_MS", 300)
    pages: list[Page] = []

    def before(page: Page) -> None:
        pages.append(page)
        page.add_init_script(SILENCE)

    with pytest.raises(HostSilent, match="never answered getTools"):
        open_stack(hosts["native"], eco_server, "global", "document-start", before=before)
    assert len(pages) == 2
