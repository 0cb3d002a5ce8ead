"""A mistake on the command line is named in one line, exit 2 (issue 49): the typo itself with the option meant,
an option placed before its command, an unknown command with the one meant; --help shows plain metavars."""

from __future__ import annotations

import argparse
import socket

import pytest

from relay_bridge.cli import DEFAULT_PORT
from tui.cli import build_parser, settle_demo_port

MISTAKES = [
    (["--prot", "7421"], "wmcp-top: unknown option --prot; did you mean --port?"),
    (["--prot=7421", "relay"], "wmcp-top: unknown option --prot; did you mean --port?"),
    (["--theme", "x", "--exprt-dir", "d"], "wmcp-top: unknown option --exprt-dir; did you mean --export-dir?"),
    (["--report", "DIR", "replay", "FILE"], "wmcp-top: --report is an option of `wmcp-top replay`: put it after the command"),
    (["replay", "--repot", "x", "y"], "wmcp-top replay: unknown option --repot; did you mean --report?"),
    (["relay", "--summary-evry", "3"], "wmcp-top relay: unknown option --summary-evry; did you mean --summary-every?"),
    (["bench", "http://x/", "--rnus", "3"], "wmcp-top bench: unknown option --rnus; did you mean --runs?"),
    (["opne", "http://x/"], "wmcp-top: unknown command 'opne'; did you mean open?"),
    (["7421"], "wmcp-top: unknown command '7421'; the commands are relay, snippet, replay"),
    (["--zzz"], "wmcp-top: unknown option --zzz (see wmcp-top --help)"),
    (["snippet", "--port", "0"], "wmcp-top snippet: argument --port: 0 picks a free port when a relay starts"),
]


@pytest.mark.parametrize(("argv", "said"), MISTAKES, ids=[" ".join(a) for a, _ in MISTAKES])
def test_a_mistake_is_named_in_one_line(argv: list[str], said: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as ended:
        build_parser().parse_args(argv)
    err = capsys.readouterr().err
    assert ended.value.code == 2
    assert err.count("\n") == 1 and err.startswith(said), err
    assert "invalid choice" not in err and "unrecognized arguments" not in err


def test_options_before_the_command_still_parse() -> None:
    args = build_parser().parse_args(["--port", "7431", "--no-log", "relay"])
    assert (args.command, args.port, args.no_log) == ("relay", 7431, True)
    args = build_parser().parse_args(["--demo", "--seed=3"])
    assert (args.command, args.demo, args.seed) == (None, True, 3)


def test_help_shows_plain_metavars(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--help"])
    text = capsys.readouterr().out
    assert "TOP:" not in text and "--port PORT" in text and "--theme THEME" in text


def test_snippet_takes_the_port_it_is_given(capsys: pytest.CaptureFixture[str]) -> None:
    args = build_parser().parse_args(["snippet", "--port", "7431"])
    assert args.port == 7431
    assert build_parser().parse_args(["snippet"]).port is None  # the usual port, said in --help


def test_the_demo_takes_any_port_when_the_usual_one_is_taken() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = taken.getsockname()[1]
        demo = argparse.Namespace(command=None, demo=True, port=busy)
        settle_demo_port(demo, usual=busy)
        assert demo.port == 0
        chosen = argparse.Namespace(command=None, demo=True, port=busy)
        settle_demo_port(chosen, usual=DEFAULT_PORT if busy != DEFAULT_PORT else busy + 1)  # another --port: as given
        assert chosen.port == busy
        dashboard = argparse.Namespace(command=None, demo=False, port=busy)
        settle_demo_port(dashboard, usual=busy)  # only the demo: a real dashboard's snippet names its port
        assert dashboard.port == busy
