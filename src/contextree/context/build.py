"""Rebuild the agent messages of a leaf from its path (pi-behaviour.md §3.1).

The latest compaction on the path becomes a ``compactionSummary`` message followed by the kept
entries (from ``firstKeptEntryId`` up to the compaction) and everything after it; branch
summaries and custom messages become their own message roles. ``convert_to_llm`` then turns
these into what a model sees.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

from contextree.entries.ids import iso_to_ms
from contextree.entries.sequence import id_reader, type_reader
from contextree.entries.types import (
    StoredEntry,
    StoredMessage,
    is_assistant_message,
    is_branch_summary_entry,
    is_custom_message_entry,
    is_message_entry,
    is_model_change_entry,
)

__all__ = [
    "RESET_BOUNDARY",
    "UNSET",
    "ContextNeeds",
    "LazyEntry",
    "ModelRef",
    "SessionContext",
    "appended_context",
    "build_context_from_path",
    "build_session_context",
    "message_from_entry",
    "path_to",
]


RESET_BOUNDARY: Final = "reset_boundary"
"""oh-my-pi's entry for ``/clear``: the context starts after the latest one."""


class _Unset:
    def __repr__(self) -> str:
        return "UNSET"


UNSET: Final = _Unset()
"""Marks "no leaf given" apart from ``None`` ("the leaf is before the first entry")."""


@dataclass(frozen=True, slots=True)
class ModelRef:
    """The model a session last used: ``provider`` and ``model_id``."""

    provider: str
    model_id: str

    @property
    def spec(self) -> str:
        return f"{self.provider}/{self.model_id}"


@dataclass(frozen=True, slots=True)
class SessionContext:
    """What a leaf's path amounts to: messages for the model, thinking level and model."""

    messages: list[StoredMessage] = field(default_factory=list)
    thinking_level: str = "off"
    model: ModelRef | None = None
    entry_ids: list[str | None] = field(default_factory=list)
    """The id of the entry each of ``messages`` comes from, in the same order (the
    compaction's id for its summary)."""


def message_from_entry(entry: StoredEntry, *, for_context: bool = True) -> StoredMessage | None:
    """The message an entry contributes, or ``None`` (pi's ``getMessageFromEntry``).

    With ``for_context`` an empty branch summary produces nothing, as when pi rebuilds the
    context; compaction preparation counts it (§5.4 step 8).
    """
    if entry.get("type") == "message":  # the hot case: one read of the tag
        message = entry.get("message")
        return message if isinstance(message, dict) else None
    if is_custom_message_entry(entry):
        custom: StoredMessage = {
            "role": "custom",
            "customType": entry.get("customType"),
            "content": entry.get("content", ""),
            "display": entry.get("display", True),
        }
        if "details" in entry:
            custom["details"] = entry["details"]
        if "attribution" in entry:
            custom["attribution"] = entry["attribution"]
        custom["timestamp"] = iso_to_ms(entry.get("timestamp"))
        return custom
    if is_branch_summary_entry(entry):
        summary = entry.get("summary")
        if for_context and not summary:
            return None
        return {
            "role": "branchSummary",
            "summary": summary if isinstance(summary, str) else "",
            "fromId": entry.get("fromId"),
            "timestamp": iso_to_ms(entry.get("timestamp")),
        }
    return None


def compaction_summary_message(entry: Mapping[str, Any]) -> StoredMessage:
    """The ``compactionSummary`` message a compaction entry stands for."""
    summary = entry.get("summary")
    message: StoredMessage = {
        "role": "compactionSummary",
        "summary": summary if isinstance(summary, str) else "",
        "tokensBefore": entry.get("tokensBefore", 0),
        "timestamp": iso_to_ms(entry.get("timestamp")),
    }
    if isinstance(entry.get("shortSummary"), str):
        message["shortSummary"] = entry["shortSummary"]
    return message


def _model_from(entry: StoredEntry) -> ModelRef | None:
    if is_model_change_entry(entry):
        provider, model_id = entry.get("provider"), entry.get("modelId")
        if isinstance(provider, str) and isinstance(model_id, str):
            return ModelRef(provider, model_id)
        spec, role = entry.get("model"), entry.get("role")
        # The fork writes "provider/id" with a role; only the default role is the session model.
        if isinstance(spec, str) and spec and role in (None, "default"):
            provider, _, model_id = spec.partition("/")
            return ModelRef(provider, model_id) if model_id else ModelRef("", provider)
        return None
    if is_message_entry(entry) and is_assistant_message(message := entry["message"]):
        provider, model_id = message.get("provider"), message.get("model")
        if isinstance(provider, str) and isinstance(model_id, str):
            return ModelRef(provider, model_id)
    return None


def _remote_history(compaction: StoredEntry) -> dict[str, Any] | None:
    # The fork's OpenAI remote compaction replays native history instead of kept entries (§7.8).
    preserve = compaction.get("preserveData")
    if not isinstance(preserve, dict):
        return None
    remote = preserve.get("openaiRemoteCompaction")
    if not isinstance(remote, dict):
        return None
    provider, history = remote.get("provider"), remote.get("replacementHistory")
    if isinstance(provider, str) and provider and isinstance(history, list):
        return {"type": "openaiResponsesHistory", "provider": provider, "items": history}
    return None


def _thinking_level(path: Sequence[StoredEntry]) -> str:
    type_of = type_reader(path)
    for index in range(len(path) - 1, -1, -1):
        if type_of(index) == "thinking_level_change":
            level = path[index].get("thinkingLevel")
            return level if isinstance(level, str) and level else "off"
    return "off"


def _model(path: Sequence[StoredEntry]) -> ModelRef | None:
    # The last model_change or assistant message wins (pi); scanning backwards stops early.
    type_of = type_reader(path)
    for index in range(len(path) - 1, -1, -1):
        if type_of(index) in ("model_change", "message"):
            found = _model_from(path[index])
            if found is not None:
                return found
    return None


class LazyEntry(Protocol):
    """An entry whose type and id are known before its body is decoded."""

    @property
    def type(self) -> str: ...

    @property
    def id(self) -> str | None: ...

    @property
    def entry(self) -> StoredEntry: ...


class ContextNeeds:
    """Walking a path from its leaf back: do the entries passed so far hold all the context reads?

    :func:`build_context_from_path` reads the latest compaction, the kept region that starts at
    its ``firstKeptEntryId``, the latest thinking level and the latest model. Once a walk from the
    leaf has passed all of them, nothing further back changes the context, so a reader of a large
    session may stop there. Without a compaction the context holds the whole path.
    """

    __slots__ = ("_compaction", "_first_kept", "_kept", "_model", "_thinking")

    def __init__(self) -> None:
        self._compaction = False
        self._first_kept: object = None
        self._kept = False
        self._thinking = False
        self._model = False

    def satisfied_by(self, item: LazyEntry) -> bool:
        """Take the next entry back (its body read only when needed); True when enough."""
        kind = item.type
        if self._compaction and not self._kept and item.id == self._first_kept:
            self._kept = True
        if kind == RESET_BOUNDARY and not self._compaction:
            # A /clear boundary nearer the leaf than any compaction: nothing before it counts.
            self._compaction = self._kept = True
        elif kind == "compaction" and not self._compaction:
            self._compaction = True
            compaction = item.entry
            self._first_kept = compaction.get("firstKeptEntryId")
            # Remote compaction replays its own history: no kept region to look for.
            self._kept = _remote_history(compaction) is not None
        elif kind == "thinking_level_change":
            self._thinking = True
        elif kind in ("model_change", "message") and not self._model:
            self._model = _model_from(item.entry) is not None
        return self._compaction and self._kept and self._thinking and self._model


def build_context_from_path(path: Sequence[StoredEntry]) -> SessionContext:
    """Build the context of a root-to-leaf path of entries.

    Only the entries the context needs are read: with a compaction on the path, the kept
    region and what follows it (plus the latest thinking level and model).
    """
    compaction_index = -1
    reset_index = -1
    type_of = type_reader(path)
    for index in range(len(path) - 1, -1, -1):
        kind = type_of(index)
        if kind == "compaction":
            compaction_index = index
            break
        if kind == RESET_BOUNDARY:
            reset_index = index
            break
    thinking = _thinking_level(path)
    model = _model(path)

    messages: list[StoredMessage] = []
    entry_ids: list[str | None] = []

    def emit(entries: Sequence[StoredEntry]) -> None:
        for entry in entries:
            message = message_from_entry(entry)
            if message is not None:
                messages.append(message)
                entry_ids.append(_entry_id(entry))

    if compaction_index < 0:
        # oh-my-pi's /clear: the context starts after the latest boundary, unless a later
        # compaction superseded it (pi writes none and treats the type as unknown).
        emit(path[reset_index + 1 :])
        return SessionContext(messages, thinking, model, entry_ids)

    compaction = path[compaction_index]
    summary = compaction_summary_message(compaction)
    payload = _remote_history(compaction)
    if payload is not None:
        summary["providerPayload"] = payload
    messages.append(summary)
    entry_ids.append(_entry_id(compaction))
    if payload is None:
        first_kept = compaction.get("firstKeptEntryId")
        # The kept entry sits shortly before the compaction: search backwards from it.
        id_of = id_reader(path)
        for index in range(compaction_index - 1, -1, -1):
            if id_of(index) == first_kept:
                emit(path[index:compaction_index])
                break
    emit(path[compaction_index + 1 :])
    return SessionContext(messages, thinking, model, entry_ids)


def appended_context(context: SessionContext, entry: StoredEntry) -> SessionContext | None:
    """The context of a path one entry longer than the one ``context`` was built from.

    Gives what :func:`build_context_from_path` gives for the longer path, without reading the
    path again: the entry's message (if any) joins the end, a thinking-level change or a model
    (a ``model_change`` or an assistant reply naming one) replaces the current one. ``None``
    for a compaction or a reset boundary: they change where the context starts, so only a
    rebuild gives it. ``context`` is left as it is.
    """
    kind = entry.get("type")
    if kind in ("compaction", RESET_BOUNDARY):
        return None
    messages, entry_ids = list(context.messages), list(context.entry_ids)
    message = message_from_entry(entry)
    if message is not None:
        messages.append(message)
        entry_ids.append(_entry_id(entry))
    thinking = context.thinking_level
    if kind == "thinking_level_change":
        level = entry.get("thinkingLevel")
        thinking = level if isinstance(level, str) and level else "off"
    model = context.model
    if kind in ("model_change", "message"):
        model = _model_from(entry) or model
    return SessionContext(messages, thinking, model, entry_ids)


def _entry_id(entry: StoredEntry) -> str | None:
    entry_id = entry.get("id")
    return entry_id if isinstance(entry_id, str) else None


def path_to(leaf_id: str, by_id: Mapping[str, StoredEntry]) -> list[StoredEntry]:
    """Root-first path ending at ``leaf_id``; stops at a missing parent or a cycle."""
    path: list[StoredEntry] = []
    seen: set[str] = set()
    current: StoredEntry | None = by_id.get(leaf_id)
    while current is not None:
        entry_id = current.get("id")
        if not isinstance(entry_id, str) or entry_id in seen:
            break
        seen.add(entry_id)
        path.append(current)
        parent = current.get("parentId")
        current = by_id.get(parent) if isinstance(parent, str) and parent != entry_id else None
    path.reverse()
    return path


def build_session_context(
    entries: Sequence[StoredEntry], leaf_id: str | _Unset | None = UNSET
) -> SessionContext:
    """pi's ``buildSessionContext(entries, leafId)`` over a list of entries in file order.

    ``leaf_id=None`` gives an empty context; an omitted or unknown leaf means the last entry.
    """
    if leaf_id is None or not entries:
        return SessionContext()
    by_id = {entry["id"]: entry for entry in entries if isinstance(entry.get("id"), str)}
    leaf = by_id.get(leaf_id) if isinstance(leaf_id, str) else None
    if leaf is None:
        leaf = entries[-1]
    leaf_key = leaf.get("id")
    path = path_to(leaf_key, by_id) if isinstance(leaf_key, str) else [leaf]
    return build_context_from_path(path)
