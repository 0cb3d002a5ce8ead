"""The rule set: every check on a tool definition, each defined once with its severity and source.

Severities, worst first: `high` (shaped like an attack on the model or the user: injection, hidden or
reordered text, code execution, a data drop, a credential, a definition changed after registration), `error`
(breaks the MCP spec), `suspicious` (text that looks aimed at the model or hidden; a heuristic), `warning`
(makes the tool harder to use well or to review). `review` marks the security review's rules (and the spec's
errors): the diagnosis (`wmcp-top diagnose`, the `f` view) lists those; footprint and the `w` view list all.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from relay_bridge.core.lint import content, phrases
from relay_bridge.core.lint.text import hidden, pointer, readings, soft, strings, tag_text, visible, words

SEVERITIES = ("high", "error", "suspicious", "warning")

SEP_986 = "SEP-986: MCP spec 2025-11-25, Tools, tool names"
MCP_SCHEMA = "MCP spec 2025-11-25, Tools, tool definition (inputSchema)"
MCP_SECURITY = "MCP spec 2025-11-25, Tools, security considerations"
CHROME_SECURITY = "Chrome, WebMCP tool security (developer.chrome.com/docs/ai/webmcp/secure-tools)"
CHROME_PRACTICES = "Chrome, WebMCP best practices (developer.chrome.com/docs/ai/webmcp/best-practices)"
CHROME_BUDGETS = "Chrome's WebMCP size budgets, as webmcp-devtools applies them"


@dataclass(frozen=True, slots=True)
class Rule:
    code: str
    severity: str
    source: str
    what: str  # what it finds (docs/diagnosis.md lists it)
    do: str  # the fix, one line, our words
    review: bool = True  # part of the security review (the diagnosis lists it)


@dataclass(frozen=True, slots=True)
class Hit:
    """One finding on one tool. `reason` is our words only; `quote` is the page's text that matched (shown inert
    where descriptors are shown anyway, never in the findings document); `numbers` are counts and sizes."""

    rule: Rule
    pointer: str
    reason: str
    quote: str = ""
    numbers: dict[str, int] = field(default_factory=dict)

    @property
    def code(self) -> str:
        return self.rule.code

    @property
    def severity(self) -> str:
        return self.rule.severity


def _rule(code: str, severity: str, source: str, what: str, do: str, review: bool = True) -> Rule:
    rule = Rule(code, severity, source, what, do, review)
    RULES[code] = rule
    return rule


RULES: dict[str, Rule] = {}
INVALID_NAME = _rule(
    "invalid-name", "error", SEP_986, "a name outside 1-128 characters of A-Z a-z 0-9 _ . -", "rename the tool: 1-128 of A-Z a-z 0-9 _ . -"
)
SCHEMA_NOT_OBJECT = _rule(
    "schema-not-object", "error", MCP_SCHEMA, 'an inputSchema without "type": "object"', 'make inputSchema an object schema ("type": "object")'
)
NO_INPUT_SCHEMA = _rule(
    "no-input-schema",
    "warning",
    MCP_SCHEMA,
    "inputSchema null or absent: a WebMCP host takes it, an MCP client wants an object schema",
    'give the tool an inputSchema ({"type": "object"} when it takes no input)',
    review=False,
)
MISSING_DESCRIPTION = _rule(
    "missing-description", "warning", CHROME_PRACTICES, "no description: the model sees only the name", "describe what the tool does", review=False
)
EMPTY_DESCRIPTION = _rule("empty-description", "warning", CHROME_PRACTICES, "an empty description", "describe what the tool does", review=False)
UNTYPED_PROPERTY = _rule(
    "untyped-property",
    "warning",
    CHROME_PRACTICES,
    "a property (at any depth) with no type, $ref, enum, const or combinator",
    "declare the parameter's type",
    review=False,
)
PROMPT_INJECTION = _rule(
    "prompt-injection",
    "high",
    CHROME_SECURITY,
    "orders to the model: ignore its instructions, disclose its system prompt or secrets, keep things from the user, "
    "a fake system or assistant turn, a new persona; matched after invisible characters, case and separators are "
    "folded away and on the letters alone",
    "remove the instructions to the model: a description says what the tool does",
)
TOOL_POISONING = _rule(
    "tool-poisoning",
    "suspicious",
    MCP_SECURITY,
    "text aimed at the model rather than describing the tool: pseudo-tags such as `<IMPORTANT>`, credential and "
    "config files, orders about other tools, addressing the assistant, passing context or secrets into a parameter",
    "say what the tool does; move anything addressed to the model out of the definition",
)
BIDI_CONTROL = _rule(
    "bidi-control",
    "high",
    CHROME_SECURITY,
    "bidirectional embeddings, overrides and isolates (U+202A..U+202E, U+2066..U+2069): what renders differs from what the model reads",
    "remove the bidirectional control characters",
)
TAG_CHARACTERS = _rule(
    "tag-characters",
    "high",
    CHROME_SECURITY,
    "Unicode tag characters (U+E0000..U+E007F), invisible ASCII the model still reads (outside an emoji flag)",
    "remove the tag characters",
)
HIDDEN_UNICODE = _rule(
    "hidden-unicode",
    "suspicious",
    CHROME_SECURITY,
    "characters that render as nothing: zero-width and format characters, variation selectors out of place, "
    "fillers, soft hyphens (joiners inside emoji or a joining script are writing, not hiding)",
    "remove the invisible characters",
)
ARBITRARY_EXECUTION = _rule(
    "arbitrary-execution",
    "high",
    CHROME_SECURITY,
    "a tool that runs code or commands: a shell/eval/exec name, a description that says so, or a command, script or code parameter",
    "expose named operations, not an interpreter: any injection that reaches this tool runs code",
)
DATA_ENDPOINT = _rule(
    "data-endpoint",
    "high",
    MCP_SECURITY,
    "a data-collection address: webhook catchers (webhook.site, requestbin, pipedream), paste and file drops "
    "(pastebin, transfer.sh), tunnels (ngrok, trycloudflare, localtunnel), out-of-band catchers (interact.sh)",
    "remove the address: nothing in a definition should send data to a drop",
)
HARDCODED_SECRET = _rule(
    "hardcoded-secret",
    "high",
    CHROME_SECURITY,
    "a credential in the definition: AWS (AKIA...), GitHub (ghp_, github_pat_), OpenAI (sk-...), Anthropic "
    "(sk-ant-...), Slack (xox...), Google (AIza...), Stripe, private keys",
    "revoke the key and remove it: every visitor and every model that sees the tool has it",
)
BROAD_PARAMETER = _rule(
    "broad-parameter",
    "warning",
    MCP_SECURITY,
    "a command, code, script, sql, url, path (or similar) string parameter with no enum, format, pattern or maxLength",
    "constrain the parameter (an enum, a format such as uri, a pattern, a maxLength)",
)
READ_ONLY_HINT = _rule(
    "read-only-hint",
    "warning",
    CHROME_SECURITY,
    "a read-sounding name (get, list, read, fetch, search, find, ...) without annotations.readOnlyHint: true",
    "set readOnlyHint: true if it changes nothing, or rename it if it does",
)
UNTRUSTED_CONTENT_HINT = _rule(
    "untrusted-content-hint",
    "warning",
    CHROME_SECURITY,
    "a tool that brings in third-party content (fetches a URL, scrapes, crawls, returns user-generated content) "
    "without annotations.untrustedContentHint: true",
    "set untrustedContentHint: true so the agent treats what it returns as data, not instructions",
)
BUDGET_NAME = _rule("budget-name", "warning", CHROME_BUDGETS, "a tool or parameter name over 30 characters", "shorten the name to 30 characters")
BUDGET_DESCRIPTION = _rule(
    "budget-description",
    "warning",
    CHROME_BUDGETS,
    "a tool description over 500 characters",
    "cut the description to 500 characters: past the budget it may be cut before the agent reads it",
)
BUDGET_PARAM_DESCRIPTION = _rule(
    "budget-param-description",
    "warning",
    CHROME_BUDGETS,
    "a parameter description over 150 characters",
    "cut the parameter description to 150 characters",
)
RUG_PULL = _rule(
    "rug-pull",
    "high",
    MCP_SECURITY,
    "a tool whose description, annotations or inputSchema changed after it was first registered in the session "
    "(a re-registration through a polyfill included): what the user or agent approved is not what runs now",
    "keep a tool's definition fixed for the session; register a new name for new behaviour",
)
REQUIRED_WITHOUT_NAME = _rule(
    "required-without-name",
    "error",
    CHROME_PRACTICES,
    "a required form control with no name: no parameter, so every agent submission is refused",
    "give the control a name",
    review=False,
)
MISSING_PARAM_DESCRIPTION = _rule(
    "missing-param-description",
    "warning",
    CHROME_PRACTICES,
    "a form parameter without toolparamdescription",
    "add a toolparamdescription",
    review=False,
)
UNLABELED_INPUT = _rule(
    "unlabeled-input",
    "warning",
    CHROME_PRACTICES,
    "a form control without a label (`<label>`, aria-label or title)",
    "label the control",
    review=False,
)

NAME = re.compile(r"[A-Za-z0-9_.\-]{1,128}")
NAME_BUDGET, DESCRIPTION_BUDGET, PARAM_DESCRIPTION_BUDGET = 30, 500, 150
_UNTYPED_OK = ("type", "$ref", "enum", "const", "anyOf", "oneOf", "allOf", "not", "$dynamicRef")
_CONSTRAINED = ("enum", "const", "format", "pattern", "maxLength", "anyOf", "oneOf", "allOf", "$ref")

READ_VERBS = frozenset(
    ["get", "list", "read", "fetch", "search", "find", "query", "lookup", "show", "view", "count", "describe", "retrieve", "browse", "check"]
)
_EXEC_WORDS = frozenset(["exec", "eval", "shell", "bash", "powershell", "cmd", "subprocess", "sudo", "repl"])
_EXEC_VERBS = frozenset(["run", "execute", "evaluate", "invoke", "interpret", "do", "spawn", "system"])
_EXEC_OBJECTS = frozenset(["command", "commands", "code", "script", "scripts", "js", "javascript", "python", "sql", "program", "process"])
_EXEC_PARAMS = frozenset(["command", "cmd", "shellcommand", "script", "javascript", "js", "python", "bash", "eval", "exec", "sourcecode", "snippet"])
_EXEC_TEXT = re.compile(
    r"\b(?:run|runs|running|execute[sd]?|executing|eval|evaluate[sd]?|evaluating|interpret[s]?)\s+(?:an?\s+|the\s+|any\s+)?"
    r"(?:arbitrary\s+|any\s+|raw\s+|user[- ]supplied\s+|given\s+)?(?:shell\s+|bash\s+|terminal\s+|system\s+|os\s+|javascript\s+|"
    r"js\s+|python\s+)?(?:commands?|code|scripts?|snippets?|statements?)\b|\b(?:arbitrary|raw)\s+sql\b|\bsql\s+(?:statements?|queries)\s+"
    r"(?:directly|as\s+given|verbatim)|\bshell\s+commands?\b"
)
_EXEC_NEEDLES = ("run", "execut", "eval", "interpret", "sql", "shell")  # every _EXEC_TEXT match holds one
_BROAD_NAMES = frozenset(
    [
        "command",
        "cmd",
        "code",
        "script",
        "sql",
        "url",
        "uri",
        "path",
        "filepath",
        "file",
        "dir",
        "directory",
        "endpoint",
        "host",
        "redirect",
        "callback",
        "webhook",
        "html",
        "template",
        "expression",
        "expr",
        "payload",
        "href",
        "link",
    ]
)
_BROAD_ENDINGS = ("url", "uri", "path", "sql", "command", "script", "endpoint", "webhook")
_FETCH_VERBS = frozenset(["fetch", "get", "load", "read", "open", "download", "browse", "visit", "proxy", "preview", "curl", "wget", "import"])
_WEB_NOUNS = frozenset(["url", "uri", "link", "href", "webpage", "website", "web", "html", "feed", "rss", "remote", "external", "http"])
_UNTRUSTED_TEXT = re.compile(
    r"\b(?:fetch(?:es|ing|ed)?|retriev(?:es?|ing)|download(?:s|ing)?|load(?:s|ing)?|read(?:s|ing)?|open(?:s|ing)?|get(?:s|ting)?)\s+"
    r"(?:the\s+)?(?:content|contents|text|html|body|page)?\s*(?:of\s+|from\s+)?(?:an?\s+|any\s+|the\s+given\s+|arbitrary\s+|a\s+given\s+)"
    r"(?:url|uri|link|web\s?page|website|web\s+site|remote\s+page|external\s+(?:site|page|url))\b|"
    r"\b(?:third[- ]party|user[- ]generated|untrusted|external)\s+(?:content|data|text|pages?|websites?|sites?|sources?)\b|"
    r"\bscrap(?:e|es|ing)\b|\bcrawl(?:s|ing)?\b|\bsearch(?:es)?\s+the\s+(?:web|internet)\b|\bfrom\s+(?:any|arbitrary)\s+(?:url|website|web\s?page)s?\b"
)


def _str(tool: dict[str, Any], key: str) -> str:
    value = tool.get(key)
    return value if isinstance(value, str) else ""


def _dict(tool: dict[str, Any], key: str) -> dict[str, Any]:
    value = tool.get(key)
    return value if isinstance(value, dict) else {}


def _quote(text: str) -> str:
    return text if len(text) <= 80 else text[:77] + "..."


# A property of the input schema: (path, name, subschema), then the rules' two readings of it, worked out once:
# the name's words and whether it is a free string.
Param = tuple[list[str | int], str, Any, tuple[str, ...], bool]
# The keywords `_properties` descends through: a subschema holding none of them (most properties) is a leaf.
_NESTING = frozenset(
    ["properties", "$defs", "definitions", "patternProperties", "items", "additionalProperties", "anyOf", "oneOf", "allOf", "prefixItems", "not"]
)
_UNTYPED_OK_SET, _CONSTRAINED_SET = frozenset(_UNTYPED_OK), frozenset(_CONSTRAINED)


def _properties(schema: Any, at: list[str | int]) -> list[tuple[list[str | int], str, Any]]:
    """(path, name, subschema) of every property at any depth: nested objects, items, combinators, $defs."""
    out: list[tuple[list[str | int], str, Any]] = []
    stack: list[tuple[Any, list[str | int]]] = [(schema, at)]
    while stack:
        node, here = stack.pop()
        if isinstance(node, list):
            stack.extend((item, [*here, i]) for i, item in reversed(list(enumerate(node))))
            continue
        if not isinstance(node, dict) or _NESTING.isdisjoint(node):
            continue
        props = node.get("properties")
        if isinstance(props, dict):
            out.extend(([*here, "properties", name], name, sub) for name, sub in props.items())
        for key in ("properties", "$defs", "definitions", "patternProperties"):
            if isinstance(node.get(key), dict):
                stack.extend((v, [*here, key, k]) for k, v in reversed(list(node[key].items())))
        for key in ("items", "additionalProperties", "anyOf", "oneOf", "allOf", "prefixItems", "not"):
            if key in node:
                stack.append((node[key], [*here, key]))
    return out


def _free_string(sub: Any) -> bool:
    """A string (or untyped) schema with nothing that bounds what it accepts."""
    if sub is True:
        return True
    if not isinstance(sub, dict):
        return False
    kind = sub.get("type")
    stringy = kind is None or kind == "string" or (isinstance(kind, list) and "string" in kind)
    return stringy and _CONSTRAINED_SET.isdisjoint(sub)


def _spec(tool: dict[str, Any], name: str, params: list[Param]) -> list[Hit]:
    out: list[Hit] = []
    if not NAME.fullmatch(name):
        why = f"{len(name)} characters" if not 1 <= len(name) <= 128 else "characters outside A-Z a-z 0-9 _ . -"
        out.append(Hit(INVALID_NAME, "/name", f"tool names are 1-128 characters of A-Z a-z 0-9 _ . - ({why})", numbers={"chars": len(name)}))
    if "description" not in tool:
        out.append(Hit(MISSING_DESCRIPTION, "/description", "no description: the model sees only the name"))
    elif isinstance(tool["description"], str) and not tool["description"].strip():
        out.append(Hit(EMPTY_DESCRIPTION, "/description", "the description is empty"))
    schema = tool.get("inputSchema")
    if not isinstance(schema, dict):
        shown = "null" if "inputSchema" in tool else "absent"
        why = f"no inputSchema ({shown}): MCP clients require an object schema, even one with no properties"
        out.append(Hit(NO_INPUT_SCHEMA, "/inputSchema", why))
        schema = {"type": "object"}
    kind = schema.get("type")
    if kind != "object" and not (isinstance(kind, list) and "object" in kind):
        shown = "no type" if kind is None else f"type {kind!r}"
        where = "/inputSchema/type" if kind is not None else "/inputSchema"
        out.append(Hit(SCHEMA_NOT_OBJECT, where, f'inputSchema must be an object schema (type "object"); it has {shown}'))
    for path, _, sub, _, _ in params:  # the schema's properties (none when it is no object)
        if sub is True or (isinstance(sub, dict) and _UNTYPED_OK_SET.isdisjoint(sub)):
            out.append(Hit(UNTYPED_PROPERTY, pointer(path), "property declares no type (nor $ref, enum, const or a combinator)"))
    return out


# (rule, reason, quote, numbers) of one string, wherever it is: a pointer is added per place.
Found = tuple[tuple[Rule, str, str, dict[str, int]], ...]
_CACHED_CHARS = 512  # strings up to this long are remembered (names, keys, types, most descriptions)


# Keys and values apart, each keyed by the string alone (lru_cache's fast path: no argument tuple to build and
# hash, for the dozen strings of every definition). At most 4,096 values and 1,024 keys of 512 characters: a few MB.
@functools.lru_cache(maxsize=4096)
def _cached_value(text: str) -> Found:
    return _string(text, False)


@functools.lru_cache(maxsize=1024)
def _cached_key(text: str) -> Found:
    return _string(text, True)


def _cached(text: str, is_key: bool) -> Found:
    return _cached_key(text) if is_key else _cached_value(text)


def _string(text: str, is_key: bool) -> Found:
    """The text rules over one string: hidden characters, phrases, addresses, keys."""
    out: list[tuple[Rule, str, str, dict[str, int]]] = []
    if not text.isascii():  # nothing hidden below U+0080 (text.hidden)
        where = "a key" if is_key else "text"
        found = hidden(text)
        if found.bidi:
            codes = ", ".join(f"U+{cp:04X}" for cp in sorted(set(found.bidi)))
            out.append((BIDI_CONTROL, f"{where} holds {len(found.bidi)} bidirectional control character(s): {codes}", "", {"chars": len(found.bidi)}))
        if found.tags:
            why = f"{where} holds {len(found.tags)} tag character(s) spelling hidden ASCII"
            out.append((TAG_CHARACTERS, why, _quote(tag_text(text)), {"chars": len(found.tags)}))
        if found.invisible:
            codes = ", ".join(f"U+{cp:04X}" for cp in sorted(set(found.invisible))[:4])
            out.append((HIDDEN_UNICODE, f"{where} holds {len(found.invisible)} invisible character(s): {codes}", "", {"chars": len(found.invisible)}))
    shown = visible(text)
    softened, plained, squeezed_ = readings(shown)
    # each kind of order once a string, whichever spelling found it first (most text reads the same plain and soft)
    injected = {**phrases.matches(phrases.SQUEEZED, squeezed_), **phrases.matches(phrases.INJECTION, plained)}
    if softened != plained:
        injected.update(phrases.matches(phrases.INJECTION, softened))
    out.extend((PROMPT_INJECTION, why, _quote(quote), {}) for why, quote in sorted(injected.items()))
    out.extend((TOOL_POISONING, why, _quote(quote), {}) for why, quote in phrases.matches(phrases.POISONING, softened).items())
    kind = content.endpoint(shown)
    if kind:
        out.append((DATA_ENDPOINT, f"names {kind}", "", {}))
    key = content.secret(shown)
    if key:
        out.append((HARDCODED_SECRET, f"holds what looks like {key[0]} ({key[1]} characters)", "", {"chars": key[1]}))
    return tuple(out)


def _found(text: str, is_key: bool, long: dict[tuple[str, bool], Found]) -> Found:
    if len(text) <= _CACHED_CHARS:
        return _cached(text, is_key)
    found = long.get((text, is_key))
    if found is None:
        found = long[text, is_key] = _string(text, is_key)
    return found


def _any_text(tool: dict[str, Any], long: dict[tuple[str, bool], Found]) -> bool:
    """Does any string of the definition (keys included) draw a text finding? A walk that builds no paths, in no
    particular order: most definitions draw none, and their strings' paths cost more than reading the strings.
    `long` keeps the verdicts on strings too long for the cache, so the walk with paths after a hit does not work
    them out again."""
    stack: list[dict[str, Any] | list[Any]] = [tool]  # containers only: a string is read where it is met
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for key in node:
                if _cached_key(key) if len(key) <= _CACHED_CHARS else _found(key, True, long):
                    return True
            values: Iterable[Any] = node.values()
        else:
            values = node
        for value in values:
            if isinstance(value, str):
                if _cached_value(value) if len(value) <= _CACHED_CHARS else _found(value, False, long):
                    return True
            elif isinstance(value, (dict, list)):
                stack.append(value)
    return False


def _text(tool: dict[str, Any]) -> list[Hit]:
    """Hidden characters, phrases, addresses and keys, in every string of the definition (keys included). A
    string's verdict does not depend on where it is, so short ones are remembered across definitions."""
    long: dict[tuple[str, bool], Found] = {}
    if not _any_text(tool, long):
        return []
    out: list[Hit] = []
    for path, text, is_key in strings(tool, []):
        found = _found(text, is_key, long)
        if found:
            at = pointer(path)
            out.extend(Hit(rule, at, why, quote, dict(numbers)) for rule, why, quote, numbers in found)
    return out


def _execution(name_words: tuple[str, ...], reading: str, params: list[Param]) -> list[Hit]:
    out: list[Hit] = []
    ws = name_words
    runs = not _EXEC_WORDS.isdisjoint(ws) or any(a in _EXEC_VERBS and b in _EXEC_OBJECTS for a, b in itertools.pairwise(ws))
    if runs:
        out.append(Hit(ARBITRARY_EXECUTION, "/name", "the name says it runs code or commands"))
    said = any(n in reading for n in _EXEC_NEEDLES) and bool(_EXEC_TEXT.search(reading))
    if said and not runs:
        out.append(Hit(ARBITRARY_EXECUTION, "/description", "the description says it runs code or commands"))
    for path, _, _, pws, free in params:
        if not free:
            continue
        key = "".join(pws)
        if key in _EXEC_PARAMS or (key == "code" and (runs or said)):
            out.append(Hit(ARBITRARY_EXECUTION, pointer(path), "a free-text parameter takes code or a command"))
    return out


def _parameters(params: list[Param], taken: set[str]) -> list[Hit]:
    out: list[Hit] = []
    for path, pname, sub, ws, free in params:
        at = ""  # the pointer, worked out only for a hit (every property's path is non-empty)
        if free and ("".join(ws) in _BROAD_NAMES or (ws and ws[-1] in _BROAD_ENDINGS)):
            at = pointer(path)
            if at not in taken:
                out.append(
                    Hit(BROAD_PARAMETER, at, "a free-text parameter of a kind that carries payloads, with no enum, format, pattern or maxLength")
                )
        if len(pname) > NAME_BUDGET:
            at = at or pointer(path)
            out.append(
                Hit(
                    BUDGET_NAME,
                    at,
                    f"the parameter name is {len(pname)} characters (budget {NAME_BUDGET})",
                    numbers={"chars": len(pname), "budget": NAME_BUDGET},
                )
            )
        said = sub.get("description") if isinstance(sub, dict) else None
        if isinstance(said, str) and len(said) > PARAM_DESCRIPTION_BUDGET:
            at = at or pointer(path)
            out.append(
                Hit(
                    BUDGET_PARAM_DESCRIPTION,
                    at + "/description",
                    f"the parameter description is {len(said)} characters (budget {PARAM_DESCRIPTION_BUDGET})",
                    numbers={"chars": len(said), "budget": PARAM_DESCRIPTION_BUDGET},
                )
            )
    return out


_SCRAPES = frozenset(["scrape", "scraper", "crawl", "crawler"])
_WEB_ENDINGS = frozenset(["url", "uri", "link", "href"])


def _hints(tool: dict[str, Any], name_words: tuple[str, ...], reading: str, params: list[Param]) -> list[Hit]:
    out: list[Hit] = []
    annotations = _dict(tool, "annotations")
    ws = name_words
    if ws and ws[0] in READ_VERBS and annotations.get("readOnlyHint") is not True:
        out.append(Hit(READ_ONLY_HINT, "/annotations/readOnlyHint", f"the name reads as a lookup ({ws[0]}) but readOnlyHint is not true"))
    fetches = (
        (not _FETCH_VERBS.isdisjoint(ws) and (not _WEB_NOUNS.isdisjoint(ws) or any(p[3] and p[3][-1] in _WEB_ENDINGS for p in params)))
        or not _SCRAPES.isdisjoint(ws)
        or bool(reading and _UNTRUSTED_TEXT.search(reading))
    )
    if fetches and annotations.get("untrustedContentHint") is not True:
        out.append(
            Hit(UNTRUSTED_CONTENT_HINT, "/annotations/untrustedContentHint", "it brings in third-party content but untrustedContentHint is not true")
        )
    return out


def _budgets(tool: dict[str, Any]) -> list[Hit]:
    out: list[Hit] = []
    name = _str(tool, "name")
    if len(name) > NAME_BUDGET:
        out.append(
            Hit(
                BUDGET_NAME,
                "/name",
                f"the name is {len(name)} characters (budget {NAME_BUDGET})",
                numbers={"chars": len(name), "budget": NAME_BUDGET},
            )
        )
    description = tool.get("description")
    if isinstance(description, str) and len(description) > DESCRIPTION_BUDGET:
        out.append(
            Hit(
                BUDGET_DESCRIPTION,
                "/description",
                f"the description is {len(description)} characters (budget {DESCRIPTION_BUDGET})",
                numbers={"chars": len(description), "budget": DESCRIPTION_BUDGET},
            )
        )
    return out


def lint_descriptor(tool: dict[str, Any]) -> list[Hit]:
    """Every finding of one tool definition (a dict with a string `name`), in a fixed order: spec, text, code
    execution, parameters, hints, budgets; inside each, document order."""
    schema = tool.get("inputSchema")
    params = (
        [(path, pname, sub, words(pname), _free_string(sub)) for path, pname, sub in _properties(schema, ["inputSchema"])]
        if isinstance(schema, dict)
        else []
    )
    name = _str(tool, "name")
    name_words = words(name)
    description = tool.get("description")
    reading = soft(visible(description)) if isinstance(description, str) else ""  # what the execution and fetch wordings read
    executes = _execution(name_words, reading, params)
    taken = {h.pointer for h in executes}
    return [
        *_spec(tool, name, params),
        *_text(tool),
        *executes,
        *_parameters(params, taken),
        *_hints(tool, name_words, reading, params),
        *_budgets(tool),
    ]
