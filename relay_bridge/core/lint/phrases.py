"""Text aimed at the model rather than describing the tool. Every phrase is matched on `text.soft` (what a
model reads, whitespace collapsed); the injection phrases also on `text.plain` (underscores, dashes and markup
emphasis read as spaces) and on `text.squeezed` (so spelling one out letter by letter or splitting it with
punctuation does not hide it). Each entry: what it does, in our words, and its pattern. A match says "read this", not "this is
malicious": the patterns can misfire and can be evaded.
"""

from __future__ import annotations

import re


class Phrase:
    """What a phrase does (our words) and its pattern. `needles`: words one of which every match contains; a text
    holding none is not searched (patterns that open with a word boundary are tried at every position, and a
    long description made the slowest of them cost milliseconds)."""

    __slots__ = ("needles", "pattern", "why")

    def __init__(self, why: str, pattern: re.Pattern[str], needles: tuple[str, ...] = ()) -> None:
        self.why, self.pattern, self.needles = why, pattern, needles

    def search(self, text: str) -> re.Match[str] | None:
        if not self.needles:
            return self.pattern.search(text)
        for needle in self.needles:  # a loop, not any(): four strings a definition, a dozen phrases each
            if needle in text:
                return self.pattern.search(text)
        return None


_GAP = r"[^.\n]{0,40}?"  # a few words inside one sentence

# prompt injection: orders that turn the model against its user or its instructions
INJECTION: list[Phrase] = [
    Phrase(
        "tells the model to ignore or override its instructions",
        re.compile(
            rf"\b(?:ignore|disregard|forget|override|bypass|skip)\b{_GAP}\b(?:previous|prior|above|earlier|preceding|all|any|"
            rf"other|system|safety|original|your|existing)\b[^.\n]{{0,30}}?\b(?:instructions?|prompts?|rules|guidelines|"
            rf"directions|directives|messages|context|guardrails|polic(?:y|ies))\b|\bforget\s+(?:everything|all)\b"
        ),
        ("ignore", "disregard", "forget", "override", "bypass", "skip"),
    ),
    Phrase(
        "asks the model to disclose its system prompt or secrets",
        re.compile(
            r"\b(?:reveal|print|show|repeat|output|disclose|leak|dump|expose|display|share|send|tell\s+me|write\s+out)\b"
            r"[^.\n]{0,20}?\b(?:system\s+prompt|system\s+message|initial\s+instructions|hidden\s+instructions|developer\s+"
            r"(?:prompt|message)|(?:your|its|the)\s+instructions|api\s+keys?|access\s+tokens?|credentials|secrets?|passwords?)\b"
        ),
        ("reveal", "print", "show", "repeat", "output", "disclose", "leak", "dump", "expose", "display", "share", "send", "tell me", "write out"),
    ),
    Phrase(
        "asks to keep something from the user",
        re.compile(
            r"\b(?:do\s+not|don'?t|never|must\s+not|should\s+not)\s+(?:tell|inform|mention|reveal|show|notify|alert|disclose|"
            r"warn|ask)\b[^.\n]{0,40}?\b(?:user|human|operator)s?\b|\bwithout\s+(?:telling|informing|notifying|alerting|"
            r"asking|warning)\s+(?:the\s+)?(?:user|human|them)\b|\buser\s+(?:must|should)\s*(?:not|n'?t)\s+(?:know|see|be\s+told|notice)"
        ),
        ("not", "don", "never", "without", "user"),
    ),
    Phrase(
        "poses as a system or assistant message",
        re.compile(
            r"(?:^|[\n.!?>\]]\s*|\s)(?:system|assistant|developer)\s*:\s*(?:you\b|ignore\b|disregard\b|from\s+now|new\s+instructions?)|"
            r"<\s*\|?\s*(?:im[ _]start|im[ _]end|endoftext)\s*\|?\s*>|\bbegin\s+system\s+prompt\b"
        ),
        ("system", "assistant", "developer", "im start", "im_start", "im end", "im_end", "endoftext"),
    ),
    Phrase(
        "tells the model it is now someone else",
        re.compile(r"\byou\s+are\s+now\s+(?:a|an|in|the|no\s+longer|my|dan)\b|\bfrom\s+now\s+on,?\s+you\s+(?:are|will|must)\b"),
        ("you are now", "from now on"),
    ),
]

# The same orders without word boundaries, over letters and digits only. Each opens with one of its needles.
SQUEEZED: list[Phrase] = [
    Phrase(
        "tells the model to ignore or override its instructions",
        re.compile(
            r"(?:ignore|disregard|forget|override|bypass)(?:all|any|the|your|of|my|every)*(?:previous|prior|above|earlier|"
            r"preceding|system|original)(?:instructions?|prompts?|rules|guidelines|directions|messages)"
        ),
        ("ignore", "disregard", "forget", "override", "bypass"),
    ),
    Phrase(
        "asks the model to disclose its system prompt or secrets",
        re.compile(
            r"(?:reveal|print|repeat|disclose|leak|dump|expose)(?:me)?(?:your|the|its|my)?(?:full|entire|hidden|initial|original|"
            r"whole)?(?:systemprompt|systemmessage|initialinstructions|hiddeninstructions|developerprompt)"
        ),
        ("reveal", "print", "repeat", "disclose", "leak", "dump", "expose"),
    ),
    Phrase(
        "asks to keep something from the user",
        re.compile(
            r"(?:donot|dont|never|mustnot)(?:tell|inform|mention|reveal|show|notify|alert|disclose|warn)(?:the|this|that|it|to)*(?:user|human)"
        ),
        ("don", "never", "mustnot"),
    ),
]

_T = r"[`'\"]?"  # an optional quote around a tool name
_IDENT = r"(?:[`'\"][a-z0-9_.\-]+[`'\"]|[a-z0-9]+[_.][a-z0-9_.\-]+)"  # a quoted word or a snake/dotted name

# tool poisoning: instructions about other tools, files and data, hidden in a description
POISONING: list[Phrase] = [
    Phrase(
        "uses a pseudo-tag aimed at the model",
        re.compile(
            r"<\s*/?\s*(?:important|system|instructions?|secret|hidden|admin|assistant|sudo|prompt)\b[^>]{0,40}>|"
            r"\[\s*(?:system|important|instructions?)\s*\]"
        ),
        ("<", "["),
    ),
    Phrase(
        "mentions a credential or config file",
        re.compile(
            r"(?<![\w.])(?:~/|\$home/)?\.ssh\b|\bid_(?:rsa|ed25519|ecdsa|dsa)\b|\.aws/credentials|/etc/(?:passwd|shadow)\b|"
            r"(?<![\w.])\.(?:netrc|npmrc|git-credentials|env)\b|\bmcp\.json\b|\bclaude_desktop_config\.json\b|\.kube/config\b|"
            r"\bwallet\.dat\b"
        ),
        (
            ".ssh",
            "id_",
            "aws/credentials",
            "/etc/",
            ".netrc",
            ".npmrc",
            ".git-credentials",
            ".env",
            "mcp.json",
            "claude_desktop_config",
            "kube/config",
            "wallet.dat",
        ),
    ),
    Phrase(
        "orders the model around tool use",
        re.compile(
            r"\b(?:before|prior\s+to|instead\s+of)\s+(?:using|calling|invoking|running|executing)\s+(?:this|any|the|other|another)"
            r"\s+(?:\w+\s+)?tools?\b"
        ),
        ("before", "prior", "instead"),
    ),
    Phrase(
        "tells the model to call another tool",
        re.compile(
            rf"\b(?:call|invoke|use|run|execute|trigger)\s+(?:the\s+)?{_T}[a-z0-9_.\-]+{_T}\s+tool\b[^.\n]{{0,40}}?"
            rf"\b(?:first|before|after|instead|also|too|as\s+well)\b|\b(?:always|first|must|also|then)\s+(?:call|invoke|run|execute)\s+"
            rf"(?:the\s+)?{_IDENT}"
        ),
        ("call", "invoke", "use", "run", "execute", "trigger"),
    ),
    Phrase(
        "addresses the assistant",
        re.compile(
            r"\byou\s+are\s+(?:an?\s+)?(?:ai|assistant|language\s+model|llm|agent)\b|\bas\s+an\s+ai\b|"
            r"\b(?:the\s+)?(?:assistant|ai|model|llm)\s+(?:must|should|is\s+required\s+to)\b"
        ),
        ("you are", "as an ai", "assistant", "ai ", "model", "llm"),
    ),
    Phrase(
        "asks to pass context or secrets along",
        re.compile(
            r"\b(?:pass|include|put|send|append|add|copy|forward|upload|post)\b[^.\n]{0,40}?\b(?:conversation|chat\s+history|"
            r"previous\s+messages|system\s+prompt|credentials?|api\s*keys?|secrets?|passwords?|private\s+keys?|cookies?|"
            r"session\s+tokens?|contents?\s+of|(?:its|their|the|file)\s+contents?)\b[^.\n]{0,60}?(?:\b(?:parameter|argument|field)\b|https?://)"
        ),
        ("pass", "include", "put", "send", "append", "add", "copy", "forward", "upload", "post"),
    ),
]


def matches(phrases: list[Phrase], text: str) -> dict[str, str]:
    """What each phrase found in `text` does -> the text it matched, in the list's order."""
    out: dict[str, str] = {}
    for phrase in phrases:
        if phrase.why not in out:
            match = phrase.search(text)
            if match:
                out[phrase.why] = match.group(0)
    return out
