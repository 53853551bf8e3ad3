"""Which files a conversation read and changed, and the tags that list them in a summary.

Files are tracked from the assistant's ``read``, ``write`` and ``edit`` tool calls
(pi-behaviour.md §8) and carried from one summary to the next through the entry's
``details`` (``{readFiles, modifiedFiles}``). The tags appended to a summary follow DESIGN
decision 5: one file per line, the two blocks separated by a blank line, old tags replaced
rather than duplicated, and at most 20 names per block.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Final

from contextree.entries.types import StoredMessage, is_assistant_message, is_tool_call_content

__all__ = [
    "MAX_LISTED_FILES",
    "FileOps",
    "compute_file_lists",
    "extract_file_ops_from_message",
    "parse_files_tag",
    "seed_from_details",
    "upsert_file_tags",
]

MAX_LISTED_FILES: Final = 20
"""How many names a tag block lists before it says how many more were omitted."""

_OLD_TAGS: Final = re.compile(
    r"<read-files>.*?</read-files>\s*|<modified-files>.*?</modified-files>\s*"
    r"|<files>.*?</files>\s*",  # oh-my-pi 18's one tag for both lists
    re.DOTALL,
)


@dataclass
class FileOps:
    """Paths seen in tool calls, by what was done to them."""

    read: set[str] = field(default_factory=set)
    written: set[str] = field(default_factory=set)
    edited: set[str] = field(default_factory=set)


def extract_file_ops_from_message(message: StoredMessage, ops: FileOps) -> None:
    """Add the paths of ``message``'s ``read``/``write``/``edit`` tool calls to ``ops``.

    Only assistant messages count, and only calls whose ``arguments.path`` is a non-empty
    string; other tool names are ignored.
    """
    if not is_assistant_message(message):
        return
    content = message.get("content")
    if not isinstance(content, list):
        return
    for block in content:
        if not is_tool_call_content(block):
            continue
        arguments = block.get("arguments")
        path = arguments.get("path") if isinstance(arguments, dict) else None
        if not isinstance(path, str) or not path:
            continue
        match block.get("name"):
            case "read":
                ops.read.add(path)
            case "write":
                ops.written.add(path)
            case "edit":
                ops.edited.add(path)
            case _:
                pass


def seed_from_details(ops: FileOps, details: object) -> None:
    """Add the file lists of an earlier summary's ``details`` to ``ops``.

    ``readFiles`` go to ``read`` and ``modifiedFiles`` to ``edited`` (as pi does). Anything
    that is not a list of non-empty strings is ignored.
    """
    if not isinstance(details, dict):
        return
    ops.read.update(_paths(details.get("readFiles")))
    ops.edited.update(_paths(details.get("modifiedFiles")))


def _paths(value: object) -> list[str]:
    if not isinstance(value, list):
        return []
    return [path for path in value if isinstance(path, str) and path]


def _js_sort_key(path: str) -> bytes:
    # JavaScript's default sort compares UTF-16 code units; big-endian bytes sort the same way.
    return path.encode("utf-16-be", "surrogatepass")


def compute_file_lists(ops: FileOps) -> tuple[list[str], list[str]]:
    """``(read_files, modified_files)``: files only read, and files written or edited.

    Both are sorted as JavaScript sorts strings, so the lists match pi's.
    """
    modified = ops.edited | ops.written
    read_files = sorted(ops.read - modified, key=_js_sort_key)
    modified_files = sorted(modified, key=_js_sort_key)
    return read_files, modified_files


_TREE_MARK: Final = re.compile(r"^(?P<name>.+?) \((?P<mode>Read|Write|RW)\)$")


def parse_files_tag(body: str) -> tuple[list[str], list[str]]:
    """``(read, modified)`` from the body of oh-my-pi 18's ``<files>`` tag: a folded
    directory tree (``# dir/``, ``## sub/`` headers) of names marked ``(Read)``, ``(Write)``
    or ``(RW)`` (read and modified)."""
    read: list[str] = []
    modified: list[str] = []
    folders: list[str] = []
    for raw in body.splitlines():
        line = raw.rstrip()
        header = re.match(r"^(#+) (.+/)$", line)
        if header:
            depth = len(header.group(1))
            folders[depth - 1 :] = [header.group(2)]
            continue
        mark = _TREE_MARK.match(line.strip())
        if not mark:
            continue  # "[…N files elided…]" and anything else
        path = "".join(folders) + mark.group("name")
        if mark.group("mode") in ("Read", "RW"):
            read.append(path)
        if mark.group("mode") in ("Write", "RW"):
            modified.append(path)
    return read, modified


def upsert_file_tags(
    summary: str,
    read_files: Iterable[str],
    modified_files: Iterable[str],
    *,
    max_listed: int = MAX_LISTED_FILES,
) -> str:
    """``summary`` with its file tags replaced by ``<read-files>``/``<modified-files>`` blocks
    for the given lists (DESIGN decision 5).

    Tags already in the summary (a model often echoes them) are removed first. A block is
    written only for a non-empty list; past ``max_listed`` names it ends with a line
    ``... (N more files omitted)``.

    Raises:
        ValueError: ``max_listed`` is negative.
    """
    if max_listed < 0:
        raise ValueError(f"max_listed must be 0 or more, got {max_listed}")
    base = _OLD_TAGS.sub("", summary).rstrip()
    blocks = [
        _block(tag, list(files), max_listed)
        for tag, files in (("read-files", read_files), ("modified-files", modified_files))
    ]
    tags = "\n\n".join(block for block in blocks if block)
    if not tags:
        return base
    if not base:
        return tags
    return f"{base}\n\n{tags}"


def _block(tag: str, files: list[str], max_listed: int) -> str:
    if not files:
        return ""
    lines = files[:max_listed]
    if len(files) > max_listed:
        lines.append(f"... ({len(files) - max_listed} more files omitted)")
    body = "\n".join(lines)
    return f"<{tag}>\n{body}\n</{tag}>"
