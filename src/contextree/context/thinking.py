"""Leaving old thinking out of a request.

A reply's thinking blocks matter while the model works on the turn that produced them; in
later turns they mostly repeat what the reply itself says, yet every request pays for them.
:func:`drop_old_thinking` leaves them out of turns older than the last ``keep_turns`` (a turn
starts at a user message). The session file keeps them, and pi's context is not touched: this
applies to the provider view only. The current turn always keeps its thinking (Anthropic
requires the thinking of a tool-use turn in progress to come back unmodified).

Clearing moves with the conversation: when a turn ages out, its replies change, and with them
the cached prompt prefix from that point on. That is why it is off by default.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import assert_never, cast

from contextree.entries.types import (
    AssistantBlock,
    AssistantMessage,
    LlmMessage,
    is_assistant_message,
    is_user_message,
    known_block,
)

__all__ = ["THINKING_TYPES", "drop_old_thinking"]

THINKING_TYPES = frozenset({"thinking", "redactedThinking"})
"""Block types that are thinking: pi's, and oh-my-pi's redacted form."""


def drop_old_thinking(messages: Sequence[LlmMessage], keep_turns: int) -> list[LlmMessage]:
    """``messages`` with the thinking of assistant replies before the last ``keep_turns``
    turns left out; ``keep_turns < 1`` keeps everything. Unchanged messages are the same
    objects; a reply that held nothing but thinking is kept as it is, so no reply is empty."""
    out = list(messages)
    if keep_turns < 1:
        return out
    starts = [i for i, m in enumerate(out) if is_user_message(m)]
    if len(starts) <= keep_turns:
        return out
    for index in range(starts[-keep_turns]):
        message = out[index]
        content = message.get("content")
        if not is_assistant_message(message) or not isinstance(content, list):
            continue
        kept = [b for b in content if not _is_thinking(b)]
        if kept and len(kept) < len(content):
            thinned: AssistantMessage = {**message, "content": cast("list[AssistantBlock]", kept)}
            out[index] = thinned
    return out


def _is_thinking(block: object) -> bool:
    known = known_block(block)
    if known is None:
        return False  # not an object, or a block type this format does not define: kept
    match known["type"]:
        case "thinking" | "redactedThinking":  # THINKING_TYPES
            return True
        case "text" | "image" | "toolCall":
            return False
        case _:
            assert_never(known)
