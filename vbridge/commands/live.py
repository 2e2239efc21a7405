"""``vbridge up``'s live view of :func:`vbridge.commands.listing.collect`'s tables. Pure: text in, text out.

:meth:`Live.update` takes the tables of one moment and returns what to print, or ``""`` when
nothing changed:

- on a terminal (``tty``): the whole view, drawn over the previous one (the cursor moves up the
  previous view's height and clears to the end of the screen), so the view stays in place; lines
  are cut to the terminal's ``width`` so that the height counts what the screen shows;
- otherwise (a pipe, a log file): one timestamped line per object that appeared or changed, and
  one per object that went away: ``12:00:03  PodGroup seed/pi: phase Running, minmember 1, ...``,
  never the whole table again.

Under the tables (on a terminal) or once each (otherwise): :func:`listing.hints`, leaving out the
kinds whose operator runs beside us (``operators``).
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
from collections.abc import Sequence

from vbridge.commands import listing, output

__all__ = ["ERASE", "Live", "up"]

ERASE = "\x1b[J"  # clear from the cursor to the end of the screen
_ALL = argparse.Namespace(all_namespaces=True, output=None, no_headers=False)


def up(lines: int) -> str:
    """Move the cursor to the start of the line ``lines`` lines up."""
    return f"\x1b[{lines}F" if lines else ""


@dataclasses.dataclass
class Live:
    tty: bool
    operators: tuple[str, ...] = ()
    width: int = 0  # the terminal's columns: longer lines are cut, so that each takes one line (0: no cut)
    _height: int = 0
    _last_frame: str = ""
    _rows: dict[str, str] = dataclasses.field(default_factory=dict)
    _hinted: set[str] = dataclasses.field(default_factory=set)

    def update(self, tables: Sequence[output.Table], now: datetime.datetime) -> str:
        notes = [h for h in listing.hints(tables) if not any(op in h for op in self.operators)]
        return self._frame(tables, notes) if self.tty else self._lines(tables, notes, now)

    def _frame(self, tables: Sequence[output.Table], notes: list[str]) -> str:
        out, err = output.render(tables, _ALL, None)
        frame = "\n".join(part for part in (out or err, *notes) if part)
        if self.width:
            frame = "\n".join(line[: self.width - 1] for line in frame.split("\n"))
        if frame == self._last_frame:
            return ""
        text = up(self._height) + ERASE + frame
        self._last_frame, self._height = frame, frame.count("\n") + 1
        return text

    def _lines(self, tables: Sequence[output.Table], notes: list[str], now: datetime.datetime) -> str:
        stamp = now.strftime("%H:%M:%S")
        current: dict[str, str] = {}
        for t in tables:
            labels = [c.header.lower() for c in t.columns if not c.wide]
            for obj in t.items:
                cells = output.row(t, obj, _ALL)
                namespace, name, values = cells[0], cells[1], cells[2:]
                fields = ", ".join(f"{k} {v}" for k, v in zip(labels, values, strict=True) if k != "kind")
                current[f"{obj.get('kind')} {namespace}/{name}"] = fields
        lines = [f"{stamp}  {key}: {fields}" for key, fields in current.items() if self._rows.get(key) != fields]
        lines += [f"{stamp}  {key}: gone" for key in self._rows if key not in current]
        lines += [f"{stamp}  {note}" for note in notes if note not in self._hinted]
        self._rows = current
        self._hinted.update(notes)
        return "\n".join(lines)
