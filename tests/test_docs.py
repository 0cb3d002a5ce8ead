"""The docs say what the code does: docs/protocol.md's tables name exactly the msgspec structs' fields and every
rejection code, every command-line option of every command is documented in the README or docs/ (and every option
documented exists), the README's key table lists every binding, page_agent/README.md names every module and event
kind, and the README stays a user's page."""

from __future__ import annotations

import re
import subprocess
import sys
import typing
from pathlib import Path

import msgspec
import pytest

from relay_bridge.core import protocol

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
PROTOCOL = (ROOT / "docs" / "protocol.md").read_text()
DOC_FILES = sorted([ROOT / "page_agent" / "README.md", *(ROOT / "relay_bridge").glob("**/README.md"), *(ROOT / "docs").glob("*.md")])
DOCS = README + "".join(p.read_text() for p in DOC_FILES)

AGENT_FRAMES = typing.get_args(protocol.AgentFrame)
RELAY_FRAMES = (protocol.Welcome, protocol.Ack, protocol.ErrorFrame, protocol.Command, protocol.Watch)


def _fields(struct: typing.Any) -> set[str]:
    return set(struct.__struct_fields__)


def _table(heading: str) -> dict[str, str]:
    """The `| type | fields |` rows of the protocol table whose header row starts with `heading`."""
    start = PROTOCOL.index(f"| {heading} | fields |")
    rows: dict[str, str] = {}
    for line in PROTOCOL[start:].splitlines()[2:]:
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
    return str(struct.__struct_config__.tag)


@pytest.mark.parametrize(("heading", "structs"), [("agent → relay", AGENT_FRAMES), ("relay → agent", RELAY_FRAMES)])
def test_protocol_tables_name_every_frame_and_every_field(heading: str, structs: tuple[type[msgspec.Struct], ...]) -> None:
    rows = _table(heading)
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
    start = PROTOCOL.index("A **Span** carries exactly")
    para = PROTOCOL[start : PROTOCOL.index("\n\n", start)]
    lists = {w for tok in _tokens(para) if "," in tok for w in re.findall(r"[A-Za-z]+", tok)}  # the field lists
    singles = {tok for tok in _tokens(para) if re.fullmatch(r"[a-z][A-Za-z]+", tok)}  # `waitedMs` (…), values too
    assert lists | singles >= _fields(protocol.Span)
    assert lists <= _fields(protocol.Span), "the README lists a span field the struct does not have"


def test_every_rejection_code_is_listed() -> None:
    codes = {v for k, v in vars(protocol.Code).items() if k.isupper()}
    start = PROTOCOL.index("Codes: ")
    listed = set(_tokens(PROTOCOL[start : PROTOCOL.index("\n\n", start)]))
    assert listed == codes


COMMANDS = ["", "relay", "snippet", "replay", "footprint", "compare", "bench", "attach", "open", "extension", "diagnose", "mcp"]


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_line_option_is_documented(command: str) -> None:
    out = subprocess.run([sys.executable, "-m", "tui.cli", *command.split(), "--help"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    text = re.sub(r"-\n\s*", "-", out.stdout)  # argparse wraps long words at their hyphens
    options = set(re.findall(r"(?<![\w-])(--[a-z][a-z-]*[a-z])", text)) - {
        "--help",
        "--remote-debugging-port",
    }  # Chrome's flag, named in attach's help
    assert options
    missing = {o for o in options if not re.search(re.escape(o) + r"(?![\w-])", DOCS)}
    assert not missing, f"wmcp-top {command}: {sorted(missing)} in --help but in no README or docs/ page"


def test_every_key_binding_is_in_the_readme_key_table() -> None:
    from tui.keys import ACTIONS

    start = README.index("| key | action | key | action |")
    rows = README[start : README.index("\n\n", start)].splitlines()[2:]
    keys = {k for row in rows for i, cell in enumerate(row.strip("|").split(" | ")) if i % 2 == 0 for k in _tokens(cell)}
    names = {"question_mark": "?", "slash": "/", "greater_than_sign": ">", "escape": "esc"}
    missing = {k for a in ACTIONS for k in a.key.split(",") if names.get(k, k) not in keys}
    assert not missing, f"keys bound in tui/keys.py but not in the README's key table: {sorted(missing)}"


def test_every_page_agent_module_is_in_its_layout_table() -> None:
    text = (ROOT / "page_agent" / "README.md").read_text()
    src = ROOT / "page_agent" / "src"
    missing = [m for m in (p.relative_to(src).as_posix() for p in sorted(src.rglob("*.js"))) if f"`src/{m}`" not in text]
    assert not missing, f"page_agent/README.md's layout table lacks {missing}"


def test_every_event_kind_the_agent_sends_is_documented() -> None:
    """page_agent/README.md's frame list names each `event` kind the agent's sources emit."""
    sources = "".join(p.read_text() for p in (ROOT / "page_agent" / "src").rglob("*.js"))
    kinds = set(re.findall(r"\.event\(\s*\"([a-z][a-z-]*)\"", sources))
    assert {"reset", "toolactivated"} <= kinds  # the pattern still finds them
    text = (ROOT / "page_agent" / "README.md").read_text()
    assert not {k for k in kinds if f"`{k}`" not in text}


# Flags the READMEs name that belong to other programs: Chromium's, node's, npm's, build.mjs's, pytest-xdist's.
FOREIGN_FLAGS = {
    "--check",
    "--test",
    "--prefix",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-sync",
    "--load-extension",
    "--disable-background-networking",
    "--disable-component-update",
    "--enable-experimental-web-platform-features",
    "--enable-features",
    "--remote-debugging-port",
    "--user-data-dir",
    "--disable-extensions-except",
    "--dist",
    "--durations",
    "--fix",  # ruff's, in docs/development.md
    # chrome-devtools-mcp's --categoryExperimentalWebmcp and --chromeArg (the pattern stops at a capital), in docs/mcp.md
    "--category",
    "--chrome",
    "--fast",  # scripts/check's, in the README's Development section
}


def test_every_option_the_readmes_name_exists() -> None:
    """The other direction: an option a README names is an option of some wmcp-top command (a renamed or
    removed one fails here)."""
    known: set[str] = set()
    for command in COMMANDS:
        out = subprocess.run([sys.executable, "-m", "tui.cli", *command.split(), "--help"], capture_output=True, text=True, timeout=60)
        known |= set(re.findall(r"(?<![\w-])(--[a-z][a-z-]*[a-z])", re.sub(r"-\n\s*", "-", out.stdout)))
    named = set(re.findall(r"(?<![\w-])(--[a-z][a-z-]*[a-z])", DOCS))
    assert not named - known - FOREIGN_FLAGS


def test_the_readme_is_a_users_page() -> None:
    """The README opens with the user's command and stays readable in five minutes; the rest lives in docs/."""
    lines = README.splitlines()
    assert len(lines) <= 250, f"README.md has {len(lines)} lines"
    first_block = README[README.index("```sh") : README.index("```", README.index("```sh") + 5)]
    assert "pip install . && wmcp-top --demo" in first_block
    assert "./scripts/check" not in first_block, "the test command belongs under Development"
    assert "./scripts/check" in README[README.index("## Development") :]


def test_every_doc_the_readme_links_exists() -> None:
    """A link from the README or a docs/ page to a file of this tree points at a file that exists."""
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for target in re.findall(r"\]\(([^)#:]+?)(?:#[^)]*)?\)", page.read_text()):
            assert (page.parent / target).exists(), f"{page.relative_to(ROOT)} links {target}, which does not exist"


def test_the_architecture_page_names_files_that_exist() -> None:
    """docs/architecture.md walks a span from the page to the views by file name: each one must exist."""
    text = (ROOT / "docs" / "architecture.md").read_text()
    paths = {tok for tok in re.findall(r"`([\w./-]+)`", text) if ("/" in tok and "." in tok.rsplit("/", 1)[-1]) or tok.endswith("/")}
    assert len(paths) >= 20, sorted(paths)
    missing = sorted(p for p in paths if not (ROOT / p).exists())
    assert not missing, f"docs/architecture.md names {missing}"


# Pages for contributors; every other page of docs/ and the README are for users.
CONTRIBUTOR_DOCS = {"architecture.md", "development.md"}
USER_DOCS = [ROOT / "README.md", *(p for p in sorted((ROOT / "docs").glob("*.md")) if p.name not in CONTRIBUTOR_DOCS)]
HISTORY = re.compile(r"(?<!Playwright )\bissues? \d+|\bseed 00\d|\bcommit [0-9a-f]{7}\b|this branch|this work started|\badd_parser\b")


def test_user_docs_hold_no_project_history_or_library_api() -> None:
    """Issue 49: the user's links led into "issue 31/33/35", "(seed 003)", a table "before/after the commit this
    work started from" and the lanes' library API: history goes to CHANGELOG.md, the rest to CONTRIBUTING.md."""
    found = [f"{p.relative_to(ROOT)}: {m.group(0)!r}" for p in USER_DOCS for m in HISTORY.finditer(p.read_text())]
    assert not found, found
    assert not list((ROOT / "relay_bridge" / "lanes").glob("**/README.md")), "the lanes' pages are docs/lanes.md and docs/footprint.md"


def test_contributors_have_a_front_door() -> None:
    contributing = (ROOT / "CONTRIBUTING.md").read_text()
    assert "./scripts/check --fast" in contributing and "./scripts/check\n" in contributing
    assert "## Layout" in contributing and (ROOT / "CHANGELOG.md").read_text().startswith("# Changelog")
    development = README[README.index("## Development") :]
    assert "./scripts/check --fast" in development and "(CONTRIBUTING.md)" in development and "(CHANGELOG.md)" in development
    assert '"${1:-}" = "--fast"' in (ROOT / "scripts" / "check").read_text()


def test_one_page_for_webmcp_profiler_users() -> None:
    assert not (ROOT / "docs" / "webmcp-profiler.md").exists()
    text = (ROOT / "docs" / "coming-from-webmcp-profiler.md").read_text()
    for heading in ("## Switching", "## What behaves as webmcp-profiler's", "## What differs, and why"):
        assert text.count(heading) == 1, heading


def test_the_phase_table_names_every_phase() -> None:
    """Every phase the agent says (page_agent/src/page/status.js) and the relay's own, each once."""
    status = (ROOT / "page_agent" / "src" / "page" / "status.js").read_text()
    table = status[status.index("const PHASES = {") : status.index("\n}\n", status.index("const PHASES = {"))]
    agent = set(re.findall(r'^  "?([a-z-]+)"?: \{', table, re.M))
    assert {"inactive", "no-host", "measuring", "detached"} <= agent
    start = README.index("| phase | means |")
    rows = [line.split(" | ")[0].strip("| `") for line in README[start : README.index("\n\n", start)].splitlines()[2:]]
    assert sorted(rows) == sorted(agent | {"waiting", "live", "disconnected"}), rows


def test_the_privacy_promise_says_what_leaves_by_default_and_how_to_send_less() -> None:
    """Issue 49: "never a tool's input or result" while thrown error messages are sent by default."""
    intro = README[: README.index("## Install")]
    assert "error" in intro and "200 characters" in intro and "errorPolicy" in intro
    assert 'window.__WMCP_CONFIG__ = { errorPolicy: "name" }' in intro and '"none"' in intro and "--error-policy" in intro
    assert "It never sends a body" not in README


def test_wmcp_top_home_is_where_users_look() -> None:
    watch = README[README.index("## Watch your own page") : README.index("## The main screen")]
    assert "WMCP_TOP_HOME=DIR" in watch and "shared machine" in watch


def test_the_own_page_steps_call_a_tool_with_the_tool_object() -> None:
    """executeTool takes a tool from getTools(), not a name (the line itself runs in tests/lanes/test_open.py)."""
    line = readme_execute_line()
    assert "executeTool((await mc.getTools()).find(" in line and 'executeTool("' not in line


def readme_execute_line() -> str:
    """The console line of the README's own-page steps that calls a tool."""
    watch = README[README.index("## Watch your own page") : README.index("## The main screen")]
    return next(tok for tok in _tokens(watch) if "executeTool(" in tok)
