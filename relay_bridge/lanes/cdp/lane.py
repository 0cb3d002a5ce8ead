"""`attach --cdp`: watch a browser over the DevTools Protocol's WebMCP domain, with nothing in the page.

Each page target (tabs opened later too) gets `WebMCP.enable` and `Page.enable`; each document in it becomes one
session in the store, fed with the same validated frames an in-page agent sends (hello, tool, start, spans,
status, event, bye) through a pseudo-connection, so the dashboard, the reports and the session log treat CDP
sessions like any other. They are marked: `agent` is `cdp/chromium-<major>`, an `event` of kind `cdp` opens
each session, and the status message says the session is watched over CDP.

What the host reports, and what is kept of it:
- toolInvoked {toolName, frameId, invocationId, input}: `input` is the JSON text the agent wrote; its UTF-8 length
  becomes inputBytes and the text is dropped.
- toolResponded {invocationId, status, output, errorText, exception}: `output` is the host's serialised result
  parsed again (a string stays a string). resultBytes is the UTF-8 length of the string the agent received,
  rebuilt with V8's JSON.stringify rules (jsjson); content types and image bytes come from an MCP envelope.
  Then the output is dropped. A string result that itself parses as JSON arrives parsed, so its own
  whitespace is not seen: it is measured as compact JSON.
- `Completed` with `isError: true` in the output counts as an error; `Error` keeps the exception's first line
  (per error policy, 200 characters, never the stack); `Canceled` is an error "Canceled". Calls still open
  when their document goes away are closed as canceled ("Canceled: navigated", "Canceled: tab closed").
- Times are the watcher's clock when each event arrived (the domain carries none): they include the DevTools
  transport, well under a millisecond on loopback. blockingMs is not observable here and stays 0.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, cast
from urllib.parse import urlsplit

import msgspec

from relay_bridge.core import protocol as p
from relay_bridge.core.jsjson import stringify, utf8_len
from relay_bridge.core.measure import call_size, content_facts, error_text, registered_descriptor, result_type
from relay_bridge.core.store import Store
from relay_bridge.lanes.cdp.client import START_HINT, CDPClient, CDPError
from relay_bridge.lanes.chromium import chromium_major

log = logging.getLogger("wmcp_top.cdp")

CONN_BASE = 1_000_000_000  # pseudo-connection ids, far from the relay's own (which count from 1)
CDP_MESSAGE = "watched over the DevTools Protocol (WebMCP domain): nothing is injected in the page"
CDP_HINTS = [
    "sizes are what the browser handed the DevTools client (the host's input and output), measured on arrival and dropped; a bridge such as chrome-devtools-mcp re-wraps them before its own client gets them",
    "times are taken when the DevTools events arrive; blocking time is not visible over CDP",
]
NO_DOMAIN_HINT = "this browser has no WebMCP domain: restart it with --enable-features=WebMCPTesting,DevToolsWebMCPSupport"
ANNOTATION_NAMES = {
    "readOnly": "readOnlyHint",
    "untrustedContent": "untrustedContentHint",
    "consequential": "consequentialHint",
    "debugging": "debugging",
}


@dataclass(slots=True)
class CallRecord:
    """What one finished call looked like: sizes, names and times only."""

    session: str
    seq: int
    tool: str
    wallMs: float
    inputBytes: int
    resultBytes: int
    status: str  # Completed | Error | Canceled | Navigated (a form whose submission left the document)
    isError: bool
    error: str | None


@dataclass
class _Open:
    seq: int
    tool: str
    frame: str
    invokedAt: float
    inputBytes: int
    overlapped: bool
    gap: float | None


@dataclass
class _Doc:
    """One document of one page target: one session."""

    sid: str
    conn: int
    t0: float
    url: str
    title: str
    tools: dict[str, str] = field(default_factory=dict)  # name -> frameId
    forms: set[str] = field(default_factory=set)  # declarative tools (the host names their form's backendNodeId)
    open: dict[str, _Open] = field(default_factory=dict)  # invocationId -> call
    seq: int = 0
    last_settled: float | None = None
    calls: int = 0
    phase: p.Phase = "host-found"

    def now(self) -> float:
        return (time.monotonic() - self.t0) * 1000


def _origin(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    if parts.scheme in ("http", "https") and parts.netloc:
        return f"{parts.scheme}://{parts.netloc}"[: p.MAX_TEXT], (parts.path or "/")[: p.MAX_TEXT]
    return url[:64] or "about:blank", ""


def _exception_message(params: dict[str, Any]) -> tuple[str, str]:
    """(name, message) of a failed call: the first line of the exception, never the stack."""
    exc = params.get("exception")
    text: str = params["errorText"] if isinstance(params.get("errorText"), str) else ""
    name = "Error"
    if isinstance(exc, dict):
        name = str(exc.get("className") or "Error")
        desc = exc.get("description")
        if not isinstance(desc, str):
            desc = str(exc.get("value", "")) if exc.get("value") is not None else ""
        first = desc.split("\n", 1)[0]
        prefix = f"{name}: "
        message = first[len(prefix) :] if first.startswith(prefix) else first
        if message == name:
            message = ""
        text = text or message
    return name[:64], text


class CdpLane:
    """Turns WebMCP domain events into frames applied to `store`. One instance per watched browser."""

    def __init__(
        self,
        store: Store,
        *,
        browser: str = "",
        user_agent: str = "",
        error_policy: p.ErrorPolicy = "message",
        on_call: Callable[[CallRecord], None] | None = None,
        on_frame: Callable[[int, bytes, Any], None] | None = None,
    ) -> None:
        self.store = store
        major = chromium_major(browser) or chromium_major(user_agent)
        self.agent = f"cdp/chromium-{major}" if major else "cdp/chromium"
        self.browser = browser
        self.user_agent = user_agent
        self.error_policy = error_policy
        self.on_call = on_call
        self.on_frame = on_frame  # (conn, validated frame text, frame): e.g. the session log
        self.docs: dict[str, _Doc] = {}  # CDP sessionId -> current document's session
        self.meta: dict[str, tuple[str, str]] = {}  # CDP sessionId -> (url, title) of the current document
        self.targets: dict[str, str] = {}  # CDP sessionId -> targetId
        self._conns = itertools.count(CONN_BASE)
        self.counters: dict[str, int] = {"unmatched": 0, "rejected": 0}
        self.no_domain = False  # WebMCP.enable was refused: the browser lacks DevToolsWebMCPSupport

    # -- frames ----------------------------------------------------------------------------------------------

    def _apply(self, conn: int, frame: msgspec.Struct) -> None:
        raw = p.encode(frame)
        decoded = p.decode(raw)  # the same validation a socket frame gets
        if isinstance(decoded, p.Rejection):
            self.counters["rejected"] += 1
            self.store.reject(conn, decoded, getattr(frame, "session", None))
            return
        self.store.apply(conn, decoded)
        if self.on_frame is not None:
            self.on_frame(conn, raw, decoded)

    def _status(self, doc: _Doc, message: str = CDP_MESSAGE, hints: list[str] | None = None) -> None:
        self._apply(doc.conn, p.Status(doc.sid, doc.phase, message, hints if hints is not None else CDP_HINTS))

    # -- targets and documents ---------------------------------------------------------------------------

    def open_document(self, cdp_session: str, url: str, title: str = "") -> None:
        """A new document in a target. Its session is made on the first WebMCP event, so tabs without tools
        (about:blank, new-tab pages) do not clutter the dashboard."""
        self.close_document(cdp_session, "navigated")
        self.meta[cdp_session] = (url, title)

    def _doc(self, cdp_session: str) -> _Doc | None:
        doc = self.docs.get(cdp_session)
        if doc is not None or cdp_session not in self.meta:
            return doc
        url, title = self.meta[cdp_session]
        conn = next(self._conns)
        self.store.connect(conn, in_process=True)  # the only connection whose hellos may carry `cdp/`
        doc = _Doc(secrets.token_hex(4), conn, time.monotonic(), url, title)
        origin, path = _origin(url)
        info = p.SessionInfo(
            id=doc.sid,
            origin=origin,
            path=path,
            title=title[: p.MAX_TEXT],
            userAgent=self.user_agent[: p.MAX_TEXT],
            context="top",
            visibility="visible",
            attachedAt=0.0,
            timeOrigin=time.time() * 1000,
        )
        self._apply(conn, p.Hello(p.PROTOCOL, self.agent, info, p.AgentConfig(1.0, self.store.buffer, self.error_policy)))
        self._apply(conn, p.Event(doc.sid, 0.0, "cdp", {"via": "devtools-protocol", "browser": self.browser[:200] or None}))
        self._status(doc)
        self.docs[cdp_session] = doc
        return doc

    def close_document(self, cdp_session: str, reason: str) -> None:
        doc = self.docs.pop(cdp_session, None)
        if doc is None:
            return
        for invocation in list(doc.open):
            self._settle(doc, invocation, "Canceled", None, {}, reason=f"Canceled: {reason}")
        self._apply(doc.conn, p.Bye(doc.sid, reason))
        self.store.disconnect(doc.conn)

    # -- WebMCP events -------------------------------------------------------------------------------------

    def handle(self, method: str, params: dict[str, Any], cdp_session: str | None) -> None:
        if method == "Page.frameNavigated" and cdp_session in self.meta:
            frame = params.get("frame") or {}
            if not frame.get("parentId"):
                self.open_document(cdp_session or "", str(frame.get("url", "")), "")
                return
        if method.startswith("WebMCP."):
            doc = self._doc(cdp_session or "")
        else:
            doc = self.docs.get(cdp_session or "")
        if doc is None:
            return
        if method == "WebMCP.toolsAdded":
            for tool in params.get("tools") or []:
                if isinstance(tool, dict):
                    self._tool_added(doc, tool)
        elif method == "WebMCP.toolsRemoved":
            for tool in params.get("tools") or []:
                if isinstance(tool, dict) and isinstance(tool.get("name"), str):
                    self._tool_removed(doc, tool["name"])
        elif method == "WebMCP.toolInvoked":
            self._invoked(doc, params)
        elif method == "WebMCP.toolResponded":
            invocation = params.get("invocationId")
            if not isinstance(invocation, str) or invocation not in doc.open:
                self.counters["unmatched"] += 1  # a call that began before the watch did
                return
            status = str(params["status"]) if params.get("status") in ("Completed", "Error", "Canceled") else "Error"
            self._settle(doc, invocation, status, params.get("output"), params)
        elif method == "Page.frameNavigated":
            self._frame_gone(doc, str((params.get("frame") or {}).get("id")))
        elif method == "Page.frameDetached":
            self._frame_gone(doc, str(params.get("frameId")))

    def _tool_added(self, doc: _Doc, tool: dict[str, Any]) -> None:
        name = tool.get("name")
        if not isinstance(name, str) or not name:
            return
        if name in doc.tools:
            self._tool_removed(doc, name)
        doc.tools[name] = str(tool.get("frameId", ""))
        if "backendNodeId" in tool:
            doc.forms.add(name)
        else:
            doc.forms.discard(name)
        annotations = {
            ANNOTATION_NAMES.get(k, k)[:64]: v
            for k, v in (tool.get("annotations") or {}).items()
            if isinstance(v, (bool, int, float, str)) or v is None
        }
        descriptor: dict[str, Any] = {"name": name}
        for key in ("title", "description", "inputSchema"):
            if key in tool:
                descriptor[key] = tool[key]
        if annotations:
            descriptor["annotations"] = annotations
        descriptor = registered_descriptor(descriptor)  # the page's descriptor, as the agent weighs it: one schemaBytes
        text = stringify(descriptor)
        raw = msgspec.Raw(text.encode("utf-8", "surrogatepass")) if utf8_len(text) <= p.MAX_DESCRIPTOR_BYTES else msgspec.Raw()
        kept = dict(list(annotations.items())[: p.MAX_DETAIL_KEYS]) or None
        kind: Literal["imperative", "form"] = "form" if name in doc.forms else "imperative"
        self._apply(doc.conn, p.ToolChange(doc.sid, "registered", name, doc.now(), utf8_len(text), raw, None, kept, kind=kind))
        if doc.phase == "host-found":
            doc.phase = "tools-registered"
            self._status(doc)

    def _tool_removed(self, doc: _Doc, name: str) -> None:
        if doc.tools.pop(name, None) is None:
            return
        self._apply(doc.conn, p.ToolChange(doc.sid, "unregistered", name, doc.now()))

    def _frame_gone(self, doc: _Doc, frame_id: str) -> None:
        for invocation, call in list(doc.open.items()):
            if call.frame == frame_id:
                self._settle(doc, invocation, "Canceled", None, {}, reason="Canceled: frame navigated")
        for name, frame in list(doc.tools.items()):
            if frame == frame_id:
                self._tool_removed(doc, name)

    def _invoked(self, doc: _Doc, params: dict[str, Any]) -> None:
        invocation, tool = params.get("invocationId"), params.get("toolName")
        if not isinstance(invocation, str) or not isinstance(tool, str):
            return
        raw_input = params.get("input")
        input_bytes = utf8_len(raw_input) if isinstance(raw_input, str) else utf8_len(stringify(raw_input))
        del raw_input
        params.pop("input", None)  # measured; the text goes no further
        at = doc.now()
        overlapped = bool(doc.open)  # began before another call settled
        gap = None if overlapped or doc.last_settled is None else max(0.0, at - doc.last_settled)
        call = _Open(doc.seq, tool, str(params.get("frameId", "")), at, input_bytes, overlapped, gap)
        doc.seq += 1
        doc.open[invocation] = call
        self._apply(doc.conn, p.Start(doc.sid, [p.CallStart(call.seq, tool[: p.MAX_TOOL_NAME], at)]))

    def _settle(self, doc: _Doc, invocation: str, status: str, output: Any, params: dict[str, Any], reason: str | None = None) -> None:
        call = doc.open.pop(invocation)
        settled = doc.now()
        overlapped, gap = call.overlapped, call.gap
        result_bytes = image = 0
        types: dict[str, int] = {}
        result_kind: p.ResultType | None = None
        envelope: bool | None = None
        is_error = status != "Completed"
        error: str | None = None
        error_type: str | None = None
        outcome: Literal["navigated"] | None = None
        form = call.tool in doc.forms
        if status == "Canceled" and form and reason == "Canceled: navigated":
            # A form whose submission navigated: the expected end of such a call, not an error.
            status, is_error, result_kind, outcome = "Navigated", False, "null", "navigated"
        elif status == "Completed":
            text = output if isinstance(output, str) else stringify(output)
            result_bytes = utf8_len(text)
            del text
            types, image, envelope = content_facts(output)
            result_kind = cast(p.ResultType, result_type(output))
            if isinstance(output, dict) and output.get("isError") is True:
                is_error = True
                error = error_text(self.error_policy, "ToolError", "isError")
            elif form and isinstance(output, list) and output and all(isinstance(m, str) for m in output):
                is_error = True  # a form's validation messages (as the page agent counts them)
                error = error_text(self.error_policy, "ValidationError", f"the form answered with {len(output)} validation message(s)")
        elif status == "Error":
            name, message = _exception_message(params)
            error = error_text(self.error_policy, name, message)
            error_type = name
            result_kind = "error"
        elif status == "Canceled":
            error = error_text(self.error_policy, "Canceled", reason or "Canceled")
            result_kind = "error"
        output = None
        params.pop("output", None)
        params.pop("exception", None)
        params.pop("errorText", None)
        size = call_size(call.inputBytes, result_bytes, image)
        span = p.Span(
            sessionId=doc.sid,
            seq=call.seq,
            tool=call.tool[: p.MAX_TOOL_NAME],
            invokedAt=call.invokedAt,
            settledAt=settled,
            wallMs=max(0.0, settled - call.invokedAt),
            blockingMs=0.0,
            inputBytes=size.inputBytes,
            resultBytes=size.resultBytes,
            contentTypes=types,
            imageBytes=size.imageBytes,
            estInputTokens=size.estInputTokens,
            estTextTokens=size.estTextTokens,
            estImageTokens=size.estImageTokens,
            estTokens=size.estTokens,
            isError=is_error,
            error=error,
            gapSincePrevCallMs=gap,
            synthetic=False,
            serializable=True,
            resultType=result_kind,
            envelope=envelope,
            overlapped=overlapped,
            errorType=error_type,
            outcome=outcome,
        )
        if status == "Canceled":
            self._apply(doc.conn, p.Event(doc.sid, settled, "toolcancel", {"seq": call.seq, "tool": call.tool[:200]}))
        self._apply(doc.conn, p.Spans(doc.sid, [span]))
        if doc.last_settled is None or settled > doc.last_settled:
            doc.last_settled = settled
        doc.calls += 1
        if doc.phase != "measuring":
            doc.phase = "measuring"
            self._status(doc)
        if self.on_call is not None:
            self.on_call(CallRecord(doc.sid, call.seq, call.tool, span.wallMs, size.inputBytes, size.resultBytes, status, is_error, error))


async def attach(
    url: str,
    store: Store,
    *,
    stop_event: asyncio.Event,
    on_call: Callable[[CallRecord], None] | None = None,
    on_frame: Callable[[int, bytes, Any], None] | None = None,
    ready: asyncio.Event | None = None,
    error_policy: p.ErrorPolicy = "message",
) -> CdpLane:
    """Watch the browser at `url` (http://host:port or its ws:// endpoint) until `stop_event` is set or the browser
    goes away. Sessions appear in `store`. Raises CDPError (one line with START_HINT) when it cannot connect.
    `ready` is set once every existing page target has WebMCP enabled."""
    client = await CDPClient.connect(url)
    version = client.version
    if not version:
        try:
            version = await client.send("Browser.getVersion")
            version = {"Browser": version.get("product", ""), "User-Agent": version.get("userAgent", "")}
        except CDPError:
            version = {}
    lane = CdpLane(
        store,
        browser=str(version.get("Browser", "")),
        user_agent=str(version.get("User-Agent", "")),
        error_policy=error_policy,
        on_call=on_call,
        on_frame=on_frame,
    )
    attaching: set[str] = set()
    pending: set[asyncio.Task[Any]] = set()
    enabled: dict[str, asyncio.Future[None]] = {}

    def enabled_future(target_id: str) -> asyncio.Future[None]:
        if target_id not in enabled:
            enabled[target_id] = asyncio.get_running_loop().create_future()
        return enabled[target_id]

    async def enable(cdp_session: str, info: dict[str, Any]) -> None:
        try:
            await _enable(cdp_session, info)
        finally:
            future = enabled_future(str(info.get("targetId", "")))
            if not future.done():
                future.set_result(None)

    async def _enable(cdp_session: str, info: dict[str, Any]) -> None:
        lane.targets[cdp_session] = str(info.get("targetId", ""))
        lane.open_document(cdp_session, str(info.get("url", "")), str(info.get("title", "")))
        try:
            await client.send("Page.enable", session_id=cdp_session)
            await client.send("WebMCP.enable", session_id=cdp_session)
        except CDPError as exc:
            if "wasn't found" in str(exc) or "not found" in str(exc):
                lane.no_domain = True
            current = lane._doc(cdp_session)
            if current is not None:
                current.phase = "no-host"
                lane._status(current, f"WebMCP.enable failed: {str(exc)[:200]}", [NO_DOMAIN_HINT, START_HINT[:500]])

    async def attach_target(target_id: str) -> None:
        try:
            await client.send("Target.attachToTarget", {"targetId": target_id, "flatten": True})
        except CDPError:
            attaching.discard(target_id)  # closed before we got to it
            future = enabled_future(target_id)
            if not future.done():
                future.set_result(None)

    def spawn(coro: Any) -> asyncio.Task[Any]:
        task = asyncio.get_running_loop().create_task(coro)
        pending.add(task)
        task.add_done_callback(pending.discard)
        return task

    def on_event(method: str, params: dict[str, Any], cdp_session: str | None) -> None:
        if method == "Target.targetCreated":
            info = params.get("targetInfo") or {}
            if info.get("type") == "page" and info.get("targetId") not in attaching:
                attaching.add(str(info.get("targetId")))
                spawn(attach_target(str(info.get("targetId"))))
        elif method == "Target.attachedToTarget":
            info = params.get("targetInfo") or {}
            if info.get("type") == "page" and isinstance(params.get("sessionId"), str):
                spawn(enable(params["sessionId"], info))
        elif method == "Target.detachedFromTarget":
            sid = params.get("sessionId")
            if isinstance(sid, str):
                lane.close_document(sid, "tab closed")
                lane.meta.pop(sid, None)
                lane.targets.pop(sid, None)
        elif method == "Target.targetInfoChanged":
            pass
        else:
            lane.handle(method, params, cdp_session)

    client.on_event = on_event
    try:
        targets = await client.send("Target.getTargets")
        # existing pages: attach and enable before saying ready (claimed first, so discovery skips them)
        first = []
        for info in targets.get("targetInfos", []):
            if info.get("type") == "page" and info.get("targetId") not in attaching:
                attaching.add(info["targetId"])
                first.append(info["targetId"])
        await client.send("Target.setDiscoverTargets", {"discover": True})
        waits = [enabled_future(t) for t in first]
        for t in first:
            spawn(attach_target(t))
        if waits:
            await asyncio.wait_for(asyncio.gather(*waits), 20)
        if ready is not None:
            ready.set()
        stop = asyncio.ensure_future(stop_event.wait())
        gone = asyncio.ensure_future(client.closed.wait())
        await asyncio.wait({stop, gone}, return_when=asyncio.FIRST_COMPLETED)
        stop.cancel()
        gone.cancel()
    finally:
        for cdp_session in list(lane.docs):
            lane.close_document(cdp_session, "watch ended")
        for task in list(pending):
            task.cancel()
        await client.close()
    return lane
