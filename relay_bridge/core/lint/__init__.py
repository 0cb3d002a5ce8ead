"""The descriptor lint: one rule set over a tool definition, pure (no I/O), read by footprint, the `w` and `f`
views and `wmcp-top diagnose`. `lint_descriptor(tool)` returns `Hit`s (rule, JSON pointer, our reason); `RULES`
names every rule once with its severity and source (docs/diagnosis.md lists them); `redefinition` is what the
store uses to see a tool's definition change after its first registration (the rug pull).
"""

from relay_bridge.core.lint.rules import RULES, SEVERITIES, Hit, Rule, lint_descriptor

__all__ = ["RULES", "SEVERITIES", "Hit", "Rule", "lint_descriptor"]
