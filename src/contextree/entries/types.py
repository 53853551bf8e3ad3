"""Entry and message shapes of pi session files (format v3), as plain JSON-shaped dicts.

Entries and messages are ``dict``s with the on-disk (camelCase) keys, exactly as pi writes
them, so unknown fields, entry types and roles survive a load/save round trip untouched. The
aliases below name what a dict *is*; the constructors build new ones with pi's key order.

The ``TypedDict`` shapes (:class:`MessageEntry`, :class:`CompactionEntry`,
:class:`AssistantMessage`, :class:`ToolCallContent`, ...) describe the known types with a
``Literal`` tag; pi's optional fields are ``NotRequired``. They are static views of the same
dicts (the codec never converts), so extra keys are still kept. Narrow a dict to one with the
``is_*`` guards (``if is_compaction_entry(entry): entry.get("firstKeptEntryId")``), after
which mypy checks the field names and types.

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


from collections.abc import Mapping
from typing import Any, Final, Literal, NotRequired, TypedDict, TypeGuard

__all__ = [
    "CURRENT_SESSION_VERSION",
    "ENTRY_TYPES",
    "MESSAGE_ROLES",
    "AgentMessage",
    "AssistantMessage",
    "BashExecutionMessage",
    "BranchSummaryEntry",
    "BranchSummaryMessage",
    "CompactionEntry",
    "CompactionSummaryMessage",
    "ContentBlock",
    "CustomEntry",
    "CustomMessage",
    "CustomMessageEntry",
    "Entry",
    "EntryBase",
    "Header",
    "ImageContent",
    "JsonDict",
    "LabelEntry",
    "LlmMessage",
    "MessageEntry",
    "ModelChangeEntry",
    "SessionInfoEntry",
    "StopReason",
    "TextContent",
    "ThinkingContent",
    "ThinkingLevelChangeEntry",
    "ToolCallContent",
    "ToolResultMessage",
    "Usage",
    "UserMessage",
    "entry_message",
    "is_assistant_message",
    "is_bash_execution_message",
    "is_branch_summary_entry",
    "is_compaction_entry",
    "is_compaction_summary_message",
    "is_custom_entry",
    "is_custom_message_entry",
    "is_image_content",
    "is_label_entry",
    "is_message_entry",
    "is_model_change_entry",
    "is_text_content",
    "is_thinking_content",
    "is_tool_call_content",
    "is_tool_result_message",
    "is_user_message",
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


# --- typed shapes: static views of the same dicts ---------------------------------------------
# Content blocks (§2.1).


class TextContent(TypedDict):
    type: Literal["text"]
    text: str
    textSignature: NotRequired[str]


class ImageContent(TypedDict):
    type: Literal["image"]
    data: str
    mimeType: str


class ThinkingContent(TypedDict):
    type: Literal["thinking"]
    thinking: str
    thinkingSignature: NotRequired[str]
    redacted: NotRequired[bool]


class ToolCallContent(TypedDict):
    type: Literal["toolCall"]
    id: str
    name: str
    arguments: dict[str, Any]


# Messages (§2.2). ``timestamp`` is milliseconds since the epoch.


class UserMessage(TypedDict):
    role: Literal["user"]
    content: str | list[TextContent | ImageContent]
    timestamp: NotRequired[int | float]


class AssistantMessage(TypedDict):
    role: Literal["assistant"]
    content: list[TextContent | ThinkingContent | ToolCallContent] | str
    """A list as pi writes it; a string only in hand-written or damaged files."""
    api: NotRequired[str]
    provider: NotRequired[str]
    model: NotRequired[str]
    usage: NotRequired[Usage]
    stopReason: NotRequired[StopReason]
    errorMessage: NotRequired[str]
    timestamp: NotRequired[int | float]


class ToolResultMessage(TypedDict):
    role: Literal["toolResult"]
    toolCallId: str
    toolName: NotRequired[str]
    content: list[TextContent | ImageContent] | str
    details: NotRequired[Any]
    isError: NotRequired[bool]
    prunedContent: NotRequired[list[TextContent | ImageContent]]
    prunedAt: NotRequired[int | float]
    timestamp: NotRequired[int | float]


class BashExecutionMessage(TypedDict):
    role: Literal["bashExecution"]
    command: str
    output: str
    exitCode: NotRequired[int | None]
    cancelled: NotRequired[bool]
    truncated: NotRequired[bool]
    fullOutputPath: NotRequired[str]
    excludeFromContext: NotRequired[bool]
    timestamp: NotRequired[int | float]


class CustomMessage(TypedDict):
    role: Literal["custom"]
    customType: str
    content: str | list[TextContent | ImageContent]
    display: NotRequired[bool]
    details: NotRequired[Any]
    timestamp: NotRequired[int | float]


class BranchSummaryMessage(TypedDict):
    role: Literal["branchSummary"]
    summary: str
    fromId: NotRequired[str]
    timestamp: NotRequired[int | float]


class CompactionSummaryMessage(TypedDict):
    role: Literal["compactionSummary"]
    summary: str
    tokensBefore: NotRequired[int]
    shortSummary: NotRequired[str]
    timestamp: NotRequired[int | float]


# Entries (§1.5): ``type, id, parentId, timestamp`` (ISO 8601) and the type's fields.


class EntryBase(TypedDict):
    id: str
    parentId: str | None
    timestamp: NotRequired[str]


class MessageEntry(EntryBase):
    type: Literal["message"]
    message: dict[str, Any]
    """An :data:`AgentMessage`; narrow it with :func:`is_assistant_message` and friends."""


class CompactionEntry(EntryBase):
    type: Literal["compaction"]
    summary: str
    firstKeptEntryId: str
    tokensBefore: int
    shortSummary: NotRequired[str]
    details: NotRequired[Any]
    fromHook: NotRequired[bool]
    fromExtension: NotRequired[bool]
    preserveData: NotRequired[dict[str, Any]]


class BranchSummaryEntry(EntryBase):
    type: Literal["branch_summary"]
    fromId: str
    summary: str
    details: NotRequired[Any]
    fromHook: NotRequired[bool]
    fromExtension: NotRequired[bool]


class CustomEntry(EntryBase):
    type: Literal["custom"]
    customType: str
    data: NotRequired[Any]


class CustomMessageEntry(EntryBase):
    type: Literal["custom_message"]
    customType: str
    content: str | list[TextContent | ImageContent]
    display: NotRequired[bool]
    details: NotRequired[Any]
    attribution: NotRequired[Any]


class LabelEntry(EntryBase):
    type: Literal["label"]
    targetId: str
    label: NotRequired[str | None]


class ModelChangeEntry(EntryBase):
    type: Literal["model_change"]
    provider: NotRequired[str]
    modelId: NotRequired[str]
    model: NotRequired[str]
    """The fork's ``"provider/id"``."""
    role: NotRequired[str]


class ThinkingLevelChangeEntry(EntryBase):
    type: Literal["thinking_level_change"]
    thinkingLevel: str | None


class SessionInfoEntry(EntryBase):
    type: Literal["session_info"]
    name: NotRequired[str]


# Guards: a dict whose tag says it is one of the shapes above. They look at the tag only: in a
# damaged file a field may still be missing or of another type, so code that reads files keeps
# reading fields with .get and checking what it finds.


def entry_message(entry: Mapping[str, Any]) -> AgentMessage | None:
    """The message a ``message`` entry holds; ``None`` for other entries (and for a message
    entry whose ``message`` is not an object). Narrow it further with the message guards
    (``if is_tool_result_message(message := entry_message(entry)): ...``); ``entry`` itself
    stays an :data:`Entry`, so it can still be passed on as one."""
    message = entry.get("message") if entry.get("type") == "message" else None
    return message if isinstance(message, dict) else None


def is_message_entry(entry: Mapping[str, Any]) -> TypeGuard[MessageEntry]:
    """A ``message`` entry holding a message object."""
    return entry.get("type") == "message" and isinstance(entry.get("message"), dict)


def is_compaction_entry(entry: Mapping[str, Any]) -> TypeGuard[CompactionEntry]:
    return entry.get("type") == "compaction"


def is_branch_summary_entry(entry: Mapping[str, Any]) -> TypeGuard[BranchSummaryEntry]:
    return entry.get("type") == "branch_summary"


def is_custom_entry(entry: Mapping[str, Any]) -> TypeGuard[CustomEntry]:
    return entry.get("type") == "custom"


def is_custom_message_entry(entry: Mapping[str, Any]) -> TypeGuard[CustomMessageEntry]:
    return entry.get("type") == "custom_message"


def is_label_entry(entry: Mapping[str, Any]) -> TypeGuard[LabelEntry]:
    return entry.get("type") == "label"


def is_model_change_entry(entry: Mapping[str, Any]) -> TypeGuard[ModelChangeEntry]:
    return entry.get("type") == "model_change"


def is_user_message(message: object) -> TypeGuard[UserMessage]:
    return isinstance(message, dict) and message.get("role") == "user"


def is_assistant_message(message: object) -> TypeGuard[AssistantMessage]:
    return isinstance(message, dict) and message.get("role") == "assistant"


def is_tool_result_message(message: object) -> TypeGuard[ToolResultMessage]:
    return isinstance(message, dict) and message.get("role") == "toolResult"


def is_bash_execution_message(message: object) -> TypeGuard[BashExecutionMessage]:
    return isinstance(message, dict) and message.get("role") == "bashExecution"


def is_compaction_summary_message(message: object) -> TypeGuard[CompactionSummaryMessage]:
    return isinstance(message, dict) and message.get("role") == "compactionSummary"


def is_text_content(block: object) -> TypeGuard[TextContent]:
    return isinstance(block, dict) and block.get("type") == "text"


def is_image_content(block: object) -> TypeGuard[ImageContent]:
    return isinstance(block, dict) and block.get("type") == "image"


def is_thinking_content(block: object) -> TypeGuard[ThinkingContent]:
    return isinstance(block, dict) and block.get("type") == "thinking"


def is_tool_call_content(block: object) -> TypeGuard[ToolCallContent]:
    return isinstance(block, dict) and block.get("type") == "toolCall"
