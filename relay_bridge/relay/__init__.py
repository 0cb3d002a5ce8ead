"""The relay, the core's I/O edge: the loopback server, its token, the session log and its replay, the files it
serves (agent script, snippet, extension) and where it keeps them."""
