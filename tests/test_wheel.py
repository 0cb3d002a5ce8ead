"""An installed wheel, not only the checkout: build it, install it in a fresh venv, run the relay from it."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tarfile
import urllib.request
import zipfile
from pathlib import Path

from tests.liveness import LIVENESS_S

ROOT = Path(__file__).resolve().parent.parent


def test_wheel_in_a_fresh_venv_serves_healthz_and_the_agent(tmp_path: Path) -> None:
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path / "dist"), str(ROOT)], check=True, timeout=300)
    wheel = next((tmp_path / "dist").glob("wmcp_top-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert "relay_bridge/_agent/agent.js" in names
    for ext in ("manifest.json", "agent.js", "bridge.js", "sw.js", "popup.html", "popup.js", "pair.html", "pair.js"):
        assert f"relay_bridge/_extension/{ext}" in names, ext
    for data in (
        "schema/report.v2.json",
        "schema/footprint.v1.json",
        "schema/budget.v1.json",
        "schema/thresholds.v1.json",
        "schema/findings.v1.json",
        "lanes/bench/harness.js",
    ):
        assert f"relay_bridge/{data}" in names, data
    assert any(re.match(r"tui/_themes/.+\.(toml|json)$", n) for n in names)
    venv = tmp_path / "venv"
    # A venv with nothing in it, filled by this venv's pip (`--python`): the wheel and what it declares, no more
    # (ensurepip installing its own pip was 5 s of the 27 this test took, idle).
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    py = venv / "bin" / "python"
    subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install", "-q", str(wheel)], check=True, timeout=600)
    home = tmp_path / "home"
    proc = subprocess.Popen(
        [str(venv / "bin" / "wmcp-top"), "relay", "--port", "0", "--no-log"],
        cwd=tmp_path,
        env={"PATH": f"{venv / 'bin'}:/usr/bin:/bin", "WMCP_TOP_HOME": str(home), "PYTHONUNBUFFERED": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        port = int(re.search(r"127\.0\.0\.1:(\d+)", proc.stdout.readline()).group(1))
        health = json.loads(urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=LIVENESS_S).read())
        assert health["ok"] is True and health["sessions"] == 0
        token = (home / "config" / "token").read_text().strip()
        for path in ("/agent.js", "/agent.mjs"):
            body = urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=LIVENESS_S).read()
            assert f'"ws://127.0.0.1:{port}/relay"'.encode() in body and token.encode() not in body, path
    finally:
        proc.terminate()
        proc.wait(LIVENESS_S)
    # `wmcp-top extension` points into the installed package, and its link carries the token of the config file
    out = subprocess.run(
        [str(venv / "bin" / "wmcp-top"), "extension", "--port", "7420"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={"PATH": f"{venv / 'bin'}:/usr/bin:/bin", "WMCP_TOP_HOME": str(home)},
        check=True,
    )
    folder = Path(re.search(r"is in:\n  (\S+)\n", out.stdout).group(1))
    assert folder.is_relative_to(venv) and (folder / "manifest.json").is_file() and (folder / "sw.js").is_file()
    assert f"&t={token}" in out.stdout
    # the installed package knows nothing of the source tree
    code = "import relay_bridge, tui; print(relay_bridge.__file__, tui.__file__)"
    out = subprocess.run([str(py), "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert str(ROOT) not in out.stdout


def test_the_sdist_carries_the_built_agent_and_installs_without_node(tmp_path: Path) -> None:
    """Issue 47, item 4: the bundles are built when the package is, never committed. The sdist (built here with
    Node) carries them; a wheel built from it on a PATH with no `node` serves them; a clone without Node stops
    with one line saying what it needs."""
    tracked = subprocess.run(["git", "ls-files", "page_agent/dist", "page_agent/extension"], cwd=ROOT, capture_output=True, text=True, check=True)
    assert set(tracked.stdout.split()) == {f"page_agent/extension/{f}" for f in ("manifest.json", "pair.html", "pair.js", "popup.html", "popup.js")}
    subprocess.run([sys.executable, "-m", "build", "--sdist", "-o", str(tmp_path / "sdist"), str(ROOT)], check=True, timeout=300, capture_output=True)
    sdist = next((tmp_path / "sdist").glob("wmcp_top-*.tar.gz"))
    with tarfile.open(sdist) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    built = {
        "page_agent/dist/agent.js",
        "page_agent/dist/open.js",
        "page_agent/extension/agent.js",
        "page_agent/extension/bridge.js",
        "page_agent/extension/sw.js",
    }
    assert built <= names and "hatch_build.py" in names
    assert not [n for n in names if "node_modules" in n]
    # No node anywhere on PATH: only this interpreter (pip runs the build backend with it).
    bare = tmp_path / "bare"
    bare.mkdir()
    (bare / "python").symlink_to(sys.executable)
    env = {"PATH": str(bare), "HOME": str(tmp_path)}
    subprocess.run(
        [str(bare / "python"), "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path / "w"), str(sdist)], check=True, timeout=300, env=env
    )
    wheel = next((tmp_path / "w").glob("wmcp_top-*.whl"))
    with zipfile.ZipFile(wheel) as z:
        served = z.read("relay_bridge/_agent/agent.js")
        assert b"/*@WMCP_UPLINK@*/null" in served and len(z.read("relay_bridge/_extension/sw.js")) > 0
    clone = subprocess.run(
        [str(bare / "python"), "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path / "c"), str(ROOT)],
        timeout=300,
        env=env,
        capture_output=True,
        text=True,
    )
    said = [line.strip() for line in clone.stderr.splitlines() if line.strip().startswith("wmcp-top:")]
    assert clone.returncode != 0 and said == [
        "wmcp-top: building from a clone needs Node 20 or newer to build the page agent (no `node` on PATH); install it, or install a built wheel or sdist, which need no Node"
    ]
