"""Squarified treemap layout (Bruls, Huizing, van Wijk): areas proportional to values, cells kept near square.

Pure arithmetic on a unit square; the HTML places each cell as an absolutely positioned div in percent, so the
map scales with the window and needs no script. Deterministic: input order is the caller's (largest first).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Cell:
    index: int  # position in the caller's list
    x: float
    y: float
    w: float
    h: float


def _worst(row: list[float], side: float) -> float:
    total = sum(row)
    if total <= 0 or side <= 0:
        return float("inf")
    return max(max(side * side * r / (total * total), (total * total) / (side * side * r)) for r in row)


def squarify(values: list[float], width: float = 100.0, height: float = 100.0) -> list[Cell]:
    """Cells for the positive `values` (others get none), filling width x height."""
    items = [(i, v) for i, v in enumerate(values) if v > 0]
    total = sum(v for _, v in items)
    if not items or total <= 0:
        return []
    scale = width * height / total
    areas = [(i, v * scale) for i, v in items]
    cells: list[Cell] = []
    x, y, w, h = 0.0, 0.0, width, height
    row: list[tuple[int, float]] = []
    while areas:
        side = min(w, h)
        candidate = [*row, areas[0]]
        if not row or _worst([a for _, a in candidate], side) <= _worst([a for _, a in row], side):
            row = candidate
            areas.pop(0)
            continue
        x, y, w, h = _lay(row, x, y, w, h, cells)
        row = []
    if row:
        _lay(row, x, y, w, h, cells)
    return cells


def _lay(row: list[tuple[int, float]], x: float, y: float, w: float, h: float, cells: list[Cell]) -> tuple[float, float, float, float]:
    """Place `row` along the shorter side; return the rectangle left over."""
    total = sum(a for _, a in row)
    if w >= h:  # a column on the left
        col = total / h if h else 0.0
        cy = y
        for i, a in row:
            ch = a / col if col else 0.0
            cells.append(Cell(i, x, cy, col, ch))
            cy += ch
        return x + col, y, w - col, h
    rh = total / w if w else 0.0  # a row on top
    cx = x
    for i, a in row:
        cw = a / rh if rh else 0.0
        cells.append(Cell(i, cx, y, cw, rh))
        cx += cw
    return x, y + rh, w, h - rh
