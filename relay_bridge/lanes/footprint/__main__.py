"""`python -m relay_bridge.lanes.footprint ...`: the footprint command without the rest of wmcp-top (same parser)."""

from __future__ import annotations

import argparse
import sys
from typing import NoReturn

from relay_bridge.lanes.footprint.cli import add_parser, run


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, like every other wmcp-top error
        self.exit(2, f"wmcp-top: {message}\n")


def main(argv: list[str] | None = None) -> int:
    top = _Parser(prog="python -m relay_bridge.lanes.footprint")
    sub = top.add_subparsers(dest="command", parser_class=_Parser)
    add_parser(sub)
    # Standalone, the subcommand word is optional: `python -m relay_bridge.lanes.footprint --demo` works too.
    args_list = list(sys.argv[1:] if argv is None else argv)
    if not args_list or args_list[0] != "footprint":
        args_list.insert(0, "footprint")
    return run(top.parse_args(args_list))


if __name__ == "__main__":
    sys.exit(main())
