"""Renderables of ``recall``, ``expand`` and ``uncompact``; nothing here reads files."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from rich.console import Group, RenderableType
from rich.text import Text

from contextree.cli.preview import entry_kind, plural, printable
from contextree.entries.js_json import js_stringify
from contextree.recall.base import Hit
from contextree.recall.documents import entry_text
from contextree.recall.expand import Expansion
from contextree.recall.query import RecallResult

if TYPE_CHECKING:
    from contextree.branching.uncompact import UncompactResult

__all__ = ["expansion", "recall_result", "uncompact_result"]


def _entries(count: int, adjective: str = "") -> str:
    return f"{count:,} {adjective}{'entry' if count == 1 else 'entries'}"


def _role_style(role: str) -> str:
    if role in ("user", "assistant"):
        return f"ct.role.{role}"
    return "ct.role.tool" if role in ("toolResult", "bashExecution") else "ct.role.other"


def _marked(hit: Hit) -> Text:
    """A hit's snippet with its matches in bold instead of brackets; the rest as it is, the
    text's own brackets too (``items[idx]``, ``[REDACTED:...]``): only :attr:`Hit.marks` are
    marks."""
    text = Text("    ")
    snippet, done = hit.snippet, 0
    for start, end in hit.marks:
        text.append(printable(snippet[done:start]))
        text.append(printable(snippet[start + 1 : end - 1]), "bold")
        done = end
    text.append(printable(snippet[done:]))
    return text


def recall_result(result: RecallResult) -> RenderableType:
    """The hits, best first: id, role, time, then the snippet on its own line."""
    parts: list[RenderableType] = []
    if result.searched == 0:
        where = "anywhere" if result.all_branches else "on this path"
        hint = "" if result.all_branches else " (--all-branches also searches other branches)"
        parts.append(Text(f"Nothing is folded out of the context {where}{hint}.", "ct.meta"))
        return Group(*parts)
    scope = _entries(result.searched, "folded ")
    if not result.hits:
        parts.append(Text(f'No match for "{result.query}" among {scope}.', "ct.meta"))
        return Group(*parts)
    partial = len(result.hits) - result.complete
    if result.any_term:
        kind = "none holds every term; these hold some"
    elif partial:
        first = "the first holds" if result.complete == 1 else f"the first {result.complete} hold"
        rest = "the last one some" if partial == 1 else f"the other {partial} some"
        kind = f"{first} every term, {rest}"
    else:
        kind = "every term"
    parts.append(
        Text(
            f'{plural(len(result.hits), "hit")} for "{result.query}" ({kind}) among {scope}:',
            "ct.heading",
        )
    )
    for hit in result.hits:
        head = Text()
        head.append(hit.entry_id, "ct.id")
        head.append("  ")
        head.append(hit.role, _role_style(hit.role))
        head.append(f"  {hit.timestamp}", "ct.meta")
        parts.extend([head, _marked(hit)])
    parts.append(Text("contextree expand SESSION ID shows an entry in full.", "ct.meta"))
    return Group(*parts)


def _entry_body(entry: dict[str, object]) -> str:
    found = entry_text(entry)
    if found is not None:
        return found[1]
    return js_stringify({k: v for k, v in entry.items() if k not in ("id", "parentId")})


def _expansion_parts(result: Expansion) -> Iterator[RenderableType]:
    for index, entry in enumerate(result.entries):
        entry_id = str(entry.get("id"))
        head = Text("> " if index == result.target else "  ")
        head.append(entry_id, "ct.id")
        head.append("  ")
        found = entry_text(entry)
        role = found[0] if found is not None else entry_kind(entry)
        head.append(role, _role_style(role))
        head.append(f"  {entry.get('timestamp', '')}", "ct.meta")
        where = "in context" if entry_id in result.in_context else "not in context"
        head.append(f"  ({where})", "ct.meta")
        yield head
        body = printable(_entry_body(entry))
        if index != result.target:
            lines = body.splitlines() or [""]
            body = "\n".join(lines[:3]) + ("\n…" if len(lines) > 3 else "")
        yield Text("\n".join("    " + line for line in body.splitlines()))


def expansion(result: Expansion) -> RenderableType:
    """The entry asked for in full (marked ``>``), its neighbours in their first lines."""
    return Group(*_expansion_parts(result))


def uncompact_result(result: UncompactResult | None) -> RenderableType:
    """Which compaction was undone and where the leaf is now."""
    if result is None:
        return Text("No compaction on the path to the leaf; nothing to undo.", "ct.meta")
    when = f" of {result.compaction_timestamp}" if result.compaction_timestamp else ""
    tokens = f" (it had folded {result.tokens_before:,} tokens)" if result.tokens_before else ""
    later = result.left_behind - 1
    rest = (
        f"the compaction and {_entries(later, 'later ')} remain in the file as a branch"
        if later
        else "the compaction remains in the file as a branch"
    )
    lines = [
        Text(f"Undid compaction {result.compaction_id}{when}{tokens}."),
        Text(
            f"Moved the leaf from {result.old_leaf_id or '-'} to "
            f"{result.new_leaf_id or 'the start of the session'}, just before it; {rest}."
        ),
    ]
    if result.leaf_entry_id is not None:
        lines.append(
            Text(f"Recorded on disk as contextree.leaf entry {result.leaf_entry_id}.", "ct.meta")
        )
    return Group(*lines)
