"""Server-side rendering: an SSR framework imports the agent's module form (/agent.mjs, the relay's address baked
in) on its server too, and calls attachProfiler() / maybeAttachProfiler() there. As webmcp-profiler's, each gives
a frozen no-op: nothing patched, no socket dialled, no timer left keeping the server's process alive."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from relay_bridge.relay.assets import agent_script
from tests.liveness import LIVENESS_S

SCRIPT = """
const m = await import(%s);
const out = {};
for (const name of ["attachProfiler", "maybeAttachProfiler"]) {
  const p = m[name]();
  out[name] = { active: p.active, frozen: Object.isFrozen(p), phase: p.status().phase, spans: p.spans().length,
                format: p.report().format, global: "__webmcpPerf" in globalThis };
}
process.stdout.write(JSON.stringify(out));
"""


def test_module_on_a_server_is_a_frozen_no_op_that_lets_the_process_exit(tmp_path: Path) -> None:
    body = agent_script("/agent.mjs", "ws://127.0.0.1:9/relay?t=0123456789abcdef0123456789abcdef")
    assert body is not None, "page_agent/dist/agent.js is missing: run `node page_agent/build.mjs`"
    module = tmp_path / "agent.mjs"
    module.write_bytes(body)
    # An attached agent would poll for a registry (setInterval) and dial the baked relay: node would not exit.
    out = subprocess.run(
        ["node", "--input-type=module", "-e", SCRIPT % json.dumps(module.as_uri())], capture_output=True, text=True, timeout=LIVENESS_S, check=True
    )
    want = {"active": False, "frozen": True, "phase": "inactive", "spans": 0, "format": "webmcp-perf-report/2", "global": False}
    assert json.loads(out.stdout) == {"attachProfiler": want, "maybeAttachProfiler": want}
    assert out.stderr == ""
