"""The lanes built on the core: each drives or reads the same store from somewhere else (a browser it opens, the
DevTools Protocol, a benchmark, tool catalogs, OpenTelemetry, two reports compared, the demo feed)."""
