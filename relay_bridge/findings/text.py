"""Findings as short text: the saving in words and one line per finding (`wmcp-top diagnose`, the dashboard)."""

from __future__ import annotations

from relay_bridge.core.units import fmt_bytes, fmt_count, fmt_duration
from relay_bridge.findings.model import Finding, Saving


def saving_text(s: Saving) -> str:
    """`~21K tok (10.6K/call x 2)`, `~780 tok/conversation`, `1.4s/round trip`, `0.6s`, or `-`."""
    if s.tokens > 0:
        if s.scope == "calls" and s.perCall is not None and s.calls is not None:
            return f"~{fmt_count(s.tokens)} tok ({fmt_count(s.perCall)}/call x {s.calls})"
        return f"~{fmt_count(s.tokens)} tok/conversation"
    if s.ms:
        return f"{fmt_duration(s.ms)}/round trip" if s.msPer == "roundTrip" else fmt_duration(s.ms)
    if s.bytes:
        return fmt_bytes(s.bytes)
    return "-"


def short_saving(s: Saving) -> str:
    """The saving in one word, for narrow columns: `~21K tok`, `1.4s/trip`, `-`."""
    if s.tokens > 0:
        return f"~{fmt_count(s.tokens)} tok"
    if s.ms:
        return f"{fmt_duration(s.ms)}/trip" if s.msPer == "roundTrip" else fmt_duration(s.ms)
    return fmt_bytes(s.bytes) if s.bytes else "-"


def subject(f: Finding) -> str:
    """Who the finding is about: its tools, or the session as a whole. Page text: make it inert before showing."""
    return " + ".join(f.tools) if f.tools else "(session)"


def evidence_text(f: Finding) -> str:
    return ", ".join(f"{k} {v:g}" if isinstance(v, float) else f"{k} {v}" for k, v in f.evidence.items())
