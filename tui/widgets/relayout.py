"""A Static's new content with a layout pass only when it needs one.

`Static.update` lays the whole screen out again by default, and a widget of `height: auto` whose numbers move
with every batch (the summary line, the status) asked for that pass on every change: under a flood, a repaint
of 60-130 ms that a key waited behind. The widget's own visual says how many rows the content takes at its
width, as the layout would.
"""

from __future__ import annotations

from textual.visual import VisualType
from textual.widgets import Static


def update_rows(widget: Static, content: VisualType, rows: int) -> int:
    """Show `content` in `widget`, whose last content took `rows` rows (0: none drawn yet); returns the rows
    this one takes. Laid out again only when that number changed."""
    width = widget.content_size.width
    if width <= 0:  # not laid out yet: the layout to come measures it
        widget.update(content)
        return 0
    widget.update(content, layout=False)
    height = widget.visual.get_height(widget.styles, width)  # type: ignore[arg-type]  # what Textual passes itself (Widget.get_content_height): its styles read as a RulesMap
    if height != rows:
        widget.refresh(layout=True)
    return height
