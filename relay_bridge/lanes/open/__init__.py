"""`wmcp-top open URL`: Chromium opened on a page with the agent injected, reaching the relay over a binding."""
