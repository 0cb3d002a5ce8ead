"""The wire protocol `wmcp-relay/1`: every frame as a msgspec Struct, decoded and validated once.

Sans-I/O: this module turns bytes into typed frames (or a `Rejection` with a stable code) and frames into
bytes. The server owns the sockets; the store owns the state. The full table of frames and fields is in
README.md ("Wire protocol"); the limits below are the ones the relay enforces and announces in `welcome`.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import msgspec
from msgspec import Meta, Struct, field

PROTOCOL = "wmcp-relay/1"

# Limits (design section 5). Named once; the server, the store and the tests read these.
MAX_FRAME_BYTES = 1 << 20
MAX_SPANS_PER_FRAME = 500
MAX_CALLS_PER_FRAME = 500
MAX_TOOL_NAME = 128
MAX_ERROR = 201  # this agent cuts at 200, its "…" included; a webmcp-profiler page relayed over the channel keeps 200 + "…" (201)
MAX_DESCRIPTOR_BYTES = 64 * 1024
# Arrays and objects within arrays and objects. Real schemas nest a few levels (each object level is two: the
# schema and its `properties`); the dashboard and the exports walk a descriptor with the standard library's
# recursive JSON code, which a descriptor about 1,000 levels deep (2 KB of brackets) crashed.
MAX_DESCRIPTOR_DEPTH = 64
MAX_TEXT = 512  # titles, paths, messages, user agents
MAX_HINTS = 8
MAX_DETAIL_KEYS = 16
MAX_CONTENT_TYPES = 16
MAX_RESULT_TEXT = 256 * 1024  # an invoked tool's result text, for the terminal dialog
MAX_PAYLOAD = 64 * 1024  # characters of one captured argument or result text (payload capture is opt-in)
# ... plus the agent's cut marker `...[N chars]` (001's form) when the text was longer than its limit.
MAX_PAYLOAD_TEXT = MAX_PAYLOAD + 32
MAX_LIVE_SESSIONS = 64
MAX_SESSIONS_PER_CONNECTION = 16
# Live sessions of one origin (a quarter of the table): 4 sockets x 16 hellos of one page leave 48 seats to others.
MAX_SESSIONS_PER_ORIGIN = 16
# Largest accepted clock or size: finite, far above anything real (about 300 years in ms).
MAX_NUMBER = 1e13

NonNeg = Annotated[float, Meta(ge=0, le=MAX_NUMBER)]
NonNegInt = Annotated[int, Meta(ge=0, le=int(MAX_NUMBER))]
# \Z, not $: msgspec matches with re.search, where $ also matches before a final newline ("0a1b2c3d\n").
SessionId = Annotated[str, Meta(pattern=r"^[0-9a-f]{8}\Z")]
ResumeSecret = Annotated[str, Meta(pattern=r"^[0-9a-f]{32}\Z")]
ToolName = Annotated[str, Meta(min_length=1, max_length=MAX_TOOL_NAME)]
Text = Annotated[str, Meta(max_length=MAX_TEXT)]
ShortText = Annotated[str, Meta(max_length=64)]
ErrorText = Annotated[str, Meta(max_length=MAX_ERROR)]
Scalar = Annotated[str, Meta(max_length=MAX_ERROR)] | bool | int | float | None

Phase = Literal["inactive", "no-host", "host-found", "tools-registered", "measuring", "detached"]
Coverage = Literal["none-observed", "running", "incomplete"]
Context = Literal["top", "iframe", "worker", "relayed"]
ErrorPolicy = Literal["message", "name", "none"]
ResultType = Literal["object", "array", "string", "number", "boolean", "null", "undefined", "error", "unserializable"]


class Span(Struct, forbid_unknown_fields=True, gc=False):
    """One measured execute() call: exactly the field names of webmcp-profiler's span, plus the optional
    facts about what the agent received. Untracked by the cycle collector (gc=False: only scalars and a dict of
    counts, never in a cycle): the store holds thousands, and each decoded frame adds up to 500."""

    sessionId: SessionId
    seq: NonNegInt
    tool: ToolName
    invokedAt: NonNeg
    settledAt: NonNeg
    wallMs: NonNeg
    blockingMs: NonNeg
    inputBytes: NonNegInt
    resultBytes: NonNegInt
    contentTypes: Annotated[dict[ShortText, NonNegInt], Meta(max_length=MAX_CONTENT_TYPES)]
    imageBytes: NonNegInt
    estInputTokens: NonNegInt
    estTextTokens: NonNegInt
    estImageTokens: NonNegInt
    estTokens: NonNegInt
    isError: bool
    error: ErrorText | None
    gapSincePrevCallMs: NonNeg | None
    synthetic: bool
    serializable: bool
    resultType: ResultType | None = None
    envelope: bool | None = None
    substituted: bool | None = None
    depth: Annotated[int, Meta(ge=0, le=64)] | None = None
    parent: NonNegInt | None = None
    # Invoked before the previous call settled. Recorded at the source; only when absent (webmcp-profiler's
    # own spans on the channel) is it inferred from a null gap.
    overlapped: bool | None = None
    # The error's class name (e.g. "TypeError"), for OpenTelemetry's error.type; never a message or stack.
    errorType: Annotated[str, Meta(max_length=64)] | None = None
    # A refusal (the tool declined to act): "confirm" or "unavailable" from the built-in match, or the label the
    # page's own `isRefusal` hook returned (a short identifier, as autotel-webmcp lets hosts name their own).
    refusal: Annotated[str, Meta(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,31}\Z")] | None = None
    # The consent the page recorded for this call (`recordConsent`), and whether the label the human read
    # named another tool than the one that ran.
    consent: Literal["granted", "denied"] | None = None
    consentMismatch: bool | None = None
    # Declarative (form) calls: how long the filled form waited for the user's submit (kept out of wallMs), and
    # "navigated" when the submission left the document (the calling document's executeTool got null).
    waitedMs: NonNeg | None = None
    # "navigated": a form's submission left the document. "refused": the browser refused a form call before the
    # page's code ran (its validation): a call, an error, but no page time (stats keep it out of every duration).
    outcome: Literal["navigated", "refused"] | None = None
    # "terminal": the call was started from wmcp-top (the inspector's `x`), not by the page's agent. It is in
    # the timeline and the spans, never in the host-gap chain, the totals or the per-tool numbers.
    invokedBy: Literal["terminal"] | None = None


# A span as a row (a spans frame's `rows`): its values in Span's field order, without `sessionId` (the frame names
# the session), the optional fields at the end left out from the last one that is set. A third of the object's
# bytes, and the page pays its WebSocket for every byte on its main thread (docs/protocol.md, "Span rows").
SpanRow = msgspec.defstruct(
    "SpanRow",
    [
        (f.name, f.type, f.default) if f.default is not msgspec.NODEFAULT else (f.name, f.type)
        for f in msgspec.structs.fields(Span)
        if f.name != "sessionId"
    ],
    array_like=True,
    forbid_unknown_fields=True,
    gc=False,
)
SPAN_ROW_FIELDS = tuple(f.name for f in msgspec.structs.fields(SpanRow))


class SessionInfo(Struct, forbid_unknown_fields=True):
    id: SessionId
    origin: Text
    path: Text = ""
    title: Text = ""
    userAgent: Text = ""
    context: Context = "top"
    via: SessionId | None = None
    visibility: ShortText = "visible"
    attachedAt: NonNeg = 0.0
    timeOrigin: NonNeg = 0.0


class AgentConfig(Struct, forbid_unknown_fields=True):
    sample: Annotated[float, Meta(ge=0, le=1)] = 1.0
    buffer: Annotated[int, Meta(ge=1, le=100_000)] = 500
    errorPolicy: ErrorPolicy = "message"


class Hello(Struct, tag="hello", tag_field="type", forbid_unknown_fields=True):
    protocol: ShortText
    agent: Text
    session: SessionInfo
    config: AgentConfig = field(default_factory=AgentConfig)
    lost: NonNegInt = 0
    # The secret the relay handed the session's first socket in the ack of its hello: only a hello that
    # presents it may re-claim the session once that socket has closed (README, "Session ownership").
    resume: ResumeSecret | None = None
    # The agent follows `watch` frames (relay_bridge.core.watching): the relay sends them to such an agent only.
    cadence: bool = False


class CallStart(Struct, forbid_unknown_fields=True):
    seq: NonNegInt
    tool: ToolName
    invokedAt: NonNeg
    depth: Annotated[int, Meta(ge=0, le=64)] = 0
    parent: NonNegInt | None = None
    # A form without toolautosubmit, filled and waiting for the user's submit: not tool time yet. A later
    # `start` with the same seq and no `waiting` says the user submitted (its invokedAt is the submit).
    waiting: bool = False
    invokedBy: Literal["terminal"] | None = None  # started from wmcp-top, not by the page's agent


class Start(Struct, tag="start", tag_field="type", forbid_unknown_fields=True):
    session: SessionId
    calls: Annotated[list[CallStart], Meta(max_length=MAX_CALLS_PER_FRAME)]


class Spans(Struct, tag="spans", tag_field="type", forbid_unknown_fields=True):
    session: SessionId
    spans: Annotated[list[Span], Meta(max_length=MAX_SPANS_PER_FRAME)] = field(default_factory=list)
    # Lowest seq the agent may still send (a call still running, a held span the relay lacks): every seq
    # below it was either stored or lost (evicted unsent), so the relay's ack can move past a hole the agent
    # will never fill, and never past a call that is still running.
    floor: NonNegInt | None = None
    lost: NonNegInt | None = None
    # Facts (late, as in a `facts` frame) that were ready when this batch left: one frame instead of two.
    # Applied after the frame's spans.
    facts: Annotated[list[FactsItem], Meta(max_length=MAX_FACTS_PER_FRAME)] | None = None
    # The same spans as rows (SpanRow), from an agent the welcome told `rows`: decode() turns them into `spans`.
    rows: Annotated[list[SpanRow], Meta(max_length=MAX_SPANS_PER_FRAME)] | None = None  # type: ignore[valid-type]  # made by defstruct


class Update(Struct, tag="update", tag_field="type", forbid_unknown_fields=True):
    session: SessionId
    seq: NonNegInt
    blockingMs: NonNeg


class LedgerTool(Struct, forbid_unknown_fields=True):
    schemaBytes: NonNegInt = 0
    registeredAt: NonNeg | None = None
    unregisteredAt: NonNeg | None = None
    internal: bool = False
    # False for a tool the agent could not wrap (registered before it loaded): its calls are only counted.
    measured: bool = True
    # Calls counted from the host's `toolactivated` event for such a tool: no timing, no bytes.
    counted: NonNegInt = 0


class LedgerTotals(Struct, forbid_unknown_fields=True):
    calls: NonNegInt = 0
    unsampledCalls: NonNegInt = 0
    overlappingCalls: NonNegInt = 0
    errors: NonNegInt = 0
    refused: NonNegInt = 0  # form calls the browser refused before the page ran (in no duration)
    wallMs: NonNeg = 0.0
    blockingMs: NonNeg = 0.0
    resultBytes: NonNegInt = 0
    estTokens: NonNegInt = 0
    estInputTokens: NonNegInt = 0
    hostGapMs: NonNeg = 0.0
    schemaBytes: NonNegInt = 0
    estSchemaTokens: NonNegInt = 0


class Ledger(Struct, forbid_unknown_fields=True):
    sessionId: SessionId
    attachedAt: NonNeg = 0.0
    hostFoundAt: NonNeg | None = None
    hostLocation: Literal["document", "navigator", "window"] | None = None
    firstRegistrationAt: NonNeg | None = None
    registeredTools: Annotated[list[ToolName], Meta(max_length=1024)] = []
    tools: Annotated[dict[ToolName, LedgerTool], Meta(max_length=1024)] = {}
    firstCallAt: NonNeg | None = None
    lastSettledAt: NonNeg | None = None
    totals: LedgerTotals = field(default_factory=LedgerTotals)


class LedgerFrame(Struct, tag="ledger", tag_field="type", forbid_unknown_fields=True):
    session: SessionId
    rev: NonNegInt
    ledger: Ledger


class FormField(Struct, forbid_unknown_fields=True):
    """One control of a declarative tool's form: which parameter it feeds and what the lint needs. No values."""

    element: Annotated[str, Meta(max_length=MAX_TOOL_NAME)]
    param: ToolName | None = None  # its name; None: it has none, so it feeds no parameter
    type: ShortText = ""
    inSchema: bool = False
    described: bool = False  # has toolparamdescription
    labeled: bool = False  # a <label>, aria-label(ledby) or title
    required: bool = False


class FormFacts(Struct, forbid_unknown_fields=True):
    autosubmit: bool = False
    navigates: bool = True
    fields: Annotated[list[FormField], Meta(max_length=64)] = []


class ToolChange(Struct, tag="tool", tag_field="type", forbid_unknown_fields=True):
    session: SessionId
    change: Literal["registered", "unregistered"]
    name: ToolName
    at: NonNeg
    schemaBytes: NonNegInt = 0
    # The descriptor {name, title, description, inputSchema, annotations}: not a body, the host ships it to
    # the model anyway. Kept raw (and capped) so the relay never re-encodes it.
    descriptor: msgspec.Raw = msgspec.Raw()  # empty when absent (msgspec allows no Raw in a union)
    annotationsSent: Annotated[dict[ShortText, Scalar], Meta(max_length=MAX_DETAIL_KEYS)] | None = None
    annotationsKept: Annotated[dict[ShortText, Scalar], Meta(max_length=MAX_DETAIL_KEYS)] | None = None
    internal: bool = False
    # Set when the host refused the registration (duplicate name, invalid schema): not a tool.
    rejected: ErrorText | None = None
    # Optional fingerprint of the handler's source (off by default in the agent): a changed fingerprint under
    # an unchanged descriptor is still a redefinition.
    fingerprint: Annotated[str, Meta(max_length=64)] | None = None
    # "form": a declarative tool (<form toolname>), its descriptor the host's generated one, `form` its controls.
    kind: Literal["imperative", "form"] | None = None
    form: FormFacts | None = None


class Status(Struct, tag="status", tag_field="type", forbid_unknown_fields=True):
    session: SessionId
    phase: Phase
    message: Text = ""
    hints: Annotated[list[Text], Meta(max_length=MAX_HINTS)] = []
    coverage: Coverage | None = None
    reasons: Annotated[list[Text], Meta(max_length=MAX_HINTS)] = []


class Event(Struct, tag="event", tag_field="type", forbid_unknown_fields=True):
    session: SessionId
    at: NonNeg
    kind: Annotated[str, Meta(min_length=1, max_length=32, pattern=r"^[a-z][a-z0-9_.-]*\Z")]
    detail: Annotated[dict[ShortText, Scalar], Meta(max_length=MAX_DETAIL_KEYS)] = {}


class Payload(Struct, tag="payload", tag_field="type", forbid_unknown_fields=True):
    """Opt-in payload capture (`capturePayloads` in the page, capped by `maxPayloadLength`). The relay hands it
    to the OpenTelemetry exporter only: never to the store, the log, an export or the screen."""

    session: SessionId
    seq: NonNegInt
    # Set for a Prompt API step: then `seq` is the step's seq in that prompt session, `arguments` the prompt's
    # text and `result` the model's answer (streamed chunks joined).
    promptSession: Annotated[str, Meta(min_length=1, max_length=36)] | None = None
    arguments: Annotated[str, Meta(max_length=MAX_PAYLOAD_TEXT)] | None = None
    result: Annotated[str, Meta(max_length=MAX_PAYLOAD_TEXT)] | None = None
    # A thrown error's message (autotel-webmcp's `webmcp.error.message`, capture on only).
    error: Annotated[str, Meta(max_length=MAX_PAYLOAD_TEXT)] | None = None


class Prompt(Struct, tag="prompt", tag_field="type", forbid_unknown_fields=True):
    """One Prompt API (`LanguageModel`) step, measured in the page. Text is counted, never sent."""

    session: SessionId
    promptSession: Annotated[str, Meta(min_length=1, max_length=36)]
    kind: Literal["create", "prompt", "stream", "destroy"]
    at: NonNeg
    seq: NonNegInt = 0
    totalMs: NonNeg | None = None
    firstChunkMs: NonNeg | None = None
    chunks: NonNegInt | None = None
    charsIn: NonNegInt | None = None
    charsOut: NonNegInt | None = None
    error: ErrorText | None = None


class Result(Struct, tag="result", tag_field="type", forbid_unknown_fields=True):
    """The agent's answer to a relay `command`. For `invoke`, `text` is the tool's result: shown in the
    terminal's dialog only, never stored, logged or exported (the server hands it to the waiting caller)."""

    id: Annotated[str, Meta(min_length=1, max_length=32)]
    session: SessionId
    ok: bool
    text: Annotated[str, Meta(max_length=MAX_RESULT_TEXT)] | None = None
    error: ErrorText | None = None
    resultBytes: NonNegInt | None = None
    wallMs: NonNeg | None = None


# Diagnosis facts (docs/diagnosis-facts.md): what the agent measured about one call, off its call path, for the
# findings. Numbers, a keyword, a pointer into the tool's own schema and an earlier seq: never a body. These
# structs are the one place in this module with snake_case attributes (`rename="camel"` gives the wire its
# camelCase names), as the findings engine reads them in Python.
ImageMime = Literal["image/png", "image/jpeg", "image/gif", "image/webp", "image/bmp", "image/avif", "image/unknown"]
SchemaKeyword = Literal[
    "type",
    "required",
    "enum",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "pattern",
    "additionalProperties",
    "const",
    "minItems",
    "maxItems",
    "format",
]
MAX_FACTS_PER_FRAME = 500
MAX_SCHEMA_POINTER = 256


class ImageFacts(Struct, forbid_unknown_fields=True, rename="camel"):
    """The largest image of a result, re-encoded in the page: JPEG at quality 0.8 as it is, and scaled so its
    longer side is at most 1568 px (`fit_*`; equal to the unscaled figures when already within)."""

    mime: ImageMime  # read from the image's own bytes, never the page's mimeType text
    width: NonNegInt
    height: NonNegInt
    bytes: NonNegInt  # decoded bytes of the image
    jpeg_bytes: NonNegInt
    fit_bytes: NonNegInt
    fit_width: NonNegInt
    fit_height: NonNegInt


class BloatFacts(Struct, forbid_unknown_fields=True, rename="camel", omit_defaults=True):
    """What a text/JSON result spends on whitespace, keys repeated across rows, and base64 inside strings."""

    text_bytes: NonNegInt
    whitespace_bytes: NonNegInt = 0  # each zero figure may be left out (an agent the welcome told `rows` does)
    repeated_key_bytes: NonNegInt = 0
    repeated_key_rows: NonNegInt = 0
    base64_bytes: NonNegInt = 0
    base64_runs: NonNegInt = 0
    truncated: bool | None = None  # only the first 262,144 characters were examined


class SchemaFacts(Struct, forbid_unknown_fields=True, rename="camel", omit_defaults=True):
    """The input against the tool's own inputSchema: how many constraints it breaks, and the first one."""

    violations: NonNegInt
    constraint: SchemaKeyword | None = None
    path: Annotated[str, Meta(max_length=MAX_SCHEMA_POINTER, pattern=r"^(/[^/]*)*\Z")] | None = None  # JSON Pointer into the schema


class RepeatFacts(Struct, forbid_unknown_fields=True, rename="camel"):
    of: NonNegInt  # the earlier call with the same tool and canonical input


class RefusedFacts(Struct, forbid_unknown_fields=True, rename="camel"):
    by: Literal["browser"]


class Facts(Struct, forbid_unknown_fields=True, rename="camel", omit_defaults=True):
    image: ImageFacts | None = None
    bloat: BloatFacts | None = None
    schema: SchemaFacts | None = None
    repeat: RepeatFacts | None = None
    refused: RefusedFacts | None = None


class FactsItem(Struct, forbid_unknown_fields=True):
    seq: NonNegInt
    facts: Facts


class FactsFrame(Struct, tag="facts", tag_field="type", forbid_unknown_fields=True):
    """Late, like `update`: one call's facts (`seq`, `facts`), or several (`items`); never both."""

    session: SessionId
    seq: NonNegInt | None = None
    facts: Facts | None = None
    items: Annotated[list[FactsItem], Meta(max_length=MAX_FACTS_PER_FRAME)] | None = None

    def entries(self) -> list[FactsItem]:
        if self.items is not None:
            return self.items
        assert self.seq is not None and self.facts is not None  # decode() refuses a frame without them
        return [FactsItem(self.seq, self.facts)]


class Bye(Struct, tag="bye", tag_field="type", forbid_unknown_fields=True):
    session: SessionId
    reason: Text = ""


AgentFrame = Hello | Start | Spans | Update | LedgerFrame | ToolChange | Status | Event | Payload | Prompt | Result | FactsFrame | Bye
FRAME_TYPES = ("hello", "start", "spans", "update", "ledger", "tool", "status", "event", "payload", "prompt", "result", "facts", "bye")


# Relay -> agent.
class Limits(Struct):
    maxFrameBytes: int = MAX_FRAME_BYTES
    maxSpansPerFrame: int = MAX_SPANS_PER_FRAME
    maxToolName: int = MAX_TOOL_NAME
    maxError: int = MAX_ERROR
    maxSessionsPerConnection: int = MAX_SESSIONS_PER_CONNECTION


class Welcome(Struct, tag="welcome", tag_field="type"):
    protocol: str
    relay: str
    limits: Limits = field(default_factory=Limits)
    # The relay has a use for opt-in `payload` frames (--otlp or --show-payloads): an agent sends none otherwise.
    payloads: bool = False
    # The relay reads spans as rows and bloat facts without their zero figures (an agent sends the long forms otherwise).
    rows: bool = True


class Ack(Struct, tag="ack", tag_field="type", omit_defaults=True):
    session: str
    seq: int  # highest contiguous seq stored (or skipped under the agent's floor); -1 when none yet
    # Only in the ack that answers a hello, and only to the socket that owns the session.
    resume: str | None = None
    # The first ranges [lo, hi] stored above `seq` (calls settle in any order, so a slow call leaves a hole
    # that later spans do not wait behind); absent when there are none.
    above: list[list[int]] | None = None


class Command(Struct, tag="command", tag_field="type"):
    """Relay -> agent. Only the terminal starts one (never a page), and only under `--allow-invoke`."""

    id: str
    session: str
    name: str  # "invoke": args {tool, input}
    args: dict[str, Any] = field(default_factory=dict)


class Watch(Struct, tag="watch", tag_field="type"):
    """Relay -> agent, only to an agent whose hello said `cadence`: whether a viewer shows this session
    (relay_bridge.core.watching). A hello starts watched; the relay sends this after the hello's ack when the session
    is not, and on every change. Watched: the agent sends at its own batch window (pacing.js); unwatched: at most
    once per `intervalMs`, sooner only when its buffer reaches its mark, nothing while idle. A session that
    becomes watched sends what it holds at once."""

    session: str
    watched: bool
    intervalMs: int


class ErrorFrame(Struct, tag="error", tag_field="type"):
    code: str
    message: str
    fatal: bool = False
    session: str | None = None


# Stable rejection codes. Each is counted by the store under the same name.
class Code:
    BAD_JSON = "bad_json"
    BAD_UTF8 = "bad_utf8"
    UNKNOWN_TYPE = "unknown_type"
    INVALID = "invalid"
    LIMIT = "limit"
    TOO_MANY_SPANS = "too_many_spans"
    PROTOCOL_VERSION = "protocol_version"
    UNKNOWN_SESSION = "unknown_session"
    SESSION_LIMIT = "session_limit"
    RATE_LIMITED = "rate_limited"
    # The session log is behind (a page outpacing the disk, or a disk refusing): not stored, not acked; send again.
    LOG_FULL = "log_full"
    FORBIDDEN_ORIGIN = "forbidden_origin"
    # A hello naming a session another socket owns (live), or whose owner closed, without its resume secret.
    SESSION_TAKEN = "session_taken"


@dataclass(frozen=True, slots=True)
class Rejection:
    """Why a frame was not accepted. `message` is safe to log: it names a JSON path, never page text."""

    code: str
    message: str


_decoder = msgspec.json.Decoder(AgentFrame)
_encoder = msgspec.json.Encoder()
_path_re = re.compile(r" - at `(\$[^`]*)`$")


# A JSON escape of one UTF-16 surrogate, with the backslashes before it (an odd run means it is an escape).
_SURROGATE_ESCAPE = re.compile(rb"(\\+)u([dD][89abAB][0-9a-fA-F]{2})(?:(\\)u([dD][c-fC-F][0-9a-fA-F]{2}))?|(\\+)u([dD][c-fC-F][0-9a-fA-F]{2})")


def _replace_surrogate(match: re.Match[bytes]) -> bytes:
    if match.group(1) is not None:
        slashes, _high, low = match.group(1), match.group(2), match.group(4)
        if len(slashes) % 2 == 0:  # an escaped backslash followed by the letters "ud83d": plain text
            return match.group(0)
        if low is not None:
            return match.group(0)  # a proper pair
        return slashes[:-1] + b"\\ufffd"
    slashes = match.group(5)
    if len(slashes) % 2 == 0:
        return match.group(0)
    return slashes[:-1] + b"\\ufffd"


_RAW_SURROGATE = re.compile("[\ud800-\udfff]")


def scrub(data: bytes | str) -> bytes:
    """The frame's bytes with every lone surrogate (a title or message cut mid-emoji, JSON-escaped by the
    page's JSON.stringify) replaced by U+FFFD: page text is repaired, never a reason to refuse a frame.
    Raw surrogates (a str from a lenient source) are replaced the same way."""
    if isinstance(data, str):
        data = _RAW_SURROGATE.sub("\ufffd", data).encode("utf-8")
    if b"\\u" not in data:
        return data
    return _SURROGATE_ESCAPE.sub(_replace_surrogate, data)


def decode(data: bytes | str) -> AgentFrame | Rejection:
    """Decode and validate one frame. Never raises on page input."""
    data = scrub(data)
    try:
        frame = _decoder.decode(data)
    except msgspec.ValidationError as exc:
        return _classify(str(exc))
    except msgspec.DecodeError as exc:
        msg = str(exc)
        if "UTF-8" in msg or "utf-8" in msg:
            return Rejection(Code.BAD_UTF8, "frame is not valid UTF-8")
        return Rejection(Code.BAD_JSON, "frame is not a JSON object")
    except (RecursionError, ValueError, UnicodeError):  # pragma: no cover - defensive
        return Rejection(Code.BAD_JSON, "frame could not be decoded")
    if isinstance(frame, Spans) and frame.rows is not None:
        if frame.spans:
            return Rejection(Code.INVALID, "spans: either spans or rows, at $")
        frame.spans = [Span(frame.session, *msgspec.structs.astuple(row)) for row in frame.rows]
        frame.rows = None
    if isinstance(frame, FactsFrame) and not _one_form(frame):
        return Rejection(Code.INVALID, "facts: either seq and facts, or items, at $")
    if isinstance(frame, ToolChange) and len(frame.descriptor) > MAX_DESCRIPTOR_BYTES:
        return Rejection(Code.LIMIT, f"descriptor over {MAX_DESCRIPTOR_BYTES} bytes")
    if isinstance(frame, ToolChange) and nested_deeper_than(bytes(frame.descriptor), MAX_DESCRIPTOR_DEPTH):
        return Rejection(Code.LIMIT, f"descriptor nested over {MAX_DESCRIPTOR_DEPTH} levels")
    return frame


def _one_form(frame: FactsFrame) -> bool:
    single = frame.seq is not None and frame.facts is not None
    return (frame.items is None and single) or (frame.items is not None and frame.seq is None and frame.facts is None)


# What the depth check keeps of a descriptor: brackets, and the quotes that say which brackets are inside strings.
_NOT_STRUCTURE = bytes(b for b in range(256) if b not in b'[]{}"')
_TO_SQUARE = bytes.maketrans(b"{}", b"[]")


@functools.lru_cache(maxsize=8)
def _no_deeper_than(limit: int) -> re.Pattern[bytes]:
    """Brackets balanced and nested at most `limit` deep: a regular language, so one C-speed match. Possessive
    repeats: nothing is retried, so a mismatch costs what a match does."""
    pattern = b""
    for _ in range(limit):
        pattern = rb"(?:\[" + pattern + rb"\])*+"
    return re.compile(pattern)


def nested_deeper_than(raw: bytes, limit: int) -> bool:
    """Do arrays and objects nest deeper than `limit` in this (valid) JSON text? No recursion and no loop in
    Python over the text: a 64 KiB descriptor of brackets costs about 1 ms (tests/bench/test_descriptor_depth.py),
    a Python loop over each bracket cost 2 to 4."""
    if raw.count(b"[") + raw.count(b"{") <= limit:
        return False  # brackets inside strings only make this count larger
    # Escaped backslashes, then escaped quotes, go first: every quote left opens or closes a string. Outside
    # strings JSON has no backslash, so a backslash left inside one (\n, \u…) changes no quote's meaning.
    skeleton = raw.replace(b"\\\\", b"").replace(b'\\"', b"").translate(_TO_SQUARE, _NOT_STRUCTURE)
    skeleton = skeleton.replace(b'""', b"")  # two quotes in a row open and close nothing in between: most strings
    if b'"' in skeleton:
        skeleton = b"".join(skeleton.split(b'"')[::2])  # what lies outside strings
    return _no_deeper_than(limit).fullmatch(skeleton) is None


def _classify(msg: str) -> Rejection:
    match = _path_re.search(msg)
    path = match.group(1) if match else "$"
    head = msg[: match.start()] if match else msg
    if path == "$.type" or "missing required field `type`" in head:
        return Rejection(Code.UNKNOWN_TYPE, f"unknown or missing frame type (one of {', '.join(FRAME_TYPES)})")
    if "length <=" in head:
        if path in ("$.spans", "$.calls", "$.items"):
            return Rejection(Code.TOO_MANY_SPANS, f"at most {MAX_SPANS_PER_FRAME} items a frame ({path})")
        return Rejection(Code.LIMIT, f"{_safe(head)} at {path}")
    return Rejection(Code.INVALID, f"{_safe(head)} at {path}")


def _safe(text: str) -> str:
    # msgspec messages quote offending values for enums/patterns: drop the quoted page text.
    return re.sub(r"'[^']*'", "'…'", text)[:160]


def encode(frame: Struct) -> bytes:
    return _encoder.encode(frame)
