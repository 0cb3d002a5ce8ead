"""Keys before page frames (relay_bridge/relay/hold.py): a key the input thread told the app of holds the
relay's frames, and the findings' diagnosis between its slices, until the repaint that shows the key's action; a
key bound to nothing holds them no longer than the hold's own time."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import Any

import pytest

from relay_bridge.core import synth
from tests.frames import frame
from tests.liveness import LIVENESS_S
from tui.app import WmcpTopApp
from tui.model import diagnosis
from tui.model.diagnosis import diagnosis_of

from .helpers import cell, live_app, open_page, until


def _held(app: WmcpTopApp) -> bool:
    assert app.relay is not None
    return app.relay.frames.held


async def test_a_bound_key_releases_the_frames_once_its_answer_is_painted(tmp_path: Path) -> None:
    app = live_app(tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        page = await open_page(app)
        await until(pilot, lambda: cell(app, "search", "calls") is not None, what="the session's table")
        assert app.relay is not None
        app.input_arrived()
        assert _held(app)
        app.relay.frames.hold(60)  # as the input thread's hold, but long: only the answer can end it here
        await pilot.press("s")  # sort: a binding, so an action
        await until(pilot, lambda: not _held(app), timeout=LIVENESS_S, what="the release after the sort's repaint")
        await page.close()


async def test_frames_held_by_an_unbound_key_go_on_after_the_hold_time(tmp_path: Path) -> None:
    app = live_app(tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        app.input_arrived()
        assert _held(app) and app.quiet_hold.held
        await pilot.press("ctrl+y")  # bound to nothing: no action says it was answered
        await until(pilot, lambda: not _held(app) and not app.quiet_hold.held, timeout=LIVENESS_S, what="the holds running out")


async def test_a_key_holds_the_findings_diagnosis_until_its_answer_is_painted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A large diagnosis, under way in its worker process, asks for nothing more while a key waits for its answer
    (`input_quiet`): under the flood of issue 48 on a loaded machine, a press of `f` met during the first pass
    shared the process and its cores with the pass. The key's answer painted, the pass goes on to its end."""
    monkeypatch.setattr(diagnosis, "CHUNK", 32)  # many requests
    asked: list[bool] = []  # a request to the worker process: was a key held then
    waited: list[int] = []
    first = asyncio.Event()  # the pass's first request waits for the key to have arrived
    real_ask, real_quiet = diagnosis.Offload.__call__, WmcpTopApp.input_quiet

    async def ask(self: diagnosis.Offload, request: tuple[Any, ...]) -> Any:
        asked.append(app.quiet_hold.held)
        await first.wait()
        return await real_ask(self, request)

    async def quiet(self: WmcpTopApp) -> None:
        if self.quiet_hold.held:
            waited.append(len(asked))
        await real_quiet(self)

    monkeypatch.setattr(diagnosis.Offload, "__call__", ask)
    monkeypatch.setattr(WmcpTopApp, "input_quiet", quiet)
    app = live_app(tmp_path)
    async with app.run_test(size=(160, 45)) as pilot:
        tag = uuid.uuid4().hex  # definitions no earlier test reviewed (the content caches live as long as the process)
        for n in range(2):
            sid = f"{0x9E1D0000 + n:08x}"
            app.store.connect(1000 + n, "https://a.example")
            app.store.apply(1000 + n, frame(synth.hello(sid, "https://a.example")))
            for i in range(300):
                app.store.apply(1000 + n, frame(synth.tool(sid, f"t{i:03d}", 1.0, description=f"list the orders {n} {i} {tag}")))
        await pilot.press("f")
        await until(pilot, lambda: bool(asked), timeout=60, what="the pass's first request")
        idle = diagnosis_of(app).idle  # the full collection after a flood waits for the keys to be quiet
        assert idle is not None and idle() > 60  # no key yet
        app.input_arrived()
        assert idle() < 60
        app.quiet_hold.hold(60)  # as the input thread's hold, but long: only the answer can end it here
        first.set()
        await until(pilot, lambda: bool(waited), timeout=60, what="the pass waiting at its next slice")
        await pilot.press("escape")  # a binding: its answer painted ends the hold
        await until(pilot, lambda: not app.quiet_hold.held, timeout=LIVENESS_S, what="the release after escape's repaint")
        await until(pilot, lambda: not diagnosis_of(app).pending, timeout=180, what="the pass's end")
        assert len(asked) > 2 and not any(asked), "a request went to the worker process while the key waited"
