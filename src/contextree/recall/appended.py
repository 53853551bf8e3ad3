"""What was appended to a session since the index (or a kept scope) last looked at it.

Both remember how many bytes of the session they covered and the id of the last entry then.
The lines after those bytes are read from the end of the session (a lazily opened file decodes
only them). The byte count, not the id, marks where they begin: a line appended with the id of
the last entry (the last line wins) would otherwise pass for that entry.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from contextree.entries.codec import encode_line
from contextree.store.index import BadLine, Record

if TYPE_CHECKING:
    from contextree.session.tree import SessionTree

__all__ = ["lines_since"]


def lines_since(tree: SessionTree, size: int, last_id: str | None) -> list[Record | BadLine] | None:
    """The lines ``tree`` holds after its first ``size`` bytes, in file order; ``None`` when
    those bytes do not end with the entry ``last_id`` (bad lines after it aside): the session
    was rewritten (or torn mid-line) rather than appended to."""
    left = tree.known_size - size
    if left < 0:
        return None
    new: list[Record | BadLine] = []
    for item in tree.lines_newest_first():
        if left == 0:
            if type(item) is Record:
                if item.id != last_id:
                    return None
                break
            continue  # a bad line just before the boundary: not new
        left -= _stored_size(item)
        if left < 0:
            return None
        new.append(item)
    else:
        if left != 0 or last_id is not None:
            return None
    new.reverse()
    return new


def _stored_size(item: Record | BadLine) -> int:
    """The bytes of ``item``'s line with its newline."""
    if isinstance(item, BadLine):
        return len(item.raw) + 1
    raw = item.raw
    return (len(raw) if raw is not None else len(encode_line(item.entry))) + 1
