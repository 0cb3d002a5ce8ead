"""The READMEs say what the code does: the wire protocol tables name exactly the msgspec structs' fields, every
rejection code is listed, every command-line option of every command is documented (and every option documented
exists), the key table lists every binding, and page_agent/README.md names every module and event kind."""

from __future__ import annotations

import re
import subprocess
import sys
import typing
from pathlib import Path

import msgspec
import pytest

from relay_bridge import protocol

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
DOCS = README + "".join(p.read_text() for p in sorted([ROOT / "page_agent" / "README.md", *(ROOT / "relay_bridge").glob("*/README.md")]))

AGENT_FRAMES = typing.get_args(protocol.AgentFrame)
RELAY_FRAMES = (protocol.Welcome, protocol.Ack, protocol.ErrorFrame, protocol.Command, protocol.Watch)
# Issue 33's protocol additions are documented in docs/observer-cost.md, in tables headed "… (issue 33)", until
# the README's tables take them in; a frame's row there adds to its README row.
PENDING = (ROOT / "docs" / "observer-cost.md").read_text()


def _fields(struct: type[msgspec.Struct]) -> set[str]:
    return set(struct.__struct_fields__)


def _table(heading: str, text: str = README) -> dict[str, str]:
    """The `| type | fields |` rows of the protocol table whose header row starts with `heading`."""
    start = text.index(f"| {heading} | fields |")
    rows: dict[str, str] = {}
    for line in text[start:].splitlines()[2:]:
        if not line.startswith("|"):
            break
        cells = line.split(" | ", 1)
        rows[cells[0].strip("| `")] = cells[1]
    return rows


def _tokens(cell: str) -> list[str]:
    """The backticked pieces of a table cell (values such as `"wmcp-relay/1"` included)."""
    return re.findall(r"`([^`]+)`", cell)


def _top_names(cell: str) -> set[str]:
    """Names a cell mentions: every backticked token that is a word, optionally with `?` and a nested `{…}` or
    `[…]` part. Values such as `invoke` are names too, so this only answers "is every field mentioned"."""
    names = set()
    for tok in _tokens(cell):
        match = re.match(r"^([a-z][A-Za-z]*)(\?|\[name\])?(?: [\[{].*)?$", tok)
        if match:
            names.add(match.group(1))
    return names


def _nested(cell: str, name: str) -> set[str]:
    """The field names at the first level of `name {a, b?, c [..]}`, `name [{a, b}]` or `name[name] {…}`."""
    match = re.search(rf"(?<![\w.]){name}\??(?:\[name\])? \[?\{{", cell)
    assert match, f"no `{name} {{…}}` in {cell!r}"
    depth, inner = 1, ""
    for ch in cell[match.end() :]:
        if ch in "[{(":
            depth += 1
        elif ch in "]})":
            depth -= 1
        if depth == 0:
            break
        inner += ch if depth == 1 and ch not in "]})" else ""
    return {re.match(r"\s*([a-zA-Z]*)", piece).group(1) for piece in inner.split(",")} - {""}


def _tag(struct: type[msgspec.Struct]) -> str:
    return struct.__struct_config__.tag


@pytest.mark.parametrize(("heading", "structs"), [("agent → relay", AGENT_FRAMES), ("relay → agent", RELAY_FRAMES)])
def test_protocol_tables_name_every_frame_and_every_field(heading: str, structs: tuple[type[msgspec.Struct], ...]) -> None:
    rows = _table(heading)
    for tag, cell in _table(f"{heading} (issue 33)", PENDING).items():
        rows[tag] = rows.get(tag, "") + " " + cell
    assert set(rows) == {_tag(s) for s in structs}, "a frame type is missing from the README table, or one too many"
    for struct in structs:
        cell = rows[_tag(struct)]
        fields = _fields(struct)
        named = _top_names(cell)
        assert fields <= named, f"{_tag(struct)}: README lacks {sorted(fields - named)}"
        optional = {m.group(1) for m in (re.match(r"^([a-z][A-Za-z]*)\?", t) for t in _tokens(cell)) if m}
        assert optional <= fields, f"{_tag(struct)}: README names {sorted(optional - fields)}, which the struct lacks"


def test_nested_objects_in_the_protocol_table_match_their_structs() -> None:
    agent = _table("agent → relay")
    pairs = [
        (agent["hello"], "session", protocol.SessionInfo),
        (agent["hello"], "config", protocol.AgentConfig),
        (agent["start"], "calls", protocol.CallStart),
        (agent["ledger"], "tools", protocol.LedgerTool),
        (agent["tool"], "form", protocol.FormFacts),
        (agent["tool"], "fields", protocol.FormField),
    ]
    for cell, name, struct in pairs:
        assert _nested(cell, name) == _fields(struct), f"`{name} {{…}}` in the README vs {struct.__name__}"


def test_span_fields_in_the_readme_are_the_structs() -> None:
    start = README.index("A **Span** carries exactly")
    para = README[start : README.index("\n\n", start)]
    lists = {w for tok in _tokens(para) if "," in tok for w in re.findall(r"[A-Za-z]+", tok)}  # the field lists
    singles = {tok for tok in _tokens(para) if re.fullmatch(r"[a-z][A-Za-z]+", tok)}  # `waitedMs` (…), values too
    assert lists | singles >= _fields(protocol.Span)
    assert lists <= _fields(protocol.Span), "the README lists a span field the struct does not have"


def test_every_rejection_code_is_listed() -> None:
    codes = {v for k, v in vars(protocol.Code).items() if k.isupper()}
    start = README.index("Codes: ")
    listed = set(_tokens(README[start : README.index("\n\n", start)]))
    assert listed == codes


COMMANDS = ["", "relay", "snippet", "replay", "footprint", "compare", "bench", "attach", "open", "extension"]


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_line_option_is_documented(command: str) -> None:
    out = subprocess.run([sys.executable, "-m", "tui.cli", *command.split(), "--help"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    text = re.sub(r"-\n\s*", "-", out.stdout)  # argparse wraps long words at their hyphens
    options = set(re.findall(r"(?<![\w-])(--[a-z][a-z-]*[a-z])", text)) - {"--help", "--remote-debugging-port"}  # Chrome's flag, named in attach's help
    assert options
    missing = {o for o in options if not re.search(re.escape(o) + r"(?![\w-])", DOCS)}
    assert not missing, f"wmcp-top {command}: {sorted(missing)} in --help but in no README"


def test_every_key_binding_is_in_the_readme_key_table() -> None:
    from tui.keys import ACTIONS

    start = README.index("| key | action | key | action |")
    rows = README[start : README.index("\n\n", start)].splitlines()[2:]
    keys = {k for row in rows for i, cell in enumerate(row.strip("|").split(" | ")) if i % 2 == 0 for k in _tokens(cell)}
    names = {"question_mark": "?", "slash": "/"}
    missing = {a.key for a in ACTIONS if names.get(a.key, a.key) not in keys}
    assert not missing, f"keys bound in tui/keys.py but not in the README's key table: {sorted(missing)}"


def test_every_page_agent_module_is_in_its_layout_table() -> None:
    text = (ROOT / "page_agent" / "README.md").read_text()
    missing = [p.name for p in sorted((ROOT / "page_agent" / "src").glob("*.js")) if f"`src/{p.name}`" not in text]
    assert not missing, f"page_agent/README.md's layout table lacks {missing}"


def test_every_event_kind_the_agent_sends_is_documented() -> None:
    """page_agent/README.md's frame list names each `event` kind the agent's sources emit."""
    sources = "".join(p.read_text() for p in (ROOT / "page_agent" / "src").glob("*.js"))
    kinds = set(re.findall(r"\.event\(\s*\"([a-z][a-z-]*)\"", sources))
    assert {"reset", "toolactivated"} <= kinds  # the pattern still finds them
    text = (ROOT / "page_agent" / "README.md").read_text()
    assert not {k for k in kinds if f"`{k}`" not in text}


# Flags the READMEs name that belong to other programs: Chromium's, node's, npm's, build.mjs's, pytest-xdist's.
FOREIGN_FLAGS = {"--check", "--test", "--prefix", "--no-sandbox", "--disable-gpu", "--disable-sync", "--load-extension",
                 "--disable-background-networking", "--disable-component-update", "--enable-experimental-web-platform-features",
                 "--enable-features", "--remote-debugging-port", "--user-data-dir", "--disable-extensions-except",
                 "--dist"}


def test_every_option_the_readmes_name_exists() -> None:
    """The other direction: an option a README names is an option of some wmcp-top command (a renamed or
    removed one fails here)."""
    known: set[str] = set()
    for command in COMMANDS:
        out = subprocess.run([sys.executable, "-m", "tui.cli", *command.split(), "--help"], capture_output=True, text=True, timeout=60)
        known |= set(re.findall(r"(?<![\w-])(--[a-z][a-z-]*[a-z])", re.sub(r"-\n\s*", "-", out.stdout)))
    named = set(re.findall(r"(?<![\w-])(--[a-z][a-z-]*[a-z])", DOCS))
    assert not named - known - FOREIGN_FLAGS
