"""The messages of a provider request for a session's context, checked first.

``contextree context --format openai|anthropic`` prints them. The mappings in
``contextree.llm`` raise a bare ``ValueError`` on a message shape they cannot carry; checking
every message of the context first turns a damaged entry into one error naming its line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from contextree.context.convert import convert_to_llm
from contextree.context.provider import provider_messages
from contextree.entries.shapes import message_problem
from contextree.errors import SessionFileError

if TYPE_CHECKING:
    from contextree.context.build import SessionContext
    from contextree.session.tree import SessionTree

__all__ = ["Provider", "check_context_shapes", "provider_request"]

Provider = Literal["openai", "anthropic"]


def check_context_shapes(tree: SessionTree, context: SessionContext) -> None:
    """Raise :class:`SessionFileError` (file, line, entry, field) for the first message of
    ``context`` that a provider request cannot carry."""
    for message, entry_id in zip(context.messages, context.entry_ids, strict=False):
        problem = message_problem(message)
        if problem is None:
            continue
        line = tree.line_of(entry_id) if entry_id is not None else None
        raise SessionFileError(
            tree.store.name,
            f"entry {entry_id}: {problem}; no provider request can carry it "
            "(contextree check lists every such entry)",
            line=line,
        )


def provider_request(
    tree: SessionTree, leaf_id: str | None, provider: Provider, *, keep_thinking_turns: int = -1
) -> dict[str, Any]:
    """``{"messages": [...]}`` of a request to ``provider`` for the context at ``leaf_id``
    (default: the leaf); no system prompt, since a session stores none. Thinking older than
    ``keep_thinking_turns`` turns is left out (``context.keepThinkingTurns``; -1 keeps all)."""
    context = tree.build_session_context(leaf_id)
    check_context_shapes(tree, context)
    view = provider_messages(
        convert_to_llm(context.messages), keep_thinking_turns=keep_thinking_turns
    )
    if provider == "openai":
        from contextree.llm.openai_compat import to_openai_messages

        return {"messages": to_openai_messages("", view)}
    from contextree.llm.anthropic import to_anthropic_messages

    return {"messages": to_anthropic_messages(view)}
