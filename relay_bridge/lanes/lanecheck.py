"""Both lanes agree: the page agent's spans against the DevTools Protocol lane's for the same page.

Pure: two lists of spans in, the calls where the lanes differ out. Each lane's calls are put in time order
(`timeOrigin + invokedAt`, across the documents of a tab) and paired per tool in that order. A pair differs when
their outcomes differ (`ok`: the agent got an answer, `error`: the call failed or was refused or cancelled,
`navigated`: a form's submission left the document) or, both `ok`, their resultBytes differ. A call on one side
only is `missing`. inputBytes are not compared: the agent counts a form's values as filled (defaults included),
the DevTools lane the JSON the model wrote. Nor are the bytes of a string result the DevTools lane received
parsed (JSON text returned as a string arrives as the value, its whitespace gone: the lane's documented limit,
docs/limits.md): such a pair is `reserialised`, labelled, and not a difference (`differing` leaves it out).

Used by `wmcp-top open URL --check-lanes` and by the tests as the referee.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from relay_bridge.core import protocol as p
from relay_bridge.core.inert import inert_str
from relay_bridge.core.store import Session


@dataclass(frozen=True, slots=True)
class LaneCall:
    tool: str
    at: float  # epoch ms
    outcome: str  # ok | error | navigated
    resultBytes: int
    seq: int
    session: str
    resultType: str | None = None


@dataclass(frozen=True, slots=True)
class Difference:
    tool: str
    index: int  # the n-th call of this tool, from 0
    kind: str  # missing-in-agent | missing-in-cdp | outcome | bytes | reserialised (not comparable)
    agent: LaneCall | None
    cdp: LaneCall | None

    def line(self) -> str:
        a, c = self.agent, self.cdp
        tool = inert_str(self.tool, 128)  # a page's name: never a line of its own, nothing hidden
        if self.kind == "missing-in-agent" and c is not None:
            return f"{tool} call #{self.index}: only the DevTools lane saw it ({c.outcome}, {c.resultBytes} B)"
        if self.kind == "missing-in-cdp" and a is not None:
            return f"{tool} call #{self.index}: only the page agent saw it ({a.outcome}, {a.resultBytes} B)"
        if self.kind == "reserialised" and a is not None and c is not None:
            return (
                f"{tool} call #{self.index}: {a.resultBytes} B (agent) vs {c.resultBytes} B (DevTools), not comparable: the page "
                f"returned JSON text as a string, which the DevTools lane receives parsed (its whitespace gone)"
            )
        if self.kind == "outcome" and a is not None and c is not None:
            return f"{tool} call #{self.index}: outcome {a.outcome} (agent) vs {c.outcome} (DevTools)"
        if a is not None and c is not None:
            return f"{tool} call #{self.index}: {a.resultBytes} B left the page (agent) vs {c.resultBytes} B handed to the DevTools client"
        return f"{tool} call #{self.index}: {self.kind}"


def outcome_of(span: p.Span) -> str:
    if span.outcome == "navigated":
        return "navigated"
    return "error" if span.resultType == "error" else "ok"


def lane_calls(spans: Iterable[tuple[float, p.Span]]) -> list[LaneCall]:
    """(timeOrigin of its session, span) pairs -> calls in time order."""
    calls = [LaneCall(s.tool, origin + s.invokedAt, outcome_of(s), s.resultBytes, s.seq, s.sessionId, s.resultType) for origin, s in spans]
    calls.sort(key=lambda c: c.at)
    return calls


def compare(agent: list[LaneCall], cdp: list[LaneCall]) -> list[Difference]:
    by_tool: dict[str, tuple[list[LaneCall], list[LaneCall]]] = defaultdict(lambda: ([], []))
    for call in agent:
        by_tool[call.tool][0].append(call)
    for call in cdp:
        by_tool[call.tool][1].append(call)
    out: list[Difference] = []
    for tool in sorted(by_tool):
        mine, theirs = by_tool[tool]
        for i in range(max(len(mine), len(theirs))):
            a = mine[i] if i < len(mine) else None
            c = theirs[i] if i < len(theirs) else None
            if a is None:
                out.append(Difference(tool, i, "missing-in-agent", None, c))
            elif c is None:
                out.append(Difference(tool, i, "missing-in-cdp", a, None))
            elif a.outcome != c.outcome:
                out.append(Difference(tool, i, "outcome", a, c))
            elif a.outcome == "ok" and a.resultBytes != c.resultBytes:
                parsed = a.resultType == "string" and c.resultType not in (None, "string")
                out.append(Difference(tool, i, "reserialised" if parsed else "bytes", a, c))
    return out


def differing(differences: list[Difference]) -> list[Difference]:
    """The differences that are differences: not the pairs whose bytes the DevTools lane cannot measure."""
    return [d for d in differences if d.kind != "reserialised"]


def store_calls(sessions: Iterable[Session], *, cdp: bool) -> list[LaneCall]:
    """The calls of a store's sessions of one lane (`cdp`: the sessions whose agent is `cdp/...`)."""
    pairs: list[tuple[float, p.Span]] = []
    for session in sessions:
        agent = str(getattr(session, "agent", ""))
        if agent.startswith("cdp/") != cdp:
            continue
        origin = float(session.info.timeOrigin)
        pairs.extend((origin, span) for span in session.spans())
    return lane_calls(pairs)


# The page agent's status names a call path it cannot see with this phrase (page_agent/src/page/
# transport_observer.js): MCP tools/call whose responses go to a cross-origin parent, or that reach a tool
# function over a transport it does not watch. The DevTools lane never sees those either (they are not the
# browser's WebMCP), so agreement on the rest says nothing about them.
BLIND_MARK = "out of the agent's sight"


def blind_paths(sessions: Iterable[object]) -> list[str]:
    """The call paths the page agent's sessions say no lane sees (their status reasons), once each."""
    out: list[str] = []
    for session in sessions:
        if str(getattr(session, "agent", "")).startswith("cdp/"):
            continue
        status = getattr(session, "status", None)
        for reason in getattr(status, "reasons", None) or []:
            if BLIND_MARK in reason and reason not in out:
                out.append(str(reason))
    return out


def summary(agent: list[LaneCall], cdp: list[LaneCall], differences: list[Difference], blind: list[str] | None = None) -> str:
    apart = len(differences) - len(differing(differences))
    differences = differing(differences)
    if differences:
        verdict = f"{len(differences)} difference(s)"
    elif blind:
        verdict = f"the lanes agree on what they see, but neither lane sees {len(blind)} path(s)"
    else:
        verdict = "the lanes agree"
    if apart:
        verdict += f" ({apart} string result(s) not comparable by bytes: the DevTools lane re-serialises JSON text)"
    return f"check-lanes: page agent {len(agent)} call(s), DevTools lane {len(cdp)} call(s): {verdict}"
