"""relay_bridge.relay.heap `refreeze`, in a process of its own (it freezes the whole process's heap, which a test
process shares with every other test): what lives is frozen, so later full collections do not walk it; garbage
made before is collected, not frozen; and an object frozen by one call that later becomes cyclic garbage is
collected by the next call, never held for good."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

CYCLES = textwrap.dedent(
    """
    import gc, json, weakref

    class Node:
        pass

    def cycle():
        a, b = Node(), Node()
        a.other, b.other = b, a
        return a
    """
)

PROBE = CYCLES + textwrap.dedent(
    """
    from relay_bridge.relay.heap import refreeze

    garbage = weakref.ref(cycle())  # unreachable already: a cycle only the collector frees
    kept = cycle()
    held = weakref.ref(kept)
    before = gc.get_freeze_count()
    refreeze()
    frozen = gc.get_freeze_count()
    garbage_gone = garbage() is None
    gc.collect()
    del kept  # frozen, and now cyclic garbage
    gc.collect()
    held_after_collect = held() is not None  # a frozen cycle is not collected by a full collection
    refreeze()
    print(json.dumps({"before": before, "frozen": frozen, "garbage_gone": garbage_gone,
                      "held_after_collect": held_after_collect, "freed_by_next": held() is None}))
    """
)


def test_refreeze_freezes_what_lives_collects_garbage_first_and_lets_go_of_what_it_froze_before() -> None:
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=60, check=True)
    got = json.loads(out.stdout)
    assert got["frozen"] > got["before"], got  # what lives moved to the permanent generation
    assert got["garbage_gone"], "garbage made before the call was frozen with the rest"
    assert got["held_after_collect"], "the probe did not freeze: it proves nothing about the next call"
    assert got["freed_by_next"], "a cycle frozen by one call was held for good past the next"


GROWN = CYCLES + textwrap.dedent(
    """
    from relay_bridge.relay.heap import freeze_grown, refreeze

    refreeze()
    kept = cycle()
    garbage = weakref.ref(cycle())  # unreachable: freeze_grown does not collect, so it is frozen with the rest
    before = gc.get_freeze_count()
    freeze_grown()
    frozen = gc.get_freeze_count() - before
    gc.collect()
    held_by_freeze = garbage() is not None
    refreeze()
    print(json.dumps({"frozen": frozen, "held_by_freeze": held_by_freeze, "freed_by_refreeze": garbage() is None,
                      "kept": kept.other.other is kept}))
    """
)


def test_freeze_grown_freezes_what_lives_without_a_collection_and_the_next_refreeze_lets_its_garbage_go() -> None:
    out = subprocess.run([sys.executable, "-c", GROWN], capture_output=True, text=True, timeout=60, check=True)
    got = json.loads(out.stdout)
    assert got["frozen"] >= 4, got  # the two cycles at least: later full collections do not walk them
    assert got["held_by_freeze"], "freeze_grown collected, or froze nothing: a full collection freed the cycle"
    assert got["freed_by_refreeze"], "garbage frozen as the diagnosis grew was held past the refreeze that ends it"
    assert got["kept"]
