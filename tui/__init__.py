"""wmcp-top's terminal front end (Textual). Imports relay_bridge; relay_bridge never imports this."""
