"""How many examples the property tests draw. The check draws a quarter of a deep run's on each test (hypothesis
draws new ones every run, so the check's runs add up); `WMCP_FUZZ=deep` draws them all, minutes on this machine,
for a change to a parser, a lint rule's needles or the wire decoder (CONTRIBUTING.md)."""

from __future__ import annotations

import os

DEEP = os.environ.get("WMCP_FUZZ") == "deep"


def examples(deep: int) -> int:
    """The examples a test draws: `deep` in a deep run, a quarter of it otherwise."""
    return deep if DEEP else max(100, deep // 4)
