"""OpenTelemetry export of every call (`--otlp URL`): GenAI-convention spans over OTLP/HTTP.

`attributes` turns store state into plain span descriptions (pure, no OpenTelemetry import); `exporter` ships
them from a bounded queue on its own thread with the official SDK's OTLP exporter (optional extra
`wmcp-top[otlp]`), so an unreachable collector never slows the relay or the UI: it is shown, and what it
could not take is counted.
"""
