"""wmcp-top's headless core: the loopback relay, the wire protocol, the session store, statistics and exports.

Never imports textual or rich (tests/test_boundaries.py checks), so it runs in CI, in `wmcp-top relay`, and
under any front end.
"""

__version__ = "0.1.0"
