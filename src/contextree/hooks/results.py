"""Hook handler results, read once into typed values (pi-behaviour §11).

A handler returns ``None``, a ``dict`` with pi's camelCase keys (``{"cancel": True}``,
``{"compaction": {"summary": ..., "firstKeptEntryId": ...}}``) or an object with the
snake_case attributes of the result classes in :mod:`contextree.hooks.events`. The functions
here are the only place that tells the two spellings apart: a dict is read by its camelCase
keys, anything else by the snake_case attributes, and the rest of contextree sees one typed
value.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from contextree.hooks.events import BeforeCompactResult, BeforeTreeResult, CompactingResult

__all__ = [
    "HookCompaction",
    "HookSummary",
    "before_compact_result",
    "before_tree_result",
    "compacting_result",
    "hook_compaction",
    "hook_field",
    "hook_summary",
]

_UPPER = re.compile(r"(?<!^)(?=[A-Z])")


def _snake(camel: str) -> str:
    return _UPPER.sub("_", camel).lower()


def hook_field(result: object, camel: str) -> Any:
    """Field ``camel`` of a handler result: ``result[camel]`` of a dict, else the attribute
    spelled in snake_case (``firstKeptEntryId`` -> ``first_kept_entry_id``); ``None`` if absent."""
    if isinstance(result, Mapping):
        return result.get(camel)
    return getattr(result, _snake(camel), None)


def _given(result: object, camel: str) -> bool:
    """Whether the handler set ``camel``: a dict's key (even to ``null``), a non-None attribute."""
    if isinstance(result, Mapping):
        return camel in result
    return getattr(result, _snake(camel), None) is not None


def before_compact_result(result: object) -> BeforeCompactResult:
    """A ``session_before_compact`` result; ``compaction`` is kept as given (see
    :func:`hook_compaction`)."""
    if isinstance(result, BeforeCompactResult):
        return result
    return BeforeCompactResult(
        cancel=bool(hook_field(result, "cancel")), compaction=hook_field(result, "compaction")
    )


def compacting_result(result: object) -> CompactingResult:
    """A ``session.compacting`` result: context lines, a prompt override, preserved data."""
    if isinstance(result, CompactingResult):
        return result
    context = hook_field(result, "context") or []
    preserve = hook_field(result, "preserveData")
    prompt = hook_field(result, "prompt")
    return CompactingResult(
        context=[str(line) for line in context],
        prompt=str(prompt) if prompt is not None else None,
        preserve_data=dict(preserve) if isinstance(preserve, Mapping) else None,
    )


def before_tree_result(result: object) -> BeforeTreeResult:
    """A ``session_before_tree`` result.

    Overrides not given stay ``None``. A dict's explicit ``null`` clears the value: ``""`` for
    the instructions and the label, ``False`` for ``replaceInstructions``.
    """
    if isinstance(result, BeforeTreeResult):
        return result

    def text(camel: str) -> str | None:
        if not _given(result, camel):
            return None
        value = hook_field(result, camel)
        return "" if value is None else str(value)

    replace: bool | None = None
    if _given(result, "replaceInstructions"):
        replace = bool(hook_field(result, "replaceInstructions"))
    return BeforeTreeResult(
        cancel=bool(hook_field(result, "cancel")),
        summary=hook_field(result, "summary"),
        custom_instructions=text("customInstructions"),
        replace_instructions=replace,
        label=text("label"),
    )


@dataclass(frozen=True, slots=True)
class HookCompaction:
    """A compaction a ``session_before_compact`` handler supplied, used verbatim."""

    summary: str
    first_kept_entry_id: str | None = None
    tokens_before: int | None = None
    details: Any = None
    short_summary: str | None = None
    preserve_data: dict[str, Any] | None = None


def hook_compaction(value: object) -> HookCompaction:
    """The compaction of a ``session_before_compact`` result (dict with pi keys or object).

    Raises:
        TypeError: it has no string ``summary``.
    """
    summary = hook_field(value, "summary")
    if not isinstance(summary, str):
        raise TypeError("a hook's compaction needs a string summary")
    first_kept = hook_field(value, "firstKeptEntryId")
    tokens = hook_field(value, "tokensBefore")
    short = hook_field(value, "shortSummary")
    preserve = hook_field(value, "preserveData")
    return HookCompaction(
        summary=summary,
        first_kept_entry_id=str(first_kept) if first_kept else None,
        tokens_before=int(tokens) if tokens is not None else None,
        details=hook_field(value, "details"),
        short_summary=str(short) if short is not None else None,
        preserve_data=dict(preserve) if isinstance(preserve, Mapping) else None,
    )


@dataclass(frozen=True, slots=True)
class HookSummary:
    """A branch summary a ``session_before_tree`` handler supplied."""

    summary: str
    details: Any = None


def hook_summary(value: object) -> HookSummary:
    """The summary of a ``session_before_tree`` result: a string, or a dict/object with a
    string ``summary`` (and ``details``).

    Raises:
        TypeError: there is no string summary.
    """
    if isinstance(value, str):
        return HookSummary(value)
    text = hook_field(value, "summary")
    if not isinstance(text, str):
        raise TypeError("a session_before_tree hook's summary needs a string summary")
    return HookSummary(text, hook_field(value, "details"))
