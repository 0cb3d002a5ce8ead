"""The tools registered in every session of a Store (the TUI's Schemas view) and `--from-capture`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from relay_bridge.core import synth
from relay_bridge.core.store import Store
from relay_bridge.exports.capture import build_capture
from relay_bridge.lanes.footprint import analyze_sessions, catalog_from_store
from tests.frames import frame

from .conftest import run_main, run_sub, validate

A, B = "aaaaaaa1", "bbbbbbb2"
SCHEMA = {"type": "object", "properties": {"q": {"type": "string", "description": "what to look for"}}}


def _store() -> Store:
    store = Store()
    frames = [
        (1, synth.hello(A, "https://shop.example")),
        (1, synth.tool(A, "search", 1.0, description="Search the product catalog by keyword and return matches.", schema=SCHEMA)),
        (1, synth.tool(A, "cart_add", 2.0, description="Add a product to the cart.")),
        (1, synth.tool(A, "gone", 3.0, description="Removed again.")),
        (1, synth.tool(A, "gone", 4.0, change="unregistered")),
        (1, synth.tool(A, "refused", 5.0, description="The host refused it.", rejected="duplicate name")),
        (2, synth.hello(B, "https://shop.example")),
        (2, synth.tool(B, "search", 1.0, description="Search the product catalog by keyword and return matches.", schema=SCHEMA)),
    ]
    for conn, obj in frames:
        if conn not in store.connections:
            store.connect(conn)
        store.apply(conn, frame(obj))
    return store


def test_store_sessions_become_servers_of_registered_tools() -> None:
    servers, notes = catalog_from_store(_store())
    assert [(s.name, sorted(t["name"] for t in s.tools)) for s in servers] == [
        (f"https://shop.example #{A}", ["cart_add", "search"]),
        (f"https://shop.example #{B}", ["search"]),
    ]
    assert notes == []
    report = analyze_sessions(_store())
    validate(report)
    assert report["source"]["kind"] == "store"
    assert report["pairs"]["byLabel"]["exact match"] == 1  # the same tool in two tabs of one origin
    # The descriptor bytes measured are the canonical form of what the page registered.
    row = next(t for t in report["tools"] if t["name"] == "cart_add")
    assert row["bytes"] == len(b'{"description":"Add a product to the cart.","inputSchema":{"type":"object"},"name":"cart_add"}')


def test_unmeasurable_descriptors_become_notes_not_failures() -> None:
    store = _store()
    session = store.sessions[A]
    session.tools["search"].descriptor = b'{"name":"search","inputSchema":[]}'
    session.tools["cart_add"].descriptor = None
    servers, notes = catalog_from_store(store)
    assert [len(s.tools) for s in servers] == [0, 1]
    assert notes == [
        f"https://shop.example #{A}: tool 'search' not measured: inputSchema must be an object",
        f"https://shop.example #{A}: tool 'cart_add' not measured: no descriptor recorded",
    ]
    assert analyze_sessions(store)["notes"] == notes


def test_from_capture(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # A long path (the header cut one over 80 characters, which a test's own temporary path crossed one day).
    (tmp_path / ("captures-" * 20)).mkdir()
    capture = tmp_path / ("captures-" * 20) / "capture.json"
    capture.write_text(json.dumps(build_capture(_store(), generated_at=1.0)), encoding="utf-8")
    out_json = tmp_path / "fp.json"
    code, out, err = run_main(["--from-capture", str(capture), "--json", str(out_json)], capsys)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == f"wmcp-top footprint  capture {capture}"
    assert lines[1] == "2 servers, 3 tool definitions"
    assert lines[4] == "repeated definitions: 1 pair, 1 exact match, 1 similar description"
    report = json.loads(out_json.read_text(encoding="utf-8"))
    validate(report)
    live = analyze_sessions(_store())
    assert report["tools"] == live["tools"] and report["summary"] == live["summary"]  # a capture measures as live
    (tmp_path / "not-capture.json").write_text('{"format": "webmcp-perf-report/2"}')
    code, _, err = run_main(["--from-capture", str(tmp_path / "not-capture.json")], capsys)
    said = err.strip()
    assert code == 2 and said.endswith(
        "is a report (webmcp-perf-report/2), not a wmcp-top capture (format wmcp-top-capture/1): "
        "`wmcp-top compare BASE HEAD` or `wmcp-top diagnose FILE` reads it"
    ), said


def test_footprint_subprocess_demo_and_overwrite_refusal(tmp_path: Path) -> None:
    html = tmp_path / "footprint.html"
    first = run_sub(["--demo", "--html", str(html)])
    assert first.returncode == 0, first.stderr
    assert first.stdout.splitlines()[:5] == [
        "wmcp-top footprint  synthetic snapshots",
        "3 servers, 10 tool definitions",
        "canonical catalog: 3341 bytes",
        "rough token estimate: about 836 (ceil(bytes / 4))",
        "repeated definitions: 3 pairs, 1 exact match, 1 same name with a different definition, 2 similar descriptions",
    ]
    assert first.stdout.splitlines()[-1] == f"wrote {html}"
    before = html.read_bytes()
    again = run_sub(["footprint", "--demo", "--html", str(html)])
    assert again.returncode == 2 and again.stdout == ""
    assert again.stderr == f"wmcp-top: {html}: already exists; refusing to overwrite it (pick a new name)\n"
    assert html.read_bytes() == before
    same = run_sub(["--demo", "--html", str(tmp_path / "x"), "--json", str(tmp_path / "x")])
    assert same.returncode == 2 and "given for both --html and --json" in same.stderr


def test_add_parser_wires_into_another_parser() -> None:
    import argparse

    from relay_bridge.lanes.footprint.cli import add_parser

    top = argparse.ArgumentParser(prog="wmcp-top")
    top.add_argument("--demo", action="store_true")  # the dashboard's own --demo must not collide
    sub = top.add_subparsers(dest="command")
    add_parser(sub)
    args = top.parse_args(["footprint", "--demo", "--input", "a=b.json", "--json", "o.json"])
    assert args.command == "footprint" and args.footprint_demo and args.footprint_inputs == ["a=b.json"]
    assert args.footprint_json == "o.json" and args.footprint_html is None and args.demo is False


def test_reloads_of_one_page_are_one_server(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 34: `--from-capture` counted every reload of one page as another server: 6 loads registering the
    same 5 tools made 75 "exact" pairs. The newest load counts; two tabs open at once still pair."""
    store = Store()
    tools = ["search", "cart_add", "cart_remove", "checkout", "track"]
    for n in range(6):  # load n: a reload ends the one before it
        sid = f"{n:07x}a"
        store.connect(n + 1)
        store.apply(n + 1, frame(synth.hello(sid, "https://shop.example", path="/cart")))
        for i, name in enumerate(tools):
            store.apply(n + 1, frame(synth.tool(sid, name, float(i), description=f"The {name} tool of the shop.")))
        if n < 5:
            store.apply(n + 1, frame({"type": "bye", "session": sid, "reason": "pagehide"}))
    capture = tmp_path / "capture.json"
    capture.write_text(json.dumps(build_capture(store, generated_at=1.0)), encoding="utf-8")
    code, out, err = run_main(["--from-capture", str(capture)], capsys)
    assert code == 0, err
    assert "1 server, 5 tool definitions" in out, out
    assert "exact match" not in out, out
    report = analyze_sessions(store)  # the live Schemas view: the same
    assert report["pairs"]["byLabel"].get("exact match", 0) == 0
    assert "https://shop.example/cart: 5 earlier loads left out (reloaded: the newest counts)" in report["notes"]
    # a second tab of the same page, open at the same time, is still a server of its own
    store.connect(99)
    store.apply(99, frame(synth.hello("fffffff9", "https://shop.example", path="/cart")))
    store.apply(99, frame(synth.tool("fffffff9", "search", 1.0, description="The search tool of the shop.")))
    assert analyze_sessions(store)["pairs"]["byLabel"]["exact match"] == 1
