"""The lines a user pastes: a script tag, a DevTools-console import(), and a bookmarklet."""

from __future__ import annotations

from dataclasses import dataclass

# Where the relay listens unless told otherwise: what every pasted line, the extension's pairing link and the
# commands' --port default name.
DEFAULT_PORT = 7420
LOOPBACK = "127.0.0.1"


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
                "Paste one of these into the page you want to watch:",
                f"  script tag:       {self.script_tag}",
                f"  DevTools console: {self.console_line}",
                f"  bookmarklet:      {self.bookmarklet}",
            ]
        )
