"""The app's state colours (ok / slow / error / in flight / muted), read from the active theme's variables.

With NO_COLOR set, Textual renders monochrome; these styles then fall back to weight (bold / dim / reverse) so
state is still told apart.
"""

from __future__ import annotations

from dataclasses import dataclass

SLOW_MS = 100.0  # a call at or above this wall time is shown as slow


@dataclass(frozen=True)
class Palette:
    ok: str = "#7EC699"
    slow: str = "#E5C07B"
    error: str = "#E06C75"
    inflight: str = "#56B6C2"
    muted: str = "#7F8794"
    no_color: bool = False

    @classmethod
    def from_variables(cls, variables: dict[str, str], no_color: bool = False) -> Palette:
        d = cls()
        return cls(
            ok=variables.get("wmcp-ok", d.ok),
            slow=variables.get("wmcp-slow", d.slow),
            error=variables.get("wmcp-error", d.error),
            inflight=variables.get("wmcp-inflight", d.inflight),
            muted=variables.get("wmcp-muted", d.muted),
            no_color=no_color,
        )

    def style(self, kind: str) -> str:
        if self.no_color:
            return {"error": "bold reverse", "slow": "bold", "muted": "dim", "inflight": "italic"}.get(kind, "")
        return {"ok": self.ok, "slow": self.slow, "error": f"bold {self.error}", "inflight": self.inflight, "muted": self.muted}.get(kind, "")

    def for_ms(self, ms: float | None) -> str:
        if ms is None:
            return self.style("muted")
        return self.style("slow") if ms >= SLOW_MS else self.style("ok")
