"""System and developer messages read as the user's: pi's serialization leaves them out, but
what they say (a policy, a rule, a fact) must survive a compaction like the user's own words
(issue 25 item 1)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, cast

from contextree.entries.types import LlmMessage, is_text_content

__all__ = ["SYSTEM_MARK", "as_user"]

SYSTEM_MARK: Final = "[System]: "
"""Starts a developer message's text once :func:`as_user` made it a user message: its rules
and facts are read like the user's, but it is not the user's goal, request or answer."""


def as_user(messages: Sequence[LlmMessage]) -> list[LlmMessage]:
    """System/developer messages read as the user's: pi's serialization leaves them out, but
    what they say must survive a compaction like the user's own words (issue 25 item 1). Their
    text starts with :data:`SYSTEM_MARK`, which the reader takes off."""
    return [
        _as_user(message) if message.get("role") == "developer" else message for message in messages
    ]


def _as_user(message: LlmMessage) -> LlmMessage:
    content = message.get("content")
    if isinstance(content, str):
        content = SYSTEM_MARK + content if content.strip() else content
    elif isinstance(content, list):
        first = next(
            (
                i
                for i, b in enumerate(content)
                if is_text_content(b) and str(b.get("text", "")).strip()
            ),
            None,
        )
        if first is not None:
            block = content[first]
            content = [
                *content[:first],
                {**block, "text": SYSTEM_MARK + str(block.get("text", ""))},
                *content[first + 1 :],
            ]
    return cast(LlmMessage, {**message, "role": "user", "content": content})
