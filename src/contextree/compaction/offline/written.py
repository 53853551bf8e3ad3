"""What a service tool that writes was given to write: an assistant that keeps a person's
documents (a checklist, a price list, an aftercare email, a rota) saves them with calls such as
``docs_update(title=..., find=..., replace=...)`` or ``doc_edit(changes=[{"replace": old,
"with": new}])``, and what the document now says is in the call's arguments, not in the
service's answer ("Updated 1 line."). A colleague taking the work over needs the new words.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, Final

from contextree.compaction.offline.lazy_pattern import LazyPattern
from contextree.compaction.offline.parts import ToolCall
from contextree.compaction.offline.text import clip, one_line

__all__ = ["WRITTEN_COUNTED_CHARS", "WRITTEN_VERB", "writes", "written_by", "written_text"]

WRITTEN_VERB: Final = "wrote"
"""A note of what a call wrote reads "`docs_update` wrote (Price list): ..."."""
_WRITE_VERBS: Final = frozenset(
    {"write", "save", "create", "update", "upload", "export", "generate", "rename", "copy",
     "edit", "append", "put", "draft", "insert", "set", "add", "amend", "replace"}
)
_NAME_PARTS: Final = LazyPattern(r"[^a-z0-9]+")
_OLD_TEXT: Final = frozenset(
    {"find", "old", "old_text", "oldtext", "old_string", "search", "match", "original",
     "before", "from", "previous", "old_value"}
)
"""Arguments that hold the words being replaced, not the new ones."""
_NEW_TEXT: Final = frozenset({"with", "new", "new_text", "replacement", "replace_with"})
"""An argument beside which ``replace`` names the old words (``{"replace": old, "with": new}``)."""
_TARGETS: Final = frozenset(
    {"title", "name", "doc", "document", "doc_id", "document_id", "id", "file", "filename",
     "file_name", "path", "file_path", "folder", "save_as", "sheet", "tab", "workbook",
     "spreadsheet", "url", "template", "version", "parent", "to", "cc", "bcc", "recipient",
     "recipients"}
)
"""Arguments that say where the words go, not what they are."""
_HOW: Final = frozenset({"action", "op", "operation", "mode", "format", "type", "encoding"})
"""Arguments that say how the words are written ("action": "replace_text")."""
_WRITTEN_CHARS: Final = 20_000
WRITTEN_COUNTED_CHARS: Final = 600
"""What of a call's new words the summary's budget counts as the user's own words."""
_NAMED_CHARS: Final = 80


def writes(call: ToolCall) -> bool:
    """Whether the tool's name says it writes (``docs.write``, ``sheet_update``, ``saveDraft``)."""
    name = re.sub(r"([a-z])([A-Z])", r"\1_\2", call.name).lower()  # docsWrite: docs, write
    return bool(_WRITE_VERBS.intersection(_NAME_PARTS.split(name)))


def written_by(call: ToolCall) -> str:
    """How a note of what ``call`` wrote starts: the tool and the document it wrote to."""
    target = next(
        (
            one_line(value)
            for key, value in call.args.items()
            if key.lower() in _TARGETS and isinstance(value, str) and value.strip()
        ),
        "",
    )
    where = f" ({clip(target, 60)})" if target else ""
    return f"`{call.name}` {WRITTEN_VERB}{where}"


def written_text(call: ToolCall) -> str:
    """The new words a writing call was given, one argument a line (old words it replaces,
    and the names of where they go, left out); empty for a call that does not write."""
    if not writes(call):
        return ""
    return "\n".join(_new_words(call.args))[:_WRITTEN_CHARS]


def _new_words(value: Any, key: str = "", siblings: frozenset[str] = frozenset()) -> Iterator[str]:
    if isinstance(value, str):
        if key in _OLD_TEXT or key in _TARGETS or key in _HOW:
            return
        if key == "replace" and siblings & _NEW_TEXT:
            return
        text = value.strip()
        if text and "://" not in text:
            # A short value keeps its name ("column: Peanut"): alone it says little.
            yield f"{key}: {text}" if key and len(text) < _NAMED_CHARS else text
    elif isinstance(value, dict):
        keys = frozenset(str(k).lower() for k in value)
        for k, v in value.items():
            yield from _new_words(v, str(k).lower(), keys)
    elif isinstance(value, list):
        for item in value:
            yield from _new_words(item, key, siblings)
