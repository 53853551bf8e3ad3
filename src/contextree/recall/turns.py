"""The user message a recalled entry answers, what a recalled tool call returned, and how the
user answered a recalled question.

An assistant usually restates what the user said in its own words ("Understood - a hard cap
of ..."), and a search for what the model remembers finds that reply rather than the user's own
message, which holds the exact figure, name or rule. So an assistant message or a tool result
that is recalled is shown with the user message its turn began with, when that message is
folded away too (the model does not see it otherwise). In the same way a recalled message that
calls a tool ("Booking now." and the booking call) is shown with the result that answered the
call: that result holds the ticket number or the total; and a recalled result ("Saved v2.") is
shown with the call that asked for it, which names the file. And a recalled question of the
assistant ("Do you want me to keep a backup when I edit?") is shown with the user's answer,
which is where the rule or the choice was said ("yes, always. never change a file without a
copy"). A recalled report of the assistant's on what a tool returned ("slack early in the
afternoon") is shown with that result, which holds the exact time.
"""

from __future__ import annotations

from collections.abc import Container, Mapping
from typing import TYPE_CHECKING, Any, Final

from contextree.entries.types import (
    entry_message,
    is_assistant_message,
    is_tool_call_content,
    is_tool_result_message,
    is_user_message,
)
from contextree.recall.documents import entry_text, tool_call_text

if TYPE_CHECKING:
    from contextree.entries.types import StoredEntry
    from contextree.session.tree import SessionTree

__all__ = [
    "MAX_TURN_STEPS",
    "asking_message",
    "call_result",
    "calling_message",
    "reported_result",
    "user_answer",
]

MAX_TURN_STEPS: Final = 64
"""How many entries up a branch the search goes (a tool call and its result are two): a hit
further than this from its turn's start is shown without its request (the walk stays cheap on
any session)."""
_ANSWERS: Final = frozenset({"assistant", "toolResult"})


def asking_message(
    tree: SessionTree, entry_id: str, folded: Container[str]
) -> tuple[str, str] | None:
    """``(id, text)`` of the user message nearest above the assistant message or tool result
    ``entry_id`` on its branch, when it is in ``folded``; ``None`` for any other entry, a turn
    longer than :data:`MAX_TURN_STEPS`, or a request the model still sees."""
    entry: StoredEntry | None = tree.get_entry(entry_id)
    if entry is None or _role(entry) not in _ANSWERS:
        return None
    for _ in range(MAX_TURN_STEPS):
        parent = entry.get("parentId")
        entry = tree.get_entry(parent) if isinstance(parent, str) else None
        if entry is None:
            return None
        if is_user_message(entry_message(entry)):
            # The turn's start, with words or not (an image alone): not an earlier turn's.
            return _folded_words(entry, folded)
    return None


def call_result(tree: SessionTree, entry_id: str, folded: Container[str]) -> tuple[str, str] | None:
    """``(id, text)`` of the first tool result that answers a tool call of the assistant
    message ``entry_id`` (results follow their calls one after another), when it is in
    ``folded``; ``None`` for a message without calls or a result the model still sees."""
    entry = tree.get_entry(entry_id)
    message = entry_message(entry) if entry is not None else None
    if not is_assistant_message(message):
        return None
    calls = {
        call_id
        for block in _blocks(message)
        if is_tool_call_content(block) and isinstance(call_id := block.get("id"), str)
    }
    if not calls:
        return None
    for child in tree.get_children(entry_id):
        result = entry_message(child)
        answered = result.get("toolCallId") if is_tool_result_message(result) else None
        if isinstance(answered, str) and answered in calls:
            return _folded_words(child, folded)
    return None


def calling_message(
    tree: SessionTree, entry_id: str, folded: Container[str]
) -> tuple[str, str] | None:
    """``(id, call)`` of the assistant message that made the tool call the tool result
    ``entry_id`` answers, with that call's name and arguments, when the message is in
    ``folded``; ``None`` for any other entry or a call not found within
    :data:`MAX_TURN_STEPS` entries up the branch."""
    entry: StoredEntry | None = tree.get_entry(entry_id)
    result = entry_message(entry) if entry is not None else None
    if not is_tool_result_message(result):
        return None
    wanted = result.get("toolCallId")
    for _ in range(MAX_TURN_STEPS):
        parent = entry.get("parentId") if entry is not None else None
        entry = tree.get_entry(parent) if isinstance(parent, str) else None
        message = entry_message(entry) if entry is not None else None
        if entry is None or is_user_message(message):
            return None
        if is_assistant_message(message):
            for block in _blocks(message):
                if is_tool_call_content(block) and block.get("id") == wanted:
                    entry_id = str(entry.get("id"))
                    return (entry_id, tool_call_text(block)) if entry_id in folded else None
    return None


def user_answer(tree: SessionTree, entry_id: str, folded: Container[str]) -> tuple[str, str] | None:
    """``(id, text)`` of the user message that follows the assistant message ``entry_id`` when
    that message asks something (a ``?`` in its words, no tool call) and the answer is in
    ``folded``; the first such answer when the user answered more than once (branches)."""
    entry = _reply_without_calls(tree, entry_id)
    found = entry_text(entry) if entry is not None else None
    if found is None or "?" not in found[1]:
        return None
    for child in tree.get_children(entry_id):
        if is_user_message(entry_message(child)):
            return _folded_words(child, folded)
    return None


def reported_result(
    tree: SessionTree, entry_id: str, folded: Container[str]
) -> tuple[str, str] | None:
    """``(id, text)`` of the tool result that the assistant message ``entry_id`` follows, when
    the message has words and makes no call (it reports what the tool returned, in its own
    words) and the result is in ``folded``; of the parallel results above it, the last."""
    entry = _reply_without_calls(tree, entry_id)
    if entry is None:
        return None
    parent = entry.get("parentId")
    above = tree.get_entry(parent) if isinstance(parent, str) else None
    if above is None or not is_tool_result_message(entry_message(above)):
        return None
    return _folded_words(above, folded)


def _reply_without_calls(tree: SessionTree, entry_id: str) -> StoredEntry | None:
    """The entry ``entry_id`` when it is an assistant message that calls no tool."""
    entry = tree.get_entry(entry_id)
    message = entry_message(entry) if entry is not None else None
    if not is_assistant_message(message):
        return None
    if any(is_tool_call_content(block) for block in _blocks(message)):
        return None
    return entry


def _blocks(message: Mapping[str, Any]) -> list[Any]:
    """A message's content blocks; none when a damaged file holds something else there."""
    content = message.get("content")
    return content if isinstance(content, list) else []


def _folded_words(entry: StoredEntry, folded: Container[str]) -> tuple[str, str] | None:
    """``(id, text)`` of ``entry`` when it has words and is in ``folded``, else ``None``."""
    found = entry_text(entry)
    entry_id = str(entry.get("id"))
    return (entry_id, found[1]) if found is not None and entry_id in folded else None


def _role(entry: StoredEntry) -> str | None:
    found = entry_text(entry)
    return found[0] if found is not None else None
