"""`wmcp-top` (the installed command) and `python -m tui`: the entry point, kept to the standard library.

Importing the program takes a few tenths of a second (msgspec, websockets, the lanes; Textual for the dashboard).
A Ctrl-C then raised KeyboardInterrupt inside some module's import: a traceback of import machinery, and once
in a few tries a crash of the half-initialised extension module on the way out. Nothing is open or written yet
during those imports, so a Ctrl-C there ends the process at once with the shell's code for it; tui.cli puts
Python's usual handling back when the command starts (`starting_done`).
"""

from __future__ import annotations

import os
import signal
import sys


def _stop_at_once(signum: int, frame: object) -> None:
    os._exit(130)


def main() -> int:
    signal.signal(signal.SIGINT, _stop_at_once)
    from tui.cli import main as run

    return run()


if __name__ == "__main__":
    sys.exit(main())
