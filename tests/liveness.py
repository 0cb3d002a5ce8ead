"""How long a test's wait for a condition gives the machine before failing. A bound on liveness, not a timing: on
two cores under the check's load a starved process took over 10 s to send what a quiet one sends at once (a
rug-pull's timeline entry), so the waits that said 10 s failed a working build. A condition that never comes still
fails, later. Timings are asserted only in the `serial` tests."""

from __future__ import annotations

from typing import Any

from websockets.asyncio import client

LIVENESS_S = 60.0


def connect(uri: str, **options: Any) -> client.connect:
    """websockets' client, its opening handshake given LIVENESS_S instead of its 10 s (a tab-switching test's page
    timed out in its handshake at a load of 20). A test that times the handshake says its own `open_timeout`."""
    options.setdefault("open_timeout", LIVENESS_S)
    return client.connect(uri, **options)
