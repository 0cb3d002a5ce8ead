"""`wmcp-top mcp`: the profile for coding agents, over the Model Context Protocol (docs/mcp.md).

results (pure: a capture in, each tool's answer out), tools (names and schemas), source (the I/O edge: the relay's
view, or a relay of its own), server (the official SDK's wiring) and cli. Only server imports the SDK.
"""
