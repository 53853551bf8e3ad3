"""What OpenAI's chat completions and Anthropic's messages API accept, as checks on request
messages (the ``messages`` of a request body). Each returns the problems it found; an empty
list means the provider would take the messages. Used by the provider-view tests."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

Json = dict[str, Any]

_ANTHROPIC_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def openai_problems(messages: list[Json]) -> list[str]:
    """Chat completions: an assistant message with ``tool_calls`` is followed directly by one
    ``tool`` message per call id, and a ``tool`` message only ever follows such a message."""
    problems: list[str] = []
    index = 0
    while index < len(messages):
        message = messages[index]
        role = message["role"]
        if role == "tool":
            problems.append(f"{index}: tool message without a preceding call")
        elif role == "assistant":
            calls = message.get("tool_calls") or []
            if message.get("content") is None and not calls:
                problems.append(f"{index}: assistant message with neither content nor calls")
            ids = [call["id"] for call in calls]
            if not all(ids):
                problems.append(f"{index}: empty tool call id")
            if len(set(ids)) != len(ids):
                problems.append(f"{index}: duplicate tool call ids {ids}")
            answered: list[str] = []
            following = index + 1
            while following < len(messages) and messages[following]["role"] == "tool":
                answered.append(messages[following]["tool_call_id"])
                following += 1
            if Counter(answered) != Counter(ids):
                problems.append(f"{index}: calls {ids} answered by {answered}")
            if calls:
                index = following
                continue
        index += 1
    return problems


def anthropic_problems(messages: list[Json]) -> list[str]:
    """Messages API: roles alternate, no message is empty, tool_use ids are valid and unique in
    the request, and the user message right after a tool_use message starts with exactly one
    tool_result per tool_use; a tool_result appears nowhere else."""
    problems: list[str] = []
    seen_ids: set[str] = set()
    for index, message in enumerate(messages):
        role, content = message["role"], message["content"]
        if role not in ("user", "assistant"):
            problems.append(f"{index}: role {role}")
        if index and messages[index - 1]["role"] == role:
            problems.append(f"{index}: two {role} messages in a row")
        if not content:
            problems.append(f"{index}: empty content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        kinds = [block["type"] for block in blocks]
        if "tool_result" in kinds:
            first_other = next((i for i, k in enumerate(kinds) if k != "tool_result"), len(kinds))
            if "tool_result" in kinds[first_other:]:
                problems.append(f"{index}: tool_result after other content")
            previous = messages[index - 1] if index else None
            uses = _tool_use_ids(previous) if previous and previous["role"] == "assistant" else []
            for block in blocks:
                if block["type"] == "tool_result" and block["tool_use_id"] not in uses:
                    problems.append(f"{index}: tool_result {block['tool_use_id']} has no tool_use")
        if role != "assistant":
            continue
        ids = _tool_use_ids(message)
        for call_id in ids:
            if not _ANTHROPIC_ID.match(call_id):
                problems.append(f"{index}: invalid tool_use id {call_id!r}")
            if call_id in seen_ids:
                problems.append(f"{index}: tool_use id {call_id} used twice")
            seen_ids.add(call_id)
        if not ids:
            continue
        following = messages[index + 1] if index + 1 < len(messages) else None
        if following is None or following["role"] != "user":
            problems.append(f"{index}: tool_use not followed by a user message")
            continue
        following_content = following["content"]
        results = [
            block["tool_use_id"]
            for block in (following_content if isinstance(following_content, list) else [])
            if block["type"] == "tool_result"
        ]
        if Counter(results) != Counter(ids):
            problems.append(f"{index}: tool_use {ids} answered by {results}")
    return problems


def _tool_use_ids(message: Json) -> list[str]:
    content = message["content"]
    if not isinstance(content, list):
        return []
    return [block["id"] for block in content if block["type"] == "tool_use"]
