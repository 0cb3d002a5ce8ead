"""Files a hostile local process (or a page's download) can put where `wmcp-top replay` reads (issue 31, item 5):
each ends in one line and exit 2, never a traceback, and a huge line costs memory bounded by the line cap, not
its length. And a dangling symlink in the log directory is no write error of the relay's own file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from relay_bridge.core import synth
from relay_bridge.relay.replay import MAX_LINE_BYTES
from relay_bridge.relay.server import Relay, RelayConfig
from tests.relay.conftest import TOKEN, open_session, send_spans

ROOT = Path(__file__).resolve().parents[2]
CAPTURE = '{"format": "wmcp-top-capture/1", "generatedAt": 1, "sessions": %s}'
HELLO = json.dumps({"t": 1.0, "c": 1, "f": synth.hello("c0ffee00")})

CRAFTED = {
    "deep-capture.json": CAPTURE % ("[" * 200_000 + "]" * 200_000),  # RecursionError in json.loads
    "keyerror-capture.json": CAPTURE % '[{"info": {}}]',  # KeyError: 'id'
    "typeerror-capture.json": CAPTURE % "5",  # TypeError: 'int' object is not iterable
    "spans-capture.json": CAPTURE % '[{"info": {"id": "c0ffee00"}, "report": {"spans": [7]}}]',  # TypeError in dict(7)
    "attr-capture.json": CAPTURE % "[[1]]",  # AttributeError: list has no .get
    "deep-line.jsonl": HELLO
    + "\n"
    + json.dumps({"t": 2.0, "c": 1}).replace("}", ', "f": ' + "[" * 100_000 + "]" * 100_000 + "}")
    + "\n"
    + HELLO
    + "\n",
    "wrong-types.jsonl": HELLO + "\n" + '{"t": "x", "c": 1}\n' + HELLO + "\n",
    "bad-frame.jsonl": HELLO + "\n" + json.dumps({"t": 2.0, "c": 1, "f": {"type": "spans", "session": 5}}) + "\n",
}


def replay(path: Path, out: Path) -> tuple[int, list[str], int]:
    """Run `wmcp-top replay FILE --report DIR` as its own process: exit code, stderr lines, peak RSS in KiB."""
    # VmHWM, the peak of this process's own memory (ru_maxrss would carry the forking parent's over exec).
    code = (
        "import atexit, re, runpy, sys\n"
        "hwm = lambda: re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read()).group(1)\n"
        "atexit.register(lambda: print('maxrss', hwm(), file=sys.stderr))\n"
        f"sys.argv = ['wmcp-top', 'replay', {str(path)!r}, '--report', {str(out)!r}]\n"
        "runpy.run_module('tui.cli', run_name='__main__')\n"
    )
    env = dict(os.environ, WMCP_TOP_HOME=str(out.parent / "home"))
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False)
    lines = done.stderr.splitlines()
    rss = int(lines[-1].split()[1])
    return done.returncode, lines[:-1], rss


@pytest.mark.parametrize("name", sorted(CRAFTED))
def test_a_crafted_file_ends_in_one_line_and_exit_2(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_text(CRAFTED[name])
    code, err, _ = replay(path, tmp_path / "out")
    assert code == 2, err
    assert len(err) == 1 and "Traceback" not in err[0] and err[0].startswith("wmcp-top: "), err
    assert not (tmp_path / "out" / "capture.json").exists()


def test_a_one_gigabyte_line_costs_memory_bounded_by_the_line_cap(tmp_path: Path) -> None:
    path = tmp_path / "session-20261202-000000-1-001.jsonl"
    with path.open("wb") as fh:
        fh.write((HELLO + "\n").encode())
        fh.truncate(1 << 30)  # then a 1 GB line (sparse: it costs the disk nothing)
    code, err, rss = replay(path, tmp_path / "out")
    assert code == 2 and len(err) == 1 and f"over {MAX_LINE_BYTES} bytes" in err[0], err
    print(f"\n1 GB line: peak RSS {rss / 1024:.0f} MiB (the line cap is {MAX_LINE_BYTES / 1048576:.1f} MiB)")
    assert rss < 200 * 1024, "was 6.2 GB when the file was read whole"


async def test_a_dangling_symlink_in_the_log_dir_is_no_write_error(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "session-20200101-000000-1-001.jsonl").symlink_to(tmp_path / "gone.jsonl")
    relay = Relay(RelayConfig(port=0, token=TOKEN, log_dir=logs))
    await relay.start()
    try:
        ws = await open_session(relay, "c0ffee01")
        await send_spans(ws, "c0ffee01", range(3))
        await ws.close()
        log = relay.session_log
        assert log is not None
        log.flush()
        assert log.error is None and log.errors == 0, log.error
        assert log.path is not None and b"c0ffee01" in log.path.read_bytes()
    finally:
        await relay.stop()
