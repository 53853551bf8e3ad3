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
_MIN_KIND_ROWS: Final = 5
"""A column shows which of its values are rare from this many rows on."""
_MIN_CELLS: Final = 3
_KINDS_SHARE: Final = 0.25
"""A column is a column of kinds when it holds at most this share of its rows' count of
distinct values (or three): a status, a class, a channel, a note most rows leave empty."""
_RARE_SHARE: Final = 0.1
"""A value found at most this share as often as the column's most common one (or once)
makes its row stand out: a date among dates spread evenly does not."""
_SPACED: Final = re.compile(r"\s\s+")
_RULE: Final = re.compile(r"^[\s|+:=_-]*$")


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
    table: range = range(0)
    """The indexes of its table's lines (the header's among them)."""


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
        # A rule between the header and the rows ("---|---") is no row: it would stand out
        # in every column.
        rows = [index for index in range(start, end) if not _RULE.match(lines[index])]
        if len(rows) >= _MIN_ROWS:
            found.update(_in_table([split[index][1] for index in rows], rows))
        start = max(end, start + 1)
    return found


def _split(line: str) -> tuple[str, list[str]]:
    """How ``line`` is cut into cells and its cells; no kind when it is not a row."""
    text = line.strip()
    if text.count("|") >= 2:
        kind = "|"
        if text.startswith("|"):
            text = text[1:].removesuffix("|")
        cells = [cell.strip() for cell in text.split("|")]
    elif "\t" in text:
        kind = "\t"
        cells = [cell.strip() for cell in text.split("\t")]
    elif "  " in text:
        kind = "  "
        cells = _SPACED.split(text)
    else:
        return "", []
    return (kind, cells) if len(cells) >= _MIN_CELLS else ("", [])


def _in_table(table: list[list[str]], at: list[int]) -> dict[int, Standout]:
    """The rows of ``table`` (the lines at the indexes ``at``) that stand out, by line
    index."""
    widths = [len(cells) for cells in table]
    width = Counter(widths).most_common(1)[0][0]
    # The rows with the usual cells or more, by place, and their first ``width`` cells: one
    # transpose and one count per column serve the header's test and the rows' (a long table
    # costs a count per column).
    if min(widths) == max(widths) == width:
        places: list[int] | range = range(len(table))
        columns = list(zip(*table, strict=True))
    else:
        places = [row for row in range(len(table)) if widths[row] >= width]
        columns = list(zip(*(table[row][:width] for row in places), strict=True))
    counts = [Counter(cells) for cells in columns]
    first = table[0]
    has_header = widths[0] >= width and _header_like(first, counts, table)
    headers = first if has_header else [""] * width
    top = 1 if has_header else 0
    if has_header:
        places, columns = places[1:], [cells[1:] for cells in columns]
        for column, cell in enumerate(first[:width]):
            counts[column][cell] -= 1
            if not counts[column][cell]:
                del counts[column][cell]
    marks: dict[int, list[str]] = {}
    sameness: dict[int, float] = {}
    for column, cells in enumerate(columns):
        values = counts[column]
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
        for row, cell in zip(places, cells, strict=True):
            if cell in rare:
                marks.setdefault(row, []).append(name)
                sameness[row] = max(sameness.get(row, 0.0), count / total)
    body = widths[top:]
    if max(body) > width:
        usual = body.count(width) / len(body)
        extra = headers[width] if width < len(headers) else ""
        for row in range(top, len(table)):
            if widths[row] > width:
                marks.setdefault(row, []).append(extra)
                sameness[row] = max(sameness.get(row, 0.0), usual)
    header = at[0] if has_header else None
    lines = range(at[0], at[-1] + 1)
    return {
        at[row]: Standout(header, tuple(name for name in names if name), sameness[row], lines)
        for row, names in marks.items()
    }


def _numeric(cell: str) -> bool:
    return any(c.isdigit() for c in cell)


def _header_like(first: list[str], counts: list[Counter[str]], table: list[list[str]]) -> bool:
    """Whether ``first`` (the first of ``table``'s rows; ``counts``: the table's first columns
    counted, it included) names the columns: most of its cells hold no digit ("Deposit (£50)"
    may) and none of them comes again in its column below, as a row's values do."""
    if sum(_numeric(cell) for cell in first) * 2 > len(first):
        return False
    for column, cell in enumerate(first):
        if not cell:
            continue
        if column < len(counts):
            if counts[column][cell] > 1:
                return False
        elif any(column < len(row) and row[column] == cell for row in table[1:]):
            return False  # a cell past the usual ones (few rows have it)
    return True
