"""Entry and message shapes of pi session files (format v3), as plain JSON-shaped dicts.

Entries and messages are ``dict``s with the on-disk (camelCase) keys, exactly as pi writes
them, so unknown fields, entry types and roles survive a load/save round trip untouched. The
aliases below name what a dict *is*; the constructors build new ones with pi's key order.

Entry types (pi-behaviour.md §1.5), fields after ``type, id, parentId, timestamp``:

- ``message``: ``message`` (an :data:`AgentMessage`)
- ``thinking_level_change``: ``thinkingLevel`` (string; the fork also writes ``null`` = off)
- ``model_change``: pi ``provider, modelId``; the fork ``model`` ("provider/id"), ``role?``
- ``compaction``: ``summary, shortSummary?, firstKeptEntryId, tokensBefore, details?,
  fromHook|fromExtension, preserveData?``
- ``branch_summary``: ``fromId, summary, details?, fromHook|fromExtension``
- ``custom``: ``customType, data?`` (never in the LLM context)
- ``custom_message``: ``customType, content, display, details?, attribution?``
- ``label``: ``targetId, label?`` (absent or empty clears)
- ``session_info``: ``name?``
- fork-only: ``service_tier_change``, ``ttsr_injection``, ``mcp_tool_selection``,
  ``session_init``, ``mode_change``

Message roles (§2.2): ``user``, ``assistant``, ``toolResult``, ``bashExecution``, ``custom``,
``hookMessage`` (pre-v3 ``custom``), ``branchSummary``, ``compactionSummary``, and the fork's
``developer``, ``pythonExecution``, ``fileMention``. Content blocks (§2.1): ``text``, ``image``,
``thinking``, ``toolCall``, and the fork's ``redactedThinking``.
"""

from __future__ import annotations

from typing import Any, Final, Literal

__all__ = [
    "CURRENT_SESSION_VERSION",
    "ENTRY_TYPES",
    "MESSAGE_ROLES",
    "AgentMessage",
    "ContentBlock",
    "Entry",
    "Header",
    "JsonDict",
    "LlmMessage",
    "StopReason",
    "Usage",
]

JsonDict = dict[str, Any]
"""Any JSON object decoded from or bound for a session file."""

Entry = dict[str, Any]
"""One non-header line of a session file: ``{type, id, parentId, timestamp, ...}``."""

Header = dict[str, Any]
"""Line 1 of a session file: ``{type: "session", version, id, timestamp, cwd, ...}``."""

AgentMessage = dict[str, Any]
"""A message as stored in a ``message`` entry or built from an entry (has a ``role``)."""

LlmMessage = dict[str, Any]
"""A message after ``convert_to_llm``: role ``user``, ``assistant`` or ``toolResult``."""

ContentBlock = dict[str, Any]
"""One block of message content: ``{type: "text" | "image" | "thinking" | "toolCall", ...}``."""

Usage = dict[str, Any]
"""Assistant usage: ``input, output, cacheRead, cacheWrite, totalTokens?, cost?``."""

StopReason = Literal["stop", "length", "toolUse", "error", "aborted"]

CURRENT_SESSION_VERSION: Final = 3

ENTRY_TYPES: Final = frozenset(
    {
        "message",
        "thinking_level_change",
        "model_change",
        "compaction",
        "branch_summary",
        "custom",
        "custom_message",
        "label",
        "session_info",
        "service_tier_change",
        "ttsr_injection",
        "mcp_tool_selection",
        "session_init",
        "mode_change",
    }
)
"""Entry types pi or its fork write. Others are kept and ignored."""

MESSAGE_ROLES: Final = frozenset(
    {
        "user",
        "assistant",
        "toolResult",
        "bashExecution",
        "custom",
        "hookMessage",
        "branchSummary",
        "compactionSummary",
        "developer",
        "pythonExecution",
        "fileMention",
    }
)
"""Message roles pi or its fork write. Others are kept and produce nothing for the LLM."""
