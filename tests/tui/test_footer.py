"""The views' footer (tui.widgets.keys_footer) on its own: it lays its keys out again only when what it shows
changed, judged when the layout would run, not when it was asked for. A key that went and came back while the
view was hidden, judged when it went, laid the same keys out again as the view was first shown (a loaded machine);
a key that went is gone when the view is shown."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Static
from textual.widgets._footer import FooterKey

from tui.widgets.keys_footer import SteadyFooter


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


async def settle(pilot, app: App, until) -> None:
    for _ in range(1000):
        if until():
            return
        await pilot.pause()
    raise AssertionError("not met")


async def test_a_key_that_flickered_while_the_view_was_hidden_lays_nothing_out_again() -> None:
    app = Host()
    async with app.run_test(size=(100, 10)) as pilot:
        await app.push_screen("view")
        view = app.get_screen("view", View)
        await settle(pilot, app, lambda: [k.key for k in keys_of(view)][:2] == ["x", "escape"])
        laid = keys_of(view)
        app.pop_screen()
        await settle(pilot, app, lambda: app.screen is not view)
        footer = view.query_one(SteadyFooter)
        view.shown = False  # hidden, a key goes and comes back
        footer.bindings_changed(view)
        view.shown = True
        footer.bindings_changed(view)
        await app.push_screen("view")
        await settle(pilot, app, lambda: app.screen is view)
        await pilot.pause()
        await pilot.pause()
        assert keys_of(view) == laid, "the same keys laid out again"


async def test_a_key_that_went_while_the_view_was_hidden_is_gone_when_it_is_shown() -> None:
    app = Host()
    async with app.run_test(size=(100, 10)) as pilot:
        await app.push_screen("view")
        view = app.get_screen("view", View)
        await settle(pilot, app, lambda: [k.key for k in keys_of(view)][:2] == ["x", "escape"])
        app.pop_screen()
        await settle(pilot, app, lambda: app.screen is not view)
        view.shown = False
        view.query_one(SteadyFooter).bindings_changed(view)
        await app.push_screen("view")
        await settle(pilot, app, lambda: [k.key for k in keys_of(view)][:1] == ["escape"])
