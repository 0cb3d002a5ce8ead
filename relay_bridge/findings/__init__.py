"""Diagnosis (issue 35): what to fix first, with the saving each fix would bring, from the numbers wmcp-top records.

Pure logic: a session's numbers and the page's facts in (relay_bridge.findings.inputs), ranked findings out
(relay_bridge.findings.model). One module per family of rules, each with its formula and assumptions in its
docstring: images, bloat, schema, timing, errors, repeats. docs/diagnosis.md says the same for users.
"""

from relay_bridge.findings.engine import diagnose, total_tokens
from relay_bridge.findings.inputs import SessionInput, SpanInput, ToolInput, facts_of, from_session
from relay_bridge.findings.model import Finding, Saving, ranked

__all__ = ["Finding", "Saving", "SessionInput", "SpanInput", "ToolInput", "diagnose", "facts_of", "from_session", "ranked", "total_tokens"]
