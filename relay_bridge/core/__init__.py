"""The headless core: the wire protocol, the store, statistics and what they need. Pure logic, no I/O:
every module here takes values and returns values (the relay, the log and the app are the edges)."""
