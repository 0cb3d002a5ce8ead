"""The only module of the footprint package that touches files: bounded reads and exclusive writes.

Reads stop one byte past the remaining input budget, so a huge file (or a pipe) is refused without being read
whole. Writes use exclusive creation: an existing report is never overwritten, even one that appears between
the check at start-up and the write (another run racing us).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from relay_bridge.core.limits import LIMITS, Limits
from relay_bridge.lanes.footprint.errors import FootprintError
from relay_bridge.lanes.footprint.inputs import Server, parse_document, parse_json
from relay_bridge.lanes.footprint.live import servers_from_capture


@dataclass(slots=True)
class InputSpec:
    """One `--input` value: an optional explicit server name and a path."""

    name: str | None
    path: str

    @classmethod
    def parse(cls, text: str) -> InputSpec:
        # NAME=PATH when the part before the first "=" holds no path separator; otherwise the whole text is a
        # path (so `./a=b.json` and `dir/x=y.json` still work as plain paths).
        head, sep, tail = text.partition("=")
        if sep and "/" not in head and os.sep not in head:
            if not head:
                raise FootprintError(f"--input {text}: the name before '=' is empty")
            if not tail:
                raise FootprintError(f"--input {text}: no path after '='")
            return cls(head, tail)
        return cls(None, text)

    @property
    def server_name(self) -> str:
        return self.name if self.name is not None else Path(self.path).stem


class Budget:
    """Input bytes left for this invocation (16 MiB by default, summed over all inputs)."""

    def __init__(self, limits: Limits = LIMITS) -> None:
        self.limit = limits.input_bytes
        self.used = 0

    def read_text(self, path: str) -> tuple[str, int]:
        left = self.limit - self.used
        try:
            with open(path, "rb") as fh:
                data = fh.read(left + 1)
        except FileNotFoundError:
            raise FootprintError(f"{path}: no such file") from None
        except IsADirectoryError:
            raise FootprintError(f"{path}: is a directory") from None
        except OSError as exc:
            raise FootprintError(f"{path}: cannot read ({exc.strerror})") from None
        if len(data) > left:
            raise FootprintError(f"{path}: input is over the limit of {self.limit} bytes ({self.limit // (1024 * 1024)} MiB) for one run")
        self.used += len(data)
        try:
            return data.decode("utf-8"), len(data)
        except UnicodeDecodeError as exc:
            raise FootprintError(f"{path}: not UTF-8 (byte {exc.start})") from None


def demo_files() -> list[tuple[str, str]]:
    """(file name, text) of the bundled synthetic snapshots, sorted by name so the demo is the same every run."""
    folder = resources.files(__package__).joinpath("demo")
    entries = sorted((e for e in folder.iterdir() if e.name.endswith(".json")), key=lambda e: e.name)
    return [(e.name, e.read_text(encoding="utf-8")) for e in entries]


def check_writable(paths: list[str]) -> None:
    """Fail before any work when a destination exists, repeats, or has no directory to go into."""
    seen: set[str] = set()
    for path in paths:
        resolved = os.path.abspath(path)
        if resolved in seen:
            raise FootprintError(f"{path}: given for both --html and --json")
        seen.add(resolved)
        if os.path.lexists(path):
            raise FootprintError(f"{path}: already exists; refusing to overwrite it (pick a new name)")
        parent = os.path.dirname(resolved)
        if not os.path.isdir(parent):
            raise FootprintError(f"{path}: directory {parent} does not exist")


def write_new(path: str, text: str) -> None:
    """Create `path` with `text` (UTF-8, LF newlines); refuse if it exists by then. The text goes to a temporary
    file in the same directory, is fsynced, and only then linked into place (link, unlike rename, refuses an
    existing name), so a full disk leaves no torn report behind, nor the temporary file."""
    directory = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=directory)
    except OSError as exc:
        raise FootprintError(f"{path}: cannot write ({exc.strerror})") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(tmp, 0o666 & ~mask)  # mkstemp makes 0600; a report is as readable as a file `open` would make
        os.link(tmp, path)
    except FileExistsError:
        raise FootprintError(f"{path}: already exists; refusing to overwrite it (pick a new name)") from None
    except OSError as exc:
        raise FootprintError(f"{path}: cannot write ({exc.strerror})") from None
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def _input_row(spec_name: str | None, path: str, size: int, servers: list[Server]) -> dict[str, Any]:
    return {
        "name": spec_name,
        "path": path,
        "bytes": size,
        "shape": servers[0].shape if servers else "aggregate",
        "servers": [s.name for s in servers],
    }


def read_inputs(specs: list[InputSpec], limits: Limits = LIMITS) -> tuple[list[Server], list[dict[str, Any]]]:
    """Every `--input` file parsed into servers, and a row per input for the report's `source`."""
    budget = Budget(limits)
    servers: list[Server] = []
    rows = []
    for spec in specs:
        text, size = budget.read_text(spec.path)
        doc = parse_json(text, spec.path, limits)
        found = parse_document(doc, label=spec.path, name=spec.server_name, explicit_name=spec.name is not None, size=size)
        servers.extend(found)
        rows.append(_input_row(spec.name, spec.path, size, found))
    return servers, rows


def read_demo(limits: Limits = LIMITS) -> tuple[list[Server], list[dict[str, Any]]]:
    """The bundled synthetic snapshots, through the same parser as real files."""
    servers: list[Server] = []
    rows = []
    for name, text in demo_files():
        size = len(text.encode("utf-8"))
        label = f"demo/{name}"
        found = parse_document(parse_json(text, label, limits), label=label, name=Path(name).stem, size=size)
        servers.extend(found)
        rows.append(_input_row(None, label, size, found))
    return servers, rows


def read_capture(path: str, limits: Limits = LIMITS) -> tuple[list[Server], list[dict[str, Any]], list[str]]:
    """A `wmcp-top-capture/1` file: its sessions as servers, the input row, and notes on skipped tools."""
    text, size = Budget(limits).read_text(path)
    servers, notes = servers_from_capture(parse_json(text, path, limits), path, limits)
    return servers, [_input_row(None, path, size, servers) | {"shape": "capture"}], notes
