"""How long a test's wait for a condition gives the machine before failing. A bound on liveness, not a timing: on
two cores under the check's load a starved process took over 10 s to send what a quiet one sends at once (a
rug-pull's timeline entry), so the waits that said 10 s failed a working build. A condition that never comes still
fails, later. Timings are asserted only in the `serial` tests."""

LIVENESS_S = 60.0
