"""The findings view's worker process: `python -m relay_bridge.findings.worker`, started by the dashboard.

Reviewing a flood's definitions is seconds of pure Python; in a thread of the dashboard it would hold the GIL that
the relay's loop needs for every ack, key and frame, so it runs here, at a lower priority than the dashboard.
Requests and replies are length-prefixed pickles on stdin and stdout, one at a time: (kind, *arguments) in,
(True, result) or (False, why) out. `handle` is the work itself (pure: relay_bridge.findings.definitions and
schema.analyse), which the dashboard also runs in-process when this process cannot serve. Ends when stdin closes.
"""

from __future__ import annotations

import os
import pickle
import sys
from typing import Any, BinaryIO

from relay_bridge.findings import definitions, schema
from relay_bridge.findings.inputs import SessionInput, ToolInput

NICE = 10  # the dashboard and the relay always come first
HEADER = 4  # bytes of a frame's length, big-endian


def handle(request: tuple[Any, ...]) -> Any:
    kind, *args = request
    if kind == "review":
        return definitions.review_all(args[0])
    if kind == "catalog":
        return schema.analyse(tools_in(args[0]), args[1])
    raise ValueError(f"unknown request {kind!r}")


# The cross-tool analysis's input as plain values (pickled at C speed: ToolInput structs took 20 us each):
# origin -> [(session id, [(tool name, descriptor text)])]. The analysis reads no more of a tool or a session.
Plain = dict[str, list[tuple[str, list[tuple[str, bytes | None]]]]]


def plain(entered: schema.Entering) -> Plain:
    return {o: [(s.id, [(t.name, t.raw) for t in tools]) for s, tools in group] for o, group in entered.items()}


def tools_in(entered: Plain) -> schema.Entering:
    return {
        o: [(SessionInput(sid, o, (), ()), [ToolInput(name, 0, 0, 0, True, raw=raw) for name, raw in tools]) for sid, tools in group]
        for o, group in entered.items()
    }


def frame(value: Any) -> bytes:
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    return len(data).to_bytes(HEADER, "big") + data


def unframe(body: bytes) -> Any:
    return pickle.loads(body)


def _read(stream: BinaryIO, n: int) -> bytes | None:
    data = stream.read(n)
    return data if len(data) == n else None


def serve(inp: BinaryIO, out: BinaryIO) -> None:
    while (head := _read(inp, HEADER)) is not None:
        body = _read(inp, int.from_bytes(head, "big"))
        if body is None:
            return
        try:
            reply: tuple[bool, Any] = (True, handle(unframe(body)))
        except Exception as e:  # the dashboard works it out in-process instead
            reply = (False, f"{type(e).__name__}: {e}")
        out.write(frame(reply))
        out.flush()


def main() -> None:
    try:
        os.nice(NICE)
    except OSError:
        pass  # not allowed here: the same work at the same priority
    serve(sys.stdin.buffer, sys.stdout.buffer)


if __name__ == "__main__":
    main()
