"""Limits and matching constants of a catalog analysis (footprint's, and the findings' duplicate search), in one
place so the CLI, the report and the README cannot disagree.

They follow mcp-footprint (seed 003): an invocation is bounded so a hostile or accidental input cannot make the
analysis slow or the report unreadable. Each limit is inclusive: a value at the limit passes, one over is refused.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Limits:
    input_bytes: int = 16 * 1024 * 1024  # summed over every input file of one invocation
    servers: int = 200
    tools: int = 2000  # summed over every server
    nesting: int = 64  # containers on the deepest path of one input document; `{}` is 1
    similarity_budget: int = 2_000_000  # word-membership operations for the description scan
    pairs_kept: int = 5000
    min_words: int = 6  # unique words a description needs to enter similarity matching
    max_words: int = 128
    jaccard: float = 0.8

    def as_json(self) -> dict[str, int | float]:
        return {
            "inputBytes": self.input_bytes,
            "servers": self.servers,
            "tools": self.tools,
            "nesting": self.nesting,
            "similarityBudget": self.similarity_budget,
            "pairsKept": self.pairs_kept,
            "minWords": self.min_words,
            "maxWords": self.max_words,
            "jaccard": self.jaccard,
        }


LIMITS = Limits()
