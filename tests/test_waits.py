"""The suite's own rule on waits (tests/liveness.py), checked from the source: a bound on how long a condition may
take to come is the liveness bound, never a number a loaded machine can outlast. Only the tests that run alone
(`serial`, `bench`) bound time by their own numbers; a bound that is part of an attack rather than a wait says so
on its line with `# not a wait:`."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from tests.liveness import LIVENESS_S

ROOT = Path(__file__).resolve().parent.parent
ALONE = {"serial", "bench"}
OPT_OUT = "# not a wait:"
# Keyword bounds in seconds; Playwright's are in milliseconds (a value of 1,000 or more is read as such).
BOUND_KEYWORDS = {"timeout", "open_timeout"}


def _marks(decorators: list[ast.expr]) -> set[str]:
    found = set()
    for d in decorators:
        for node in ast.walk(d):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute) and node.value.attr == "mark":
                found.add(node.attr)
    return found


def _module_marks(tree: ast.Module) -> set[str]:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets):
            return _marks([node.value])
    return set()


def _seconds(node: ast.expr) -> float | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float) and not isinstance(node.value, bool):
        value = float(node.value)
        return value / 1000 if value >= 1000 else value
    return None


def _name(call: ast.Call) -> str:
    f = call.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""


def _bounds(call: ast.Call) -> Iterator[float]:
    for kw in call.keywords:
        if kw.arg in BOUND_KEYWORDS and (s := _seconds(kw.value)) is not None:
            yield s
    # asyncio.wait_for(aw, N), asyncio.timeout(N), a future's .result(N); not relay.wait_for(predicate)
    name = _name(call)
    at = {"wait_for": 1, "timeout": 0, "result": 0}.get(name)
    on_asyncio = isinstance(call.func, ast.Attribute) and getattr(call.func.value, "id", "") == "asyncio"
    if at is not None and len(call.args) > at and (name != "wait_for" or on_asyncio) and (s := _seconds(call.args[at])) is not None:
        yield s


def _defaults(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[float]:
    """A helper's own default bound (`def until(..., timeout=5.0)`) is a wait every caller inherits."""
    a = fn.args
    positional = [*a.posonlyargs, *a.args]
    pairs = [*zip(positional[len(positional) - len(a.defaults) :], a.defaults), *zip(a.kwonlyargs, a.kw_defaults)]
    for arg, default in pairs:
        if arg.arg in BOUND_KEYWORDS and default is not None and (s := _seconds(default)) is not None:
            yield s


def short_waits(path: Path, root: Path = ROOT) -> Iterator[str]:
    source = path.read_text()
    tree = ast.parse(source)
    lines = source.splitlines()
    if _module_marks(tree) & ALONE:
        return
    alone: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and _marks(node.decorator_list) & ALONE:
            alone.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    for node in ast.walk(tree):
        if node.lineno in alone if isinstance(node, ast.Call | ast.FunctionDef | ast.AsyncFunctionDef) else True:
            continue
        assert isinstance(node, ast.Call | ast.FunctionDef | ast.AsyncFunctionDef)
        end = node.end_lineno if isinstance(node, ast.Call) else node.lineno
        if OPT_OUT in "\n".join(lines[node.lineno - 1 : end]):
            continue
        for seconds in _bounds(node) if isinstance(node, ast.Call) else _defaults(node):
            if seconds < LIVENESS_S:
                yield f"{path.relative_to(root)}:{node.lineno}: {seconds:g} s < LIVENESS_S: {lines[node.lineno - 1].strip()}"


def test_every_wait_outside_the_tests_that_run_alone_takes_the_liveness_bound() -> None:
    found = [w for path in sorted((ROOT / "tests").rglob("*.py")) if path.parent.name != "bench" for w in short_waits(path)]
    assert found == [], "\n".join(found)


def test_the_check_finds_a_short_wait_and_spares_the_tests_that_run_alone(tmp_path: Path) -> None:
    probe = tmp_path / "test_probe.py"
    probe.write_text(
        "import asyncio, pytest\n"
        "async def test_a(page):\n"
        "    await asyncio.wait_for(x, 5)\n"
        "    page.wait_for_function('1', timeout=10_000)\n"
        "    relay.wait_for(lambda s: s)\n"
        "    await asyncio.wait_for(x, 5)  # not a wait: the attack's own bound\n"
        "    async with asyncio.timeout(LIVENESS_S):\n"
        "        pass\n"
        "@pytest.mark.serial\n"
        "async def test_b():\n"
        "    await asyncio.wait_for(x, 5)\n"
        "async def until(predicate, timeout=5.0):\n"
        "    pass\n"
    )
    found = sorted(int(w.split(":")[1]) for w in short_waits(probe, tmp_path))
    assert found == [3, 4, 12], found
