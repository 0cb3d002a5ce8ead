"""What the findings view has worked out, kept by the app across the view's openings, and the work of keeping it
current off the screen's path.

Where the time went under the flood of issue 48 (4 origins x 15 sessions x 1,024 distinct definitions, measured
in-process): 9 s of pure Python to review the definitions (their weights, 1.2 s, and the security review, 7 s),
done again at every refresh because the review's 4,096-entry cache was smaller than the flood, and done in a
worker thread, which holds the GIL the relay's loop needs for every ack, key and paint; a view left while it ran
lost its result, so every press of `f` started another such thread. Now:

- a session costs one signature (relay_bridge.findings.inputs.signature) unless its inputs moved; a definition is
  reviewed once by content, wherever it is registered (relay_bridge.findings.definitions, caches that hold every
  live session's tools);
- what is new to review goes to a worker process (relay_bridge.findings.worker, lower priority), CHUNK definitions
  a request, and the results fill the content caches; the rules then run on the loop a session a turn at the cost
  of lookups (a few ms for 1,024 tools). The cross-tool analysis (bounded by footprint's limits) runs there too;
- origins are served smallest first (what each still has to review), so one origin's flood never delays another
  page's findings; sessions are kept as they are done, the view shown meanwhile with what is known;
- the work belongs to the app, not to the view: leaving the view does not stop or repeat it;
- a pass that took in a flood (SETTLED_AFTER new definitions) freezes what lives between its slices from then on
  (the app's `on_grown`), so the cycle collector's full collections no longer walk what the pass keeps, and once
  no key came for SETTLE_QUIET seconds the app's `on_settled` collects the whole heap and freezes it again;
- a key waiting for its answer on screen comes first: every slice of a pass, every request to the worker process
  and the `on_settled` call wait for the app's `input_quiet` (tui/app.py), so a press of `f` or escape during a
  pass waits for none of the pass's slices, and its worker asks for no core meanwhile after the request under way.
Small inputs (at most INLINE_TOOLS tools in all) are diagnosed at once, on the loop.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
import weakref
from collections.abc import Awaitable, Callable, Coroutine, Iterable
from pathlib import Path
from typing import Any, NamedTuple

from relay_bridge.findings import Finding, SessionInput, diagnose, from_session, ranked
from relay_bridge.findings import worker as work
from relay_bridge.findings.definitions import learn, pending
from relay_bridge.findings.inputs import ToolInput, signature, tools_signature
from relay_bridge.findings.schema import Catalog, Entering, analyse, candidates, entering

# Up to this many tools in all, the rules run at once on the loop (a few ms): the view shows them when it opens.
INLINE_TOOLS = 512
SLICE_TOOLS = 1024  # tools snapshot a turn of the loop (about 5 ms)
CHUNK = 256  # definitions a request to the worker process (about 40 ms of its time)
INLINE_REVIEW = 64  # definitions a session may still need reviewed for the summary line to run its rules at once (a few ms)
SHOW_EVERY = 1.0  # seconds between the view's redraws while a pass fills it in
# After a pass that took in at least this many new definitions (a flood), `settled` is called: the dashboard
# freezes the cycle collector's heap again then (relay_bridge.relay.heap.refreeze), as what the pass keeps is
# long-lived and full collections walking it held the loop 18-42 ms each. From that many on, `grown` is called
# between the pass's slices (relay_bridge.relay.heap.freeze_grown): the full collections the pass's own objects
# set off meanwhile (20-37 ms each, and presses met them) walk none of what it keeps.
SETTLED_AFTER = 8192
SETTLE_QUIET = 2.0  # seconds with no key before `settled` runs (a press a second, as the benchmark's, never meets it)


class Taken(NamedTuple):
    sid: str
    sig: tuple[Any, ...]
    snap: SessionInput
    tools: tuple[Any, ...]  # its registered tools' signature
    tools_moved: bool


Request = tuple[Any, ...]


class Offload:
    """The worker process, started by the first request of a pass and ended with the pass; one request at a time.
    When it cannot start or fails, the request runs in-process in a thread (slower for the loop, never a different
    result)."""

    def __init__(self) -> None:
        self._proc: asyncio.subprocess.Process | None = None
        self._lock: asyncio.Lock | None = None
        self._unreaped: list[asyncio.subprocess.Process] = []  # ended or killed, not yet reaped (`ended` reaps them)
        self._going = False  # the app is going: no process is started again

    async def __call__(self, request: Request) -> Any:
        self._lock = self._lock or asyncio.Lock()
        async with self._lock:
            try:
                ok, value = await self._ask(request)
                if ok:
                    return value
            except (OSError, EOFError, ValueError, asyncio.IncompleteReadError):
                self.close()
            except BaseException:  # cancelled mid-request: the stream is out of step
                self.close()
                raise
        if self._going:
            raise asyncio.CancelledError  # nothing waits for the answer, and a thread would hold up the exit
        return await asyncio.to_thread(work.handle, request)

    async def _ask(self, request: Request) -> tuple[bool, Any]:
        proc = self._proc
        if self._going:
            raise OSError("the app is going")
        if proc is None or proc.returncode is not None:
            root = str(Path(work.__file__).resolve().parents[2])  # where relay_bridge is, installed or not
            env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH", "")) if p))
            proc = self._proc = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "relay_bridge.findings.worker",
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.DEVNULL,
                env=env,
            )
            if self._going:  # it went while the process started: `ended` reaps it
                self.close()
                raise OSError("the app is going")
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(work.frame(request))
        await proc.stdin.drain()
        size = int.from_bytes(await proc.stdout.readexactly(work.HEADER), "big")
        reply: tuple[bool, Any] = work.unframe(await proc.stdout.readexactly(size))
        return reply

    async def aclose(self) -> None:
        """End the process (its stdin closed, it exits): a pass is over. After the request under way, if any."""
        self._lock = self._lock or asyncio.Lock()
        async with self._lock:
            proc, self._proc = self._proc, None
            if proc is None:
                return
            # Known to `ended` until reaped: an exit that cancels this wait reaps it.
            self._unreaped.append(proc)
            if proc.stdin is not None:
                proc.stdin.close()
            try:
                await asyncio.wait_for(proc.wait(), 5.0)
            except TimeoutError:
                proc.kill()
                await proc.wait()
            if proc in self._unreaped:
                self._unreaped.remove(proc)

    def close(self) -> None:
        """Kill the process now (a pass was cancelled: the app is going); `ended` reaps it."""
        proc, self._proc = self._proc, None
        if proc is not None:
            self._unreaped.append(proc)
            if proc.returncode is None:
                try:
                    proc.kill()
                except (ProcessLookupError, RuntimeError):  # already gone, or its loop closed (it ends at stdin's close)
                    pass

    async def ended(self) -> None:
        """Kill the process and reap every killed one while the loop runs, and start none again: a process left to
        the collector after the loop closed printed "Exception ignored ... Event loop is closed" as the app exited
        (a pass the app's worker runner cancelled only after this had run started one more, and a process still
        starting as this ran, on a loaded machine). The request under way ends first: its process is killed here,
        and one that was starting is killed as it starts."""
        self._going = True
        self.close()
        self._lock = self._lock or asyncio.Lock()
        try:
            await asyncio.wait_for(self._lock.acquire(), 5.0)
            self._lock.release()
        except TimeoutError:
            pass
        self.close()
        killed, self._unreaped = self._unreaped, []
        for proc in killed:
            if proc.stdin is not None:
                proc.stdin.close()
            try:
                await asyncio.wait_for(proc.wait(), 5.0)
            except (TimeoutError, RuntimeError):
                pass


class Diagnosis:
    """Per session: its signature, the snapshot taken then, its registered tools' signature and its candidates
    for the cross-tool analysis, its own findings; and the last cross-tool analysis. A session's entries are
    written together, when its findings are worked out."""

    def __init__(
        self,
        offload: Callable[[Request], Awaitable[Any]] | None = None,
        settled: Callable[[], None] | None = None,
        quiet: Callable[[], Awaitable[None]] | None = None,
        grown: Callable[[], None] | None = None,
        idle: Callable[[], float] | None = None,
    ) -> None:
        self.sigs: dict[str, tuple[Any, ...]] = {}
        self.inputs: dict[str, SessionInput] = {}
        self.tool_sigs: dict[str, tuple[Any, ...]] = {}
        self.ordered: dict[str, list[ToolInput]] = {}
        self.own: dict[str, list[Finding]] = {}
        self.catalog: Catalog | None = None
        self.pending = False  # a pass is under way: what is shown is being filled in
        self.offload = offload or Offload()
        self.settled = settled  # called after a pass that took in SETTLED_AFTER definitions or more
        # Awaited between two slices of the work: returns at once unless a key waits for its answer on screen.
        # Timed under the flood on a loaded machine, a press's time went mostly to its threads waiting for a core
        # (docs/limits.md): the pass's slices and its worker's requests were more work for the same cores.
        self.quiet = quiet
        self.grown = grown  # called between the slices of a pass once it took in SETTLED_AFTER definitions
        self.idle = idle  # seconds since the last key (the app's `since_input`): `settled` waits for SETTLE_QUIET
        self._learned = 0  # new definitions the pass under way took in
        self.shown: Callable[[], None] | None = None  # the open view's redraw
        self._task: Any = None  # the pass under way: a task, or the app's worker
        self._again = False
        self._drawn = 0.0
        self._findings: list[Finding] | None = None
        self.version = 0  # moves whenever what the view shows may have
        self._reviewing: Any = None  # the task or worker reviewing definitions for one session's own findings
        self._reviewed: Callable[[], None] | None = None  # told when they are in
        self._settling: asyncio.Future[None] | None = None  # `settled`, waiting for the keys to be quiet

    # What the view shows

    def findings(self) -> list[Finding]:
        """Every session's own findings and the cross-tool ones about sessions still here, ranked."""
        if self._findings is None:
            inputs = self.inputs
            cross = [f for f in self.catalog.findings if all(sid in inputs for sid in f.sessions)] if self.catalog else []
            self._findings = ranked([f for sid in inputs for f in self.own.get(sid, [])] + cross)
        return self._findings

    def _changed(self) -> None:
        self._findings = None
        self.version += 1
        self._show()

    def _show(self, force: bool = False) -> None:
        now = time.monotonic()
        if self.shown is not None and (force or now - self._drawn >= SHOW_EVERY):
            self._drawn = now
            self.shown()

    def own_findings(
        self, session: Any, reviewed: Callable[[], None], spawn: Callable[[Coroutine[Any, Any, None]], Any] | None = None
    ) -> list[Finding] | None:
        """One session's own findings, ranked (its rules; the cross-session ones are the view's), for the
        dashboard's summary line, never reviewing a flood's definitions on the loop: the view's result when it
        worked this session out at the same signature; else the rules at the cost of lookups once the session's
        definitions are reviewed (up to INLINE_REVIEW not yet reviewed: done here, a few ms). More than that go to
        the worker process (through `spawn`, the app's worker runner, or as a task): None meanwhile, and
        `reviewed()` is called when they are in."""
        sig = signature(session)
        if self.sigs.get(session.id) == sig:
            return self.own[session.id]
        snap = from_session(session)
        todo = pending(snap.tools)
        if len(todo) <= INLINE_REVIEW:
            return diagnose([snap], duplicates=False)
        self._reviewed = reviewed  # the latest asker: the line shows one session at a time
        if self._reviewing is None:
            work = self._review(todo)
            self._reviewing = asyncio.ensure_future(work) if spawn is None else spawn(work)
        return None

    async def _review(self, raws: list[bytes]) -> None:
        try:
            for chunk in _chunks(raws, CHUNK):
                await self._turn()
                learn(chunk, await self.offload(("review", chunk)))
            if isinstance(self.offload, Offload) and not self.pending:
                await self.offload.aclose()  # a pass keeps it for its own requests
        except BaseException:
            self.close()
            raise
        finally:
            self._reviewing = None
        if self._reviewed is not None:
            self._reviewed()

    # Keeping it current

    def update(self, sessions: Callable[[], list[Any]], spawn: Callable[[Coroutine[Any, Any, None]], Any] | None = None) -> bool:
        """Work out what moved in `sessions()`. True when done now (small inputs); else a pass runs (through
        `spawn`, the app's worker runner, or as a task) and the view is redrawn as it fills in."""
        if self.pending:
            self._again = True
            return False
        now = sessions()
        if not self._moved(now):
            return True
        if sum(len(s.tools) for s in now) <= INLINE_TOOLS:
            self._inline(now)
            return True
        self.pending = True
        if spawn is not None:
            self._task = spawn(self._run(sessions))
        else:
            self._task = asyncio.ensure_future(self._run(sessions))
        return False

    def _moved(self, sessions: list[Any]) -> bool:
        """Whether a session came, went or moved since it was worked out (a signature each: O(sessions))."""
        return len(sessions) != len(self.sigs) or any(self.sigs.get(s.id) != signature(s) for s in sessions) or self.catalog is None

    def _take(self, s: Any) -> Taken | None:
        """A session's snapshot when its inputs moved since they were last worked out (else None)."""
        sig = signature(s)
        if self.sigs.get(s.id) == sig:
            return None
        tools = tools_signature(s)
        t = Taken(s.id, sig, from_session(s), tools, self.tool_sigs.get(s.id) != tools)
        if t.tools_moved or s.id not in self.ordered:
            self.ordered[s.id] = candidates(t.snap)  # here, a session at a time: sorting them all at once took 110 ms
        return t

    def _forget_gone(self, sessions: list[Any]) -> bool:
        gone = (set(self.inputs) | set(self.ordered)) - {s.id for s in sessions}
        for sid in gone:
            for held in (self.sigs, self.inputs, self.tool_sigs, self.ordered, self.own):
                held.pop(sid, None)
        return bool(gone)

    def _keep(self, t: Taken, own: list[Finding]) -> bool:
        """Whether what the view shows moved: a session whose numbers move with every call (an agent at work) is
        taken again each time, but its findings rarely change, and redrawing a flood's table 4 times a second
        for nothing was the view's largest cost."""
        moved = t.sid not in self.own or self.own[t.sid] != own
        self.sigs[t.sid], self.inputs[t.sid], self.tool_sigs[t.sid], self.own[t.sid] = t.sig, t.snap, t.tools, own
        return moved

    def _recatalog(self, found: Catalog) -> bool:
        moved = self.catalog is None or self.catalog.findings != found.findings
        self.catalog = found
        return moved

    def _entering(self, taken: list[Taken]) -> tuple[Entering, dict[str, int]]:
        everyone = {**self.inputs, **{t.sid: t.snap for t in taken}}
        return entering(list(everyone.values()), ordered=self.ordered)

    def _inline(self, sessions: list[Any]) -> None:
        taken = [t for s in sessions if (t := self._take(s)) is not None]
        moved = self._forget_gone(sessions)
        if moved or any(t.tools_moved for t in taken) or self.catalog is None:
            moved = self._recatalog(analyse(*self._entering(taken))) or moved
        for t in taken:
            moved = self._keep(t, diagnose([t.snap], duplicates=False)) or moved
        if moved:
            self._findings = None
            self.version += 1

    async def _run(self, sessions: Callable[[], list[Any]]) -> None:
        try:
            self._learned = 0
            while True:
                self._again = False
                await self._pass(sessions())
                if not self._again:
                    break
            if isinstance(self.offload, Offload):
                await self.offload.aclose()  # started for a pass that had work to hand off; none left
            settled = self.settled if self._learned >= SETTLED_AFTER else None
            if settled is not None:
                await self._turn()
        except BaseException:
            self.close()
            raise
        finally:
            self.pending = False
            self._show(force=True)
        # `settled` is one full collection of the whole heap (50 to 190 ms of the loop's CPU under the flood,
        # several times that in wall time on a loaded machine): a press or an escape that met it waited for all of
        # it. What the pass kept is frozen already (`grown`); letting go of the garbage frozen with it can wait
        # until no key came for SETTLE_QUIET seconds.
        if settled is not None:
            if self.idle is None or self.idle() >= SETTLE_QUIET:
                settled()
            elif self._settling is None:
                self._settling = asyncio.ensure_future(self._settle(settled))

    async def _settle(self, settled: Callable[[], None]) -> None:
        try:
            while self.idle is not None and (left := SETTLE_QUIET - self.idle()) > 0:
                await asyncio.sleep(left)
                await self._turn()
            settled()
        finally:
            self._settling = None

    async def _pass(self, sessions: list[Any]) -> None:
        taken: list[Taken] = []
        done = 0
        for s in sessions:
            t = self._take(s)
            if t is not None:
                taken.append(t)
                done += len(t.snap.tools)
            if done >= SLICE_TOOLS:
                done = 0
                await self._turn()
        await self._turn()
        gone = self._forget_gone(sessions)
        if gone or any(t.tools_moved for t in taken) or self.catalog is None:
            entered, demand = self._entering(taken)
            big = sum(len(tools) for group in entered.values() for _, tools in group) > INLINE_TOOLS
            if self._recatalog(await self.offload(("catalog", work.plain(entered), demand)) if big else analyse(entered, demand)) or gone:
                self._changed()
        for t in fair_order(taken):
            await self._turn()
            for chunk in _chunks(pending(t.snap.tools), CHUNK):
                learn(chunk, await self.offload(("review", chunk)))
                self._learned += len(chunk)
                await self._turn()  # and no next request: the worker shares the dashboard's cores
            if self._keep(t, diagnose([t.snap], duplicates=False)):  # lookups now: a few ms for 1,024 tools
                self._changed()

    async def _turn(self) -> None:
        """Between two slices: the loop turns, and while a key waits for its answer on screen, the work waits."""
        if self.grown is not None and self._learned >= SETTLED_AFTER and self.pending:
            self.grown()  # `settled` follows at the pass's end
        await asyncio.sleep(0)
        if self.quiet is not None:
            await self.quiet()

    def close(self) -> None:
        """Stop a pass under way and the worker process (the app is going)."""
        for task in (self._task, self._reviewing, self._settling):
            if task is not None:
                task.cancel()
        if isinstance(self.offload, Offload):
            self.offload.close()

    async def aclose(self) -> None:
        """`close`, and the worker process reaped while the loop still runs."""
        self.close()
        if isinstance(self.offload, Offload):
            await self.offload.ended()


def fair_order(taken: Iterable[Taken]) -> list[Taken]:
    """Origins with the least to work out first, and inside one the smallest sessions: a page's few tools are
    diagnosed before another origin's thousands (the work is charged to the origin it is for)."""
    items = list(taken)
    by_origin: dict[str, int] = {}
    for t in items:
        by_origin[t.snap.origin] = by_origin.get(t.snap.origin, 0) + len(t.snap.tools)
    return sorted(items, key=lambda t: (by_origin[t.snap.origin], t.snap.origin, len(t.snap.tools), t.sid))


def _chunks(items: list[bytes], size: int) -> Iterable[list[bytes]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


_KNOWN: weakref.WeakKeyDictionary[Any, Diagnosis] = weakref.WeakKeyDictionary()


async def close_diagnosis(app: Any) -> None:
    """The app is going: its diagnosis stops and its worker process is reaped (none made: nothing to do)."""
    known = _KNOWN.get(app)
    if known is not None:
        await known.aclose()


def diagnosis_of(app: Any) -> Diagnosis:
    """The app's diagnosis (one per app, kept across the findings view's openings and read by the dashboard's
    summary line; its worker process ends with the app)."""
    known = _KNOWN.get(app)
    if known is None:
        known = _KNOWN[app] = Diagnosis(
            settled=getattr(app, "on_settled", None),
            quiet=_quiet_of(app),
            grown=getattr(app, "on_grown", None),
            idle=_idle_of(app),
        )
        weakref.finalize(app, known.close)
    return known


# The diagnosis reaches its app's methods through weak references: the registry above keys it by the app weakly,
# and the finalizer holds it, so a strong one kept every app that ever opened `f` alive with all it drew.


def _quiet_of(app: Any) -> Callable[[], Awaitable[None]] | None:
    if getattr(app, "input_quiet", None) is None:
        return None
    method = weakref.WeakMethod(app.input_quiet)

    async def quiet() -> None:
        bound = method()
        if bound is not None:
            await bound()

    return quiet


def _idle_of(app: Any) -> Callable[[], float] | None:
    if getattr(app, "since_input", None) is None:
        return None
    method = weakref.WeakMethod(app.since_input)

    def idle() -> float:
        bound = method()
        return bound() if bound is not None else float("inf")

    return idle
