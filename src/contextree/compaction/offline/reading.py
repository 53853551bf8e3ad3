"""Reading messages and an earlier summary into one digest: what the offline summary and the
recorded facts of a model's summary both start from."""

from __future__ import annotations

from collections.abc import Sequence

from contextree.compaction.offline.conversation import digest_conversation
from contextree.compaction.offline.developer import as_user
from contextree.compaction.offline.digest import Digest
from contextree.compaction.offline.parts import Conversation, conversation_of
from contextree.compaction.offline.previous import digest_summary, merge_digest, reread_digest
from contextree.compaction.serialize import serialized_parts
from contextree.context.convert import convert_to_llm
from contextree.entries.types import StoredMessage

__all__ = ["read_digest", "serialized"]


def serialized(messages: Sequence[StoredMessage]) -> Conversation:
    """Session messages as the offline summarizer reads them: pi's serialized conversation
    (§7.1), long tool results kept at both ends (``""`` for none), with its parts."""
    if not messages:
        return Conversation("", [])
    return conversation_of(serialized_parts(as_user(convert_to_llm(messages)), keep_tail=True))


def read_digest(
    conversation: str | Conversation,
    *,
    previous_summary: str | None,
    focus: str | None = None,
    earlier: str | Conversation = "",
) -> Digest:
    """The digest of ``conversation`` with ``previous_summary``: merged with it, or, when
    ``earlier`` (what the previous summary summarized, serialized) is given, read after it
    and taking from the summary only what no message holds. ``user_chars`` counts the
    conversation's user messages only (the budget makes room for the new ones). A
    :class:`~contextree.compaction.offline.parts.Conversation` is read by its parts."""
    digest = digest_conversation(conversation, focus=focus, earlier=earlier)
    if previous_summary and previous_summary.strip():
        old = digest_summary(previous_summary)
        user_chars = digest.user_chars
        digest = reread_digest(old, digest) if earlier else merge_digest(old, digest)
        digest.user_chars = user_chars
    return digest
