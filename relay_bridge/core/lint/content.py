"""Things that should never be in a tool definition: an address made for collecting data, and a credential.

Both are matched on `text.visible` (invisible characters dropped, compatibility forms folded), so a key or a
host split by a zero-width space still matches. Hosts are matched case-insensitively, with the dot also written
as `[.]`, `(.)`, `{.}`, ` dot ` or `%2e`; a finding names the kind of service or key, never the value.
"""

from __future__ import annotations

import re

_DOT = r"(?:\.|\s*[\[({]\s*(?:\.|dot)\s*[\])}]\s*|\s+dot\s+|%2e)"
_HOST_START = r"(?<![a-z0-9-])"


def _host(*labels: str) -> str:
    return _DOT.join(labels)


# (what the service is for, pattern): request catchers and webhook relays, paste and file drops, tunnels that
# expose a machine behind a public name, and out-of-band interaction catchers used to confirm injections.
ENDPOINTS: list[tuple[str, re.Pattern[str]]] = [
    (
        "a request-catching webhook service",
        re.compile(
            _HOST_START
            + "(?:"
            + "|".join(
                [
                    _host("webhook", "site"),
                    _host("webhook", "cool"),
                    _host("requestbin", r"(?:com|net|io|fullcontact\.com)"),
                    _host("pipedream", "net"),
                    _host("requestcatcher", "com"),
                    _host("beeceptor", "com"),
                    _host("hookbin", "com"),
                    _host("postb", "in"),
                    _host("ptsv[23]", "com"),
                    _host("webhook", "office", "com"),
                    _host("hooks", "slack", "com") + r"/services",
                    _host(r"discord(?:app)?", "com") + r"/api/webhooks",
                    _host("api", "telegram", "org") + r"/bot",
                    _host("hooks", "zapier", "com"),
                    _host("ipn", "requestbin"),
                ]
            )
            + ")",
            re.I,
        ),
    ),
    (
        "a paste or file-drop service",
        re.compile(
            _HOST_START
            + "(?:"
            + "|".join(
                [
                    _host("pastebin", r"(?:com|pl)"),
                    _host("hastebin", r"(?:com|skyra\.pw)"),
                    _host("paste", r"(?:ee|rs|gg)"),
                    _host("dpaste", r"(?:com|org)"),
                    _host("ghostbin", r"(?:com|co)"),
                    _host("rentry", r"(?:co|org)"),
                    _host("controlc", "com"),
                    _host("justpaste", "it"),
                    _host("privatebin", r"(?:net|info)"),
                    _host("termbin", "com"),
                    _host("ix", "io"),
                    _host("transfer", "sh"),
                    _host("0x0", "st"),
                    _host("file", "io"),
                    _host("temp", "sh"),
                    _host("bashupload", "com"),
                ]
            )
            + ")",
            re.I,
        ),
    ),
    (
        "a tunnel to a private machine",
        re.compile(
            _HOST_START
            + "(?:"
            + "|".join(
                [
                    _host(r"ngrok(?:-free)?", r"(?:io|app|dev)"),  # any subdomain: the label before is not checked
                    _host("ngrok", "com") + r"/(?!docs)",
                    _host("trycloudflare", "com"),
                    _host("loca", "lt"),
                    _host("localtunnel", "me"),
                    _host("serveo", "net"),
                    _host("localhost", "run"),
                    _host("lhr", r"(?:life|rocks)"),
                    _host("bore", "pub"),
                    _host("pinggy", r"(?:io|link)"),
                    _host("localxpose", "io"),
                    _host("loclx", "io"),
                    _host("playit", "gg"),
                    _host("tunnelmole", "net"),
                    _host("devtunnels", "ms"),
                ]
            )
            + ")",
            re.I,
        ),
    ),
    (
        "an out-of-band interaction catcher",
        re.compile(
            _HOST_START
            + "(?:"
            + "|".join(
                [
                    _host("interact", "sh"),
                    _host("oast", r"(?:fun|live|pro|online|site|me)"),
                    _host("burpcollaborator", "net"),
                    _host("oastify", "com"),
                    _host("dnslog", r"(?:cn|link)"),
                    _host("ceye", "io"),
                    _host("canarytokens", r"(?:com|org)"),
                    _host("requestrepo", "com"),
                ]
            )
            + ")",
            re.I,
        ),
    ),
]

_B = r"(?<![A-Za-z0-9])"  # a key starts at a word's start
_E = r"(?![A-Za-z0-9])"

# (the kind of key, pattern), in the providers' documented formats.
SECRETS: list[tuple[str, re.Pattern[str]]] = [
    ("an AWS access key id", re.compile(_B + r"(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}" + _E)),
    ("a GitHub token", re.compile(_B + r"(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})" + _E)),
    ("an Anthropic API key", re.compile(_B + r"sk-ant-(?:api|admin)?[0-9]{0,2}-?[A-Za-z0-9_\-]{20,}")),
    ("an OpenAI API key", re.compile(_B + r"sk-(?!ant-)(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}(?:T3BlbkFJ[A-Za-z0-9_\-]{20,})?" + _E)),
    ("a Slack token", re.compile(_B + r"xox[abposre]-[0-9A-Za-z\-]{10,}")),
    ("a Slack webhook secret", re.compile(r"hooks\.slack\.com/services/T[0-9A-Z]{8,}/B[0-9A-Z]{8,}/[0-9A-Za-z]{20,}")),
    ("a Google API key", re.compile(_B + r"AIza[0-9A-Za-z_\-]{35}" + _E)),
    ("a Stripe secret key", re.compile(_B + r"(?:sk|rk)_live_[0-9A-Za-z]{20,}" + _E)),
    ("a private key", re.compile(r"-----BEGIN (?:RSA |EC |DSA |OPENSSH |ENCRYPTED |PGP )?PRIVATE KEY(?: BLOCK)?-----")),
]


def endpoint(text: str) -> str | None:
    """What kind of data-collection service `text` names, or None. Every host above has a dot between two labels
    (`_DOT`: a `.`, `dot` in any case, or `%2e`): a text with none is not searched (the four patterns, tried at every
    position, were a seventh of a definition's whole review)."""
    if "." not in text and "%2" not in text and "dot" not in text.lower():
        return None
    for kind, pattern in ENDPOINTS:
        if pattern.search(text):
            return kind
    return None


# Formats whose prefix is a common word part ("sk-"): the body must look random (digits and both cases), so
# "sk-learn-compatible-pipeline" is no key.
_RANDOM_BODY = frozenset(["an OpenAI API key", "an Anthropic API key"])


def _random(body: str) -> bool:
    return any(c.isdigit() for c in body) and any(c.isupper() for c in body) and any(c.islower() for c in body)


# One of these is in every match of SECRETS (each format's literal prefix; the patterns are case-sensitive): a
# text holding none is not searched.
_SECRET_NEEDLES = ("AKIA", "ASIA", "ABIA", "ACCA", "gh", "github_pat_", "sk-", "xox", "hooks.slack.com/services/", "AIza", "k_live_", "-----BEGIN ")


def secret(text: str) -> tuple[str, int] | None:
    """(the kind of key, its length) of the first credential in `text`, or None."""
    if not any(map(text.__contains__, _SECRET_NEEDLES)):
        return None
    for kind, pattern in SECRETS:
        for match in pattern.finditer(text):
            if kind not in _RANDOM_BODY or _random(match.group(0)[3:]):
                return kind, len(match.group(0))
    return None
