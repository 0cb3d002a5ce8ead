"""The views' footer (tui.widgets.keys_footer) on its own: it lays its keys out again only when what it shows
changed, judged when the layout would run, not when it was asked for. A key that went and came back while the
view was hidden, judged when it went, laid the same keys out again as the view was first shown (a loaded machine);
a key that went is gone when the view is shown."""

from __future__ import annotations

from typing import Any

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Static
from textual.widgets._footer import FooterKey

from tui.widgets.keys_footer import SteadyFooter

from .helpers import footers_current, until


class View(Screen[None]):
    BINDINGS = [Binding("x", "act", "Act"), Binding("escape", "app.pop_screen", "Back")]
    shown = True

    def compose(self) -> ComposeResult:
        yield Static("view")
        yield SteadyFooter()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return self.shown if action == "act" else True

    def action_act(self) -> None:
        pass


class Host(App[None]):
    def on_mount(self) -> None:
        self.install_screen(View(), "view")


def keys_of(screen: Screen) -> list[FooterKey]:
    return list(screen.query_one(SteadyFooter).query(FooterKey))


async def hidden_view(pilot: Any, app: App) -> tuple[View, list[FooterKey]]:
    """The view shown until its keys are laid out, then hidden again; and those keys."""
    await app.push_screen("view")
    view = app.get_screen("view", View)
    await until(pilot, lambda: [k.key for k in keys_of(view)][:2] == ["x", "escape"], what="the view's keys")
    laid = keys_of(view)
    app.pop_screen()
    await until(pilot, lambda: app.screen is not view, what="the view hidden")
    return view, laid


async def test_a_key_that_flickered_while_the_view_was_hidden_lays_nothing_out_again() -> None:
    app = Host()
    async with app.run_test(size=(100, 10)) as pilot:
        view, laid = await hidden_view(pilot, app)
        footer = view.query_one(SteadyFooter)
        view.shown = False  # hidden, a key goes and comes back
        footer.bindings_changed(view)
        view.shown = True
        footer.bindings_changed(view)
        await app.push_screen("view")
        await until(pilot, lambda: app.screen is view and footers_current(app), what="the view shown with its keys")  # type: ignore[arg-type]  # any app's footers
        for _ in range(2):  # what must not happen: a layout queued while hidden runs within two turns of the loop
            await pilot.pause()
        assert keys_of(view) == laid, "the same keys laid out again"


async def test_a_key_that_went_while_the_view_was_hidden_is_gone_when_it_is_shown() -> None:
    app = Host()
    async with app.run_test(size=(100, 10)) as pilot:
        view, _ = await hidden_view(pilot, app)
        view.shown = False
        view.query_one(SteadyFooter).bindings_changed(view)
        await app.push_screen("view")
        await until(pilot, lambda: [k.key for k in keys_of(view)][:1] == ["escape"], what="the key gone")
