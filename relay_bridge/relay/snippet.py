"""The lines a user pastes: a script tag, a DevTools-console import(), and a bookmarklet."""

from __future__ import annotations

from dataclasses import dataclass

# Where the relay listens unless told otherwise: what every pasted line, the extension's pairing link and the
# commands' --port default name.
DEFAULT_PORT = 7420
LOOPBACK = "127.0.0.1"
# The console line and the bookmarklet run after the page's scripts: the tools it registered at load are then
# only counted (no time, no bytes), so on a page that registers everything at load they measure nothing.
LATE_ROUTES = "Late, into a page already loaded: only tools registered after it are measured (earlier ones are only counted)"


@dataclass(frozen=True, slots=True)
class Snippet:
    host: str
    port: int
    token: str

    @property
    def base(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def script_url(self) -> str:
        return f"{self.base}/agent.js?t={self.token}"

    @property
    def module_url(self) -> str:
        return f"{self.base}/agent.mjs?t={self.token}"

    @property
    def ws_url(self) -> str:
        return f"ws://{self.host}:{self.port}/relay?t={self.token}"

    @property
    def script_tag(self) -> str:
        return f'<script src="{self.script_url}"></script>'

    @property
    def console_line(self) -> str:
        return f'import("{self.module_url}")'

    @property
    def bookmarklet(self) -> str:
        return f"javascript:(()=>{{const s=document.createElement('script');s.src='{self.script_url}';document.head.appendChild(s)}})()"

    def text(self) -> str:
        return "\n".join(
            [
                "Paste the script tag first in the <head> of the page you want to watch (before its tools are registered):",
                f"  script tag:       {self.script_tag}",
                LATE_ROUTES + ":",
                f"  DevTools console: {self.console_line}",
                f"  bookmarklet:      {self.bookmarklet}",
            ]
        )
