"""Where ``check --repair`` may put rejected lines: a rejected-lines log, never a session.

The log of session ``X`` is ``X.rejected`` (a file beside a session file, or a name in the same
database). That name is free for anyone to use, so before adding to it the repair checks that
it holds nothing or a log of ours - every chunk opens with a ``# contextree check --repair``
line, and every other line is a ``#`` comment or the rejected line right after a
``# line N: reason`` comment. Anything else (a session someone named ``X.rejected``, any file)
is left alone and the next free name is taken: ``X.rejected-2``, ``X.rejected-3``... Beside a
session file, so is anything that is not a regular file: a symbolic link (dangling or not) is
never followed, a directory never entered. pi lists only ``*.jsonl`` files, so it never shows a
log.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Final

__all__ = ["CHUNK_MARK", "LINE_COMMENT", "candidate_names", "is_rejected_log"]

CHUNK_MARK: Final = b"# contextree check --repair "
"""How every chunk of rejected lines begins (the line names the repair's time and source)."""

LINE_COMMENT: Final = re.compile(rb"# line (\d+): ")
"""The comment before each rejected line."""

_MAX_CANDIDATES: Final = 1000


def is_rejected_log(data: bytes) -> bool:
    """Whether ``data`` is empty or a rejected-lines log written by ``check --repair``."""
    if not data:
        return True
    if not data.startswith(CHUNK_MARK):
        return False
    lines = data.split(b"\n")
    if not data.endswith(b"\n"):
        lines.append(b"")  # a log cut short by a crash of an older version still counts
    position = 0
    while position < len(lines) - 1:
        line = lines[position]
        if LINE_COMMENT.match(line):
            position += 2  # the rejected line itself, whatever it looks like
        elif line.startswith(b"#"):
            position += 1
        else:
            return False
    return True


def candidate_names(base: str) -> Iterator[str]:
    """``base``, ``base-2``, ``base-3``... (at most 1,000)."""
    yield base
    for number in range(2, _MAX_CANDIDATES + 1):
        yield f"{base}-{number}"
