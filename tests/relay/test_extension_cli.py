"""`wmcp-top extension`: the folder of the unpacked extension, how to load it, and a pairing link that carries the
relay's port and the user's token (from the config file: nothing to type) to the extension's fixed id."""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import unquote

from relay_bridge.relay.extension import extension_id
from tests.relay.test_cli import ROOT, run


def test_extension_prints_folder_loading_and_pairing_link(tmp_path: Path, relay_server) -> None:
    out = run(tmp_path, "extension", "--port", str(relay_server.port))
    assert out.returncode == 0, out.stderr
    token = (tmp_path / "config" / "token").read_text().strip()
    folder = ROOT / "page_agent" / "extension"
    assert f"  {folder}\n" in out.stdout and f"--load-extension={folder}" in out.stdout
    assert "chrome://extensions" in out.stdout and "Load unpacked" in out.stdout
    ext_id = extension_id(json.loads((folder / "manifest.json").read_text()))
    link = re.search(r"chrome-extension://([a-p]{32})/pair\.html#relay=([^&\s]+)&t=([0-9a-f]{32})", out.stdout)
    assert link is not None, out.stdout
    assert link.group(1) == ext_id
    assert unquote(link.group(2)) == f"ws://127.0.0.1:{relay_server.port}/relay"
    assert link.group(3) == token
    assert f"relay on port {relay_server.port}: running" in out.stdout
    # Nothing listens on port 9 (discard): the link is still printed, the relay said to be down.
    down = run(tmp_path, "extension", "--port", "9")
    assert "relay on port 9: not running" in down.stdout and f"t={token}" in down.stdout


def test_a_port_no_relay_can_have_is_refused(tmp_path: Path) -> None:
    """Issue 34: `extension --port 99999` exited 0 with an unusable pairing link."""
    from tests.relay.test_cli import one_line_exit_2

    for port in ("99999", "0", "-1", "x"):
        out = run(tmp_path, "extension", "--port", port)
        assert "port" in one_line_exit_2(out) and "chrome-extension://" not in out.stdout, port
