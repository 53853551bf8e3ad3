"""The rows of a table in a tool result that stand out from the rest.

A search rarely names the value it is after: "which boat has no certificate" meets a table
of 27 entries whose one row says ``MISSING`` where the others say ``ok``, and "who must not
be contacted" meets a sheet whose one row has a note. Those rows hold none of the search's
words; what marks them is that they differ from their column (or carry a cell more than the
other rows). The excerpt shows them after the lines that hold the search's words.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Final

__all__ = ["Standout", "standout_rows"]

_MIN_ROWS: Final = 5
"""A table has at least this many rows (a shorter run of lines is not one)."""
_MIN_KIND_ROWS: Final = 8
"""A column shows which of its values are rare from this many rows on."""
_MIN_CELLS: Final = 3
_KINDS_SHARE: Final = 0.25
"""A column is a column of kinds when it holds at most this share of its rows' count of
distinct values (or three): a status, a class, a channel, a note most rows leave empty."""
_RARE_SHARE: Final = 0.1
"""A value found at most this share as often as the column's most common one (or once)
makes its row stand out: a date among dates spread evenly does not."""
_SPACED: Final = re.compile(r"\s{2,}")


@dataclass(frozen=True)
class Standout:
    """A row that stands out: the header line of its table (``None`` when the table has no
    header row) and the headers of the columns where it differs."""

    header: int | None
    columns: tuple[str, ...]
    sameness: float
    """The share of rows alike where it differs (its most alike column's most common value,
    or the usual count of cells): a single ``MISSING`` among 26 ``ok`` says more than a
    rare club among many."""


def standout_rows(lines: list[str]) -> dict[int, Standout]:
    """The indexes of the ``lines`` that are rows standing out in a table, each with its
    table's header: a table is a run of at least five lines cut into three or more cells
    alike (by ``|``, a tab or runs of spaces); a row stands out by a rare value in a column
    where one value fills most rows, or by a cell more than most rows have."""
    split = [_split(line) for line in lines]
    found: dict[int, Standout] = {}
    start = 0
    while start < len(lines):
        kind = split[start][0]
        end = start
        while end < len(lines) and kind and split[end][0] == kind:
            end += 1
        if end - start >= _MIN_ROWS:
            rows = {index: split[index][1] for index in range(start, end)}
            found.update(_in_table(rows, start))
        start = max(end, start + 1)
    return found


def _split(line: str) -> tuple[str, list[str]]:
    """How ``line`` is cut into cells and its cells; no kind when it is not a row."""
    if line.count("|") >= 2:
        kind = "|"
    elif "\t" in line:
        kind = "\t"
    elif "  " in line.strip():
        kind = "  "
    else:
        return "", []
    cells = _cells(line, kind)
    return (kind, cells) if len(cells) >= _MIN_CELLS else ("", [])


def _cells(line: str, kind: str) -> list[str]:
    text = line.strip()
    if kind == "|":
        if text.startswith("|"):
            text = text[1:].removesuffix("|")
        return [cell.strip() for cell in text.split("|")]
    if kind == "\t":
        return [cell.strip() for cell in text.split("\t")]
    return _SPACED.split(text)


def _in_table(rows: dict[int, list[str]], start: int) -> dict[int, Standout]:
    width = Counter(len(cells) for cells in rows.values()).most_common(1)[0][0]
    first = rows[start]
    # The first line is a header when no cell of it is a number (a row usually has one).
    header_index = start if len(first) >= width and not any(_numeric(c) for c in first) else None
    headers = first if header_index is not None else [""] * width
    body = [index for index in rows if index != header_index]
    marks: dict[int, list[str]] = {}
    sameness: dict[int, float] = {}
    full = [index for index in body if len(rows[index]) >= width]
    # Column by column (one transpose), so a long table costs a count per column.
    for column, cells in enumerate(zip(*(rows[index][:width] for index in full), strict=True)):
        values = Counter(cells)
        total = len(cells)
        if total < _MIN_KIND_ROWS or len(values) > max(3, _KINDS_SHARE * total):
            continue
        common, count = values.most_common(1)[0]
        rare = {
            value
            for value, n in values.items()
            if n <= max(1, _RARE_SHARE * count) and value != common
        }
        if not rare:
            continue
        name = headers[column] if column < len(headers) else ""
        for index, cell in zip(full, cells, strict=True):
            if cell in rare:
                marks.setdefault(index, []).append(name)
                sameness[index] = max(sameness.get(index, 0.0), count / total)
    usual = sum(1 for index in body if len(rows[index]) == width) / len(body)
    for index in body:
        if len(rows[index]) > width:
            extra = headers[width] if width < len(headers) else ""
            marks.setdefault(index, []).append(extra)
            sameness[index] = max(sameness.get(index, 0.0), usual)
    return {
        index: Standout(header_index, tuple(name for name in names if name), sameness[index])
        for index, names in marks.items()
    }


def _numeric(cell: str) -> bool:
    return any(c.isdigit() for c in cell)
