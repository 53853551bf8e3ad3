"""What a service tool that writes was given to write: an assistant that keeps a person's
documents (a checklist, a price list, an aftercare email, a rota) saves them with calls such as
``docs_update(title=..., find=..., replace=...)`` or ``doc_edit(changes=[{"replace": old,
"with": new}])``, and what the document now says is in the call's arguments, not in the
service's answer ("Updated 1 line."). A colleague taking the work over needs the new words.
"""

from __future__ import annotations

import re
from typing import Any, Final

from contextree.compaction.offline.lazy_pattern import LazyPattern
from contextree.compaction.offline.parts import ToolCall
from contextree.compaction.offline.text import clip, one_line

__all__ = [
    "SAVE_VERBS",
    "WRITTEN_COUNTED_CHARS",
    "WRITTEN_VERB",
    "writes",
    "written_by",
    "written_text",
]

WRITTEN_VERB: Final = "wrote"
"""A note of what a call wrote reads "`docs_update` wrote (Price list): ..."."""
SAVE_VERBS: Final = frozenset(
    {"write", "save", "create", "update", "upload", "export", "generate", "rename", "copy",
     "edit", "append", "put", "draft"}
)
"""The verbs of a tool's name that says it saves a file (``docs.write``, ``drive_upload``)."""
_WRITE_VERBS: Final = SAVE_VERBS | frozenset({"insert", "set", "add", "amend", "replace"})
"""The verbs of a tool's name that says it writes words somewhere (a rota, a calendar)."""
_READ_VERBS: Final = frozenset(
    {"get", "list", "read", "search", "find", "check", "show", "preview", "fetch", "view",
     "lookup", "query", "count", "describe", "validate", "download", "status"}
)
"""A name that starts with one of these, or ends with "status", reads (``get_draft``,
``check_for_update``, ``upload_status``), whatever verb follows."""
_NOT_WORD: Final = LazyPattern(r"[^a-z0-9]+")
"""What separates the words of a tool's name, and what an argument's name is compared without
(``old_str``, ``oldString``: ``oldstr``, ``oldstring``)."""
_OLD_PREFIXES: Final = (
    "old", "find", "search", "contains", "original", "current", "existing", "previous",
    "before", "match",
)
"""Arguments (and all they hold) that name the words being replaced: ``old_str``,
``oldString``, ``find``, ``containsText``."""
_NEW_BESIDE_REPLACE: Final = frozenset(
    {"with", "by", "to", "new", "newtext", "newstr", "newstring", "replacement", "replacewith"}
)
"""An argument beside which ``replace`` names the old words (``{"replace": old, "with": new}``)."""
_TARGETS: Final = frozenset(
    {"title", "name", "doc", "document", "docid", "documentid", "id", "file", "filename",
     "path", "filepath", "folder", "saveas", "sheet", "sheetname", "tab", "workbook",
     "spreadsheet", "url", "template", "version", "parent", "recipient", "recipients"}
)
"""Arguments that say where the words go, not what they are."""
_ADDRESSES: Final = frozenset({"to", "cc", "bcc", "from"})
"""Arguments that are a target only when they hold an address ("to": "jo@example.com"; a
rota's "from": "Sam", "to": "Ali" is what was written)."""
_HOW: Final = frozenset({"action", "op", "operation", "mode", "format", "type", "encoding"})
"""Arguments that say how the words are written ("action": "replace_text")."""
_URL: Final = LazyPattern(r"\S+://\S+")
_WRITTEN_CHARS: Final = 20_000
WRITTEN_COUNTED_CHARS: Final = 600
"""What of a call's new words the summary's budget counts as the user's own words."""
_NAMED_CHARS: Final = 80


def writes(call: ToolCall, verbs: frozenset[str] = _WRITE_VERBS) -> bool:
    """Whether the tool's name says it writes (``docs.write``, ``sheet_update``, ``saveDraft``;
    not ``get_draft``), by one of ``verbs``."""
    name = re.sub(r"([a-z])([A-Z])", r"\1_\2", call.name).lower()  # docsWrite: docs, write
    parts = [part for part in _NOT_WORD.split(name) if part]
    if not parts or parts[0] in _READ_VERBS or parts[-1] == "status":
        return False
    return bool(verbs.intersection(parts))


def written_by(call: ToolCall) -> str:
    """How a note of what ``call`` wrote starts: the tool and the document it wrote to (its
    name without backticks or parentheses, which would end the note's label)."""
    target = next(
        (
            one_line(value)
            for key, value in call.args.items()
            if _target(_key(key), value) and isinstance(value, str) and value.strip()
        ),
        "",
    )
    target = target.replace("`", "'").replace("(", "[").replace(")", "]")
    where = f" ({clip(target, 60)})" if target else ""
    return f"`{call.name}` {WRITTEN_VERB}{where}"


def written_text(call: ToolCall) -> str:
    """The new words a writing call was given, one argument a line (old words it replaces,
    and the names of where they go, left out); empty for a call that does not write."""
    if not writes(call):
        return ""
    lines: list[str] = []
    size = 0
    # Depth first, in argument order, by hand: a deeply nested argument costs no recursion,
    # and the walk stops once enough is found.
    # Each item: a value, its argument's name as compared (``_key``) and as written, and the
    # compared names beside it.
    stack: list[tuple[Any, str, str, frozenset[str]]] = [(call.args, "", "", frozenset())]
    while stack and size < _WRITTEN_CHARS:
        value, key, name, siblings = stack.pop()
        if _left_out(key, value, siblings):
            continue  # with all it holds (``"containsText": {"text": old}``)
        if isinstance(value, dict):
            keys = frozenset(_key(k) for k in value)
            stack.extend((v, _key(k), str(k), keys) for k, v in reversed(value.items()))
        elif isinstance(value, list):
            stack.extend((item, key, name, siblings) for item in reversed(value))
        elif (line := _new_line(value, name)) is not None:
            lines.append(line)
            size += len(line) + 1
    return "\n".join(lines)[:_WRITTEN_CHARS]


def _key(key: object) -> str:
    return _NOT_WORD.sub("", str(key).lower())


def _target(key: str, value: object) -> bool:
    return key in _TARGETS or (key in _ADDRESSES and isinstance(value, str) and "@" in value)


def _left_out(key: str, value: object, siblings: frozenset[str]) -> bool:
    """Whether an argument holds old words, where the new ones go, or how they are written."""
    if key.startswith(_OLD_PREFIXES) or key in _HOW or _target(key, value):
        return True
    return key == "replace" and bool(siblings & _NEW_BESIDE_REPLACE)


def _new_line(value: object, name: str) -> str | None:
    """The line a value of an argument ``name`` gives, or ``None`` when it is no new word."""
    if isinstance(value, bool):
        text = "yes" if value else "no"
    elif isinstance(value, int | float):
        text = str(value)
    elif isinstance(value, str):
        text = value.strip()
        if not text or _URL.fullmatch(text):
            return None
    else:
        return None
    # A short value keeps its name ("column: Peanut"; "Chèvre plain 120g: £4.50" as the
    # argument is written, not as names are compared): alone it says little.
    label = one_line(name).strip()
    return f"{clip(label, _NAMED_CHARS)}: {text}" if label and len(text) < _NAMED_CHARS else text
