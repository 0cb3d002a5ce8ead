"""The lines a user pastes: a script tag, a DevTools-console import(), and a bookmarklet.

None of their URLs names the token (a script URL shows in every stack through the agent's wrapper, in resource
timing and in error reports): the tag hands it over in a `data-wmcp` attribute the agent reads once and
removes, the bookmarklet's script element the same way, and the import() line in `start(token)`. Each URL carries the script's content hash
(`?v=`), so the browser keeps it until the agent changes.
"""

from __future__ import annotations

from dataclasses import dataclass

from relay_bridge.relay.assets import served

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
    def relay_address(self) -> str:
        """The agent's uplink as baked into the served script: no token (it is handed over apart)."""
        return f"ws://{self.host}:{self.port}/relay"

    @property
    def ws_url(self) -> str:
        """The uplink with the token in its query, for clients outside any page (the open lane's Python end)."""
        return f"{self.relay_address}?t={self.token}"

    def _url(self, path: str) -> str:
        script = served(path, self.relay_address)
        return f"{self.base}{path}" + (f"?v={script.digest}" if script is not None else "")

    @property
    def script_url(self) -> str:
        return self._url("/agent.js")

    @property
    def module_url(self) -> str:
        return self._url("/agent.mjs")

    @property
    def script_tag(self) -> str:
        return f'<script src="{self.script_url}" data-wmcp="{self.token}"></script>'

    @property
    def console_line(self) -> str:
        return f'import("{self.module_url}").then(m=>m.start("{self.token}"))'

    @property
    def bookmarklet(self) -> str:
        return (
            "javascript:(()=>{const s=document.createElement('script');"
            f"s.src='{self.script_url}';s.setAttribute('data-wmcp','{self.token}');document.head.appendChild(s)}})()"
        )

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
