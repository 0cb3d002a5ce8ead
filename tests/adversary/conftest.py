"""The adversary suite: each test plays an attacker holding only what every watched page holds (the token in
its script tag) against a real relay on 127.0.0.1, and asserts the promise the relay makes (README, "Trust
boundary"). The relay fixture and the well-behaved client come from the relay suite."""

from tests.relay.conftest import relay  # noqa: F401  (the fixture)
