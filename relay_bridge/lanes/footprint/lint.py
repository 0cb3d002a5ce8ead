"""Descriptor lint: problems in a tool definition, each with a JSON pointer (RFC 6901) into the definition.

Unlike validation (inputs.py), a finding never refuses the input: it is shown next to the bytes.

Severities: `error` breaks the MCP spec's rules, `warning` makes the tool harder for a model to use well,
`suspicious` looks like it is hiding something or speaking to the model. The last two rules are heuristics:

- hidden-unicode: zero-width and formatting characters (U+200B..U+200F, U+2060..U+2064, U+FEFF, U+00AD,
  U+180E), bidirectional controls (U+202A..U+202E, U+2066..U+2069) and tag characters (U+E0000..U+E007F, which
  can spell invisible ASCII: the decoded text is shown). Any string, keys included.
- model-instruction (tool poisoning): regular expressions over every string value, matched after hidden characters
  are removed and tag text is decoded, for text aimed at the model rather than describing the tool: overriding
  instructions, pseudo-tags such as <IMPORTANT>, hiding things from the user, credential files (~/.ssh, id_rsa,
  .env, mcp.json), orders about what to do before or instead of using tools, orders to call another tool,
  addressing the assistant, and smuggling context or secrets into a parameter. False positives are possible (a
  dotenv tool mentions .env); a finding says "look at this", not "this is malicious".
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from typing import Any

NAME = re.compile(r"[A-Za-z0-9_.\-]{1,128}")

_INVISIBLE = {0x00AD: "soft hyphen", 0x180E: "Mongolian vowel separator", 0xFEFF: "zero-width no-break space"}
_INVISIBLE.update(dict.fromkeys(range(8203, 8208), "zero-width or formatting"))
_INVISIBLE.update(dict.fromkeys(range(8288, 8293), "invisible operator"))
_BIDI = dict.fromkeys([*range(8234, 8239), *range(8294, 8298)], "bidirectional control")
_HIDDEN_RE = re.compile("[\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\U000e0000-\U000e007f]")

_T = r"[`'\"]?"  # an optional quote around a tool name
_IDENT = r"(?:[`'\"][A-Za-z0-9_.\-]+[`'\"]|[A-Za-z0-9]+[_.][A-Za-z0-9_.\-]+)"  # a quoted word or a snake/dotted name
RULES: list[tuple[str, re.Pattern[str]]] = [
    (
        "tells the model to ignore its instructions",
        re.compile(
            r"\b(?:ignore|disregard|forget|override|bypass)\b[^.\n]{0,40}?\b(?:previous|prior|above|earlier|preceding|all|any|"
            r"other|system|safety|original)\b[^.\n]{0,30}?\b(?:instructions?|prompts?|rules|guidelines|directions|messages|context)\b",
            re.I,
        ),
    ),
    (
        "uses a pseudo-tag aimed at the model",
        re.compile(
            r"<\s*/?\s*(?:important|system|instructions?|secret|hidden|admin|assistant|sudo|prompt)\b[^>]{0,40}>|"
            r"\[\s*(?:system|important|instructions?)\s*\]",
            re.I,
        ),
    ),
    (
        "asks to keep something from the user",
        re.compile(
            r"\b(?:do\s+not|don'?t|never|must\s+not)\s+(?:tell|inform|mention|reveal|show|notify|alert|disclose)\b[^.\n]{0,40}?"
            r"\b(?:user|human|operator)s?\b|\bwithout\s+(?:telling|informing|notifying|alerting|asking)\s+(?:the\s+)?(?:user|human)|"
            r"\buser\s+(?:must|should)\s*(?:not|n't)\s+(?:know|see|be\s+told|notice)",
            re.I,
        ),
    ),
    (
        "mentions a credential or config file",
        re.compile(
            r"(?<![\w.])(?:~/|\$HOME/)?\.ssh\b|\bid_(?:rsa|ed25519|ecdsa|dsa)\b|\.aws/credentials|/etc/(?:passwd|shadow)\b|"
            r"(?<![\w.])\.(?:netrc|npmrc|git-credentials|env)\b|\bmcp\.json\b|\bclaude_desktop_config\.json\b|\.kube/config\b|"
            r"\bwallet\.dat\b",
            re.I,
        ),
    ),
    (
        "orders the model around tool use",
        re.compile(
            r"\b(?:before|prior\s+to|instead\s+of)\s+(?:using|calling|invoking|running|executing)\s+(?:this|any|the|other|another)"
            r"\s+(?:\w+\s+)?tools?\b",
            re.I,
        ),
    ),
    (
        "tells the model to call another tool",
        re.compile(
            rf"\b(?:call|invoke|use|run|execute|trigger)\s+(?:the\s+)?{_T}[A-Za-z0-9_.\-]+{_T}\s+tool\b[^.\n]{{0,40}}?"
            rf"\b(?:first|before|after|instead|also|too|as\s+well)\b|\b(?:always|first|must|also|then)\s+(?:call|invoke|run|execute)\s+"
            rf"(?:the\s+)?{_IDENT}",
            re.I,
        ),
    ),
    (
        "addresses the assistant",
        re.compile(
            r"\byou\s+are\s+(?:an?\s+)?(?:ai|assistant|language\s+model|llm|agent)\b|\bas\s+an\s+ai\b|"
            r"\b(?:the\s+)?(?:assistant|ai|model|llm)\s+(?:must|should|is\s+required\s+to)\b",
            re.I,
        ),
    ),
    (
        "asks to pass context or secrets along",
        re.compile(
            r"\b(?:pass|include|put|send|append|add|copy)\b[^.\n]{0,40}?\b(?:conversation|chat\s+history|previous\s+messages|"
            r"system\s+prompt|credentials?|api\s*keys?|secrets?|passwords?|private\s+keys?|contents?\s+of|(?:its|their|the|file)\s+contents?)\b[^.\n]{0,60}?"
            r"(?:\b(?:parameter|argument|field)\b|https?://)",
            re.I,
        ),
    ),
]

_UNTYPED_OK = ("type", "$ref", "enum", "const", "anyOf", "oneOf", "allOf", "not", "$dynamicRef")


def pointer(parts: list[str | int]) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def _strings(value: Any, path: list[str | int]) -> Iterator[tuple[list[str | int], str, bool]]:
    """Every string in `value` as (path, text, is_key). Iterative: nesting is bounded but recursion is not needed."""
    stack: list[tuple[Any, list[str | int]]] = [(value, path)]
    while stack:
        node, at = stack.pop()
        if isinstance(node, str):
            yield at, node, False
        elif isinstance(node, dict):
            for key in reversed(list(node)):
                stack.append((node[key], [*at, key]))
            for key in node:
                yield [*at, key], key, True
        elif isinstance(node, list):
            for i in range(len(node) - 1, -1, -1):
                stack.append((node[i], [*at, i]))


def _describe(cp: int) -> str:
    kind = _BIDI.get(cp) or _INVISIBLE.get(cp) or "tag character"
    try:
        name = unicodedata.name(chr(cp))
    except ValueError:
        name = kind
    return f"U+{cp:04X} {name}"


def hidden_text(text: str) -> str:
    """ASCII spelled by tag characters (U+E0020..U+E007E), which render as nothing."""
    return "".join(chr(ord(c) - 0xE0000) for c in text if 0xE0020 <= ord(c) <= 0xE007E)


def _hidden(at: list[str | int], text: str, is_key: bool) -> dict[str, str] | None:
    found = sorted({ord(c) for c in _HIDDEN_RE.findall(text)})
    if not found:
        return None
    where = "a key" if is_key else "text"
    said = []
    tag = hidden_text(text)
    if tag:  # the smuggled text first: it is what the reader needs to see
        said.append(f"tag characters spell {tag[:80]!r}")
    plain = [cp for cp in found if not 0xE0000 <= cp <= 0xE007F]
    if plain:
        said.append(", ".join(_describe(cp) for cp in plain[:4]) + (f" and {len(plain) - 4} more" if len(plain) > 4 else ""))
    if not said:
        said.append(", ".join(_describe(cp) for cp in found[:4]))
    message = f"{where} holds invisible or bidirectional characters: " + "; ".join(said)
    return {"code": "hidden-unicode", "severity": "suspicious", "pointer": pointer(at), "message": message}


def _instructions(at: list[str | int], text: str) -> list[dict[str, str]]:
    visible = " ".join(_HIDDEN_RE.sub("", text).split())
    tag = hidden_text(text)
    if tag:
        visible += " " + tag  # what is hidden still reaches the model
    out = []
    for why, rule in RULES:
        match = rule.search(visible)
        if match:
            snippet = match.group(0)
            snippet = snippet if len(snippet) <= 80 else snippet[:77] + "..."
            out.append({"code": "model-instruction", "severity": "suspicious", "pointer": pointer(at), "message": f"{why}: {snippet!r}"})
    return out


def _untyped(schema: Any, at: list[str | int]) -> Iterator[dict[str, str]]:
    """Properties (at any depth: nested objects, items, combinators, $defs) that declare no type."""
    stack: list[tuple[Any, list[str | int]]] = [(schema, at)]
    while stack:
        node, here = stack.pop()
        if isinstance(node, list):
            stack.extend((item, [*here, i]) for i, item in reversed(list(enumerate(node))))
            continue
        if not isinstance(node, dict):
            continue
        props = node.get("properties")
        if isinstance(props, dict):
            for name, sub in props.items():
                where = [*here, "properties", name]
                if sub is True or (isinstance(sub, dict) and not any(k in sub for k in _UNTYPED_OK)):
                    yield {
                        "code": "untyped-property",
                        "severity": "warning",
                        "pointer": pointer(where),
                        "message": "property declares no type (nor $ref, enum, const or a combinator)",
                    }
        for key in ("properties", "$defs", "definitions", "patternProperties"):
            if isinstance(node.get(key), dict):
                stack.extend((v, [*here, key, k]) for k, v in reversed(list(node[key].items())))
        for key in ("items", "additionalProperties", "anyOf", "oneOf", "allOf", "prefixItems", "not"):
            if key in node:
                stack.append((node[key], [*here, key]))


def lint_tool(tool: dict[str, Any]) -> list[dict[str, str]]:
    """Findings for one validated tool definition, in a fixed order."""
    out: list[dict[str, str]] = []
    name = tool["name"]
    if not NAME.fullmatch(name):
        why = f"{len(name)} characters" if not 1 <= len(name) <= 128 else "characters outside A-Z a-z 0-9 _ . -"
        out.append(
            {
                "code": "invalid-name",
                "severity": "error",
                "pointer": "/name",
                "message": f"tool names are 1-128 characters of A-Z a-z 0-9 _ . - ({why})",
            }
        )
    if "description" not in tool:
        out.append(
            {
                "code": "missing-description",
                "severity": "warning",
                "pointer": "/description",
                "message": "no description: the model sees only the name",
            }
        )
    elif not tool["description"].strip():
        out.append({"code": "empty-description", "severity": "warning", "pointer": "/description", "message": "the description is empty"})
    schema = tool.get("inputSchema")
    if not isinstance(schema, dict):
        # WebMCP hosts take a tool with no input; MCP clients (and `--strict`) want an object schema.
        shown = "null" if "inputSchema" in tool else "absent"
        out.append(
            {
                "code": "no-input-schema",
                "severity": "warning",
                "pointer": "/inputSchema",
                "message": f"no inputSchema ({shown}): MCP clients require an object schema, even one with no properties",
            }
        )
        schema = {"type": "object"}
    kind = schema.get("type")
    if kind != "object" and not (isinstance(kind, list) and "object" in kind):
        shown = "no type" if kind is None else f"type {kind!r}"
        out.append(
            {
                "code": "schema-not-object",
                "severity": "error",
                "pointer": "/inputSchema/type" if kind is not None else "/inputSchema",
                "message": f'inputSchema must be an object schema (type "object"); it has {shown}',
            }
        )
    out.extend(_untyped(schema, ["inputSchema"]))
    for at, text, is_key in _strings(tool, []):
        finding = _hidden(at, text, is_key)
        if finding:
            out.append(finding)
        if not is_key:
            out.extend(_instructions(at, text))
    return out


def lint_form(form: dict[str, Any]) -> list[dict[str, str]]:
    """Findings for a declarative (form) tool's controls, as the page agent reports them (`form.fields`: element,
    param, described, labeled, required). Pointers name the field: /form/fields/<i>."""
    out: list[dict[str, str]] = []
    fields = form.get("fields") if isinstance(form, dict) else None
    for i, field in enumerate(fields if isinstance(fields, list) else []):
        if not isinstance(field, dict):
            continue
        at = f"/form/fields/{i}"
        element = str(field.get("element") or "a control")[:128]
        param = field.get("param")
        if not param:
            if field.get("required"):
                out.append(
                    {
                        "code": "required-without-name",
                        "severity": "error",
                        "pointer": at,
                        "message": f"{element} is required but has no name: it is no parameter, so an agent cannot fill it "
                        "and the browser refuses every submission",
                    }
                )
            continue
        if not field.get("described"):
            out.append(
                {
                    "code": "missing-param-description",
                    "severity": "warning",
                    "pointer": at,
                    "message": f"parameter {param!r} ({element}) has no toolparamdescription: the model sees only its name",
                }
            )
        if not field.get("labeled"):
            out.append(
                {
                    "code": "unlabeled-input",
                    "severity": "warning",
                    "pointer": at,
                    "message": f"{element} has no label (<label>, aria-label or title): the user confirming the call cannot tell what it is",
                }
            )
    return out
