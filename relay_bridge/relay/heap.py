"""What the cycle collector visits: the process's long-lived objects are frozen (moved to the permanent
generation, never visited again), so a full collection walks only what the pages sent since.

Twice in the dashboard: at the entry point, after the imports (modules, classes, functions: ~45,000 objects
counted), and once its first screen is painted (the widget tree, its styles and compiled CSS: ~11,000 more,
counted under the budget flood, docs/limits.md). Without them every full collection walked those too, a
pause of 50-280 ms that the dashboard's keys waited behind. And again (`refreeze`) after the findings view's
diagnosis has taken in a flood's definitions, which it keeps as long as their sessions live; while it takes them
in, `freeze_grown` between its slices.
"""

from __future__ import annotations

import gc


def freeze_startup_heap() -> None:
    """Collect once, then move every live object to the permanent generation. Call from a process's entry
    point (or from what it alone runs), never from a library function: a test process calls those often."""
    gc.collect()
    gc.freeze()


def refreeze() -> None:
    """After a large body of long-lived state was taken in (the findings view keeping a flood's reviewed
    definitions and snapshots). Measured under the flood of issue 48, every full collection walked that state:
    18-42 ms of the loop's CPU every few seconds, which keys and acks waited behind; frozen, 7 ms. The call
    costs one full collection of everything (60-85 ms there). What was frozen before is let go first, so
    an object frozen by one call that later becomes cyclic garbage is collected by the next one, not held
    for good."""
    gc.unfreeze()
    gc.collect()
    gc.freeze()


def freeze_grown() -> None:
    """Move what lives now to the permanent generation without a collection (a constant cost: generations are
    linked lists): between the slices of a diagnosis that is taking in a flood. Measured under the flood of issue
    48, the objects it made meanwhile set off one or two full collections a pass (20-37 ms of the loop each, which
    a press of `f` met); frozen as it goes, they walk none of it. Garbage frozen with the rest is held until the
    `refreeze` that follows the pass (once no key came for a while), which lets everything go first."""
    gc.freeze()
