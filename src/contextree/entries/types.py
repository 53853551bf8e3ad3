"""Entry and message shapes of pi session files (format v3), as plain JSON-shaped dicts.

Entries and messages are ``dict``s with the on-disk (camelCase) keys, exactly as pi writes
them, so unknown fields, entry types and roles survive a load/save round trip untouched. The
aliases below name what a dict *is*; the constructors build new ones with pi's key order.

The ``TypedDict`` shapes (:class:`MessageEntry`, :class:`CompactionEntry`,
:class:`AssistantMessage`, :class:`ToolCallContent`, ...) describe the known types with a
``Literal`` tag; pi's optional fields are ``NotRequired``. They are static views of the same
dicts (the codec never converts), so extra keys are still kept. :data:`Entry`,
:data:`AgentMessage`, :data:`LlmMessage` and :data:`ContentBlock` are unions of them: match
one on its tag (``match message["role"]: case "user": ... case _: assert_never(message)``) and
mypy checks the field names and reports a missing case.

A file can hold types and roles this format does not define (pi keeps them; so do we). What
the codec reads is therefore a :data:`StoredEntry` / :data:`StoredMessage` (a plain dict);
:func:`known_entry`, :func:`known_message` and :func:`known_block` turn one into its typed
union, or ``None`` for an unknown tag, which each caller handles as its explicit unknown case.
The ``is_*`` guards narrow a stored dict to one shape.

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
    "BLOCK_TYPES",
    "CURRENT_SESSION_VERSION",
    "ENTRY_TYPES",
    "MESSAGE_ROLES",
    "AgentMessage",
    "AssistantBlock",
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
    "DeveloperMessage",
    "Entry",
    "EntryBase",
    "FileMentionMessage",
    "Header",
    "HookMessage",
    "ImageContent",
    "JsonDict",
    "LabelEntry",
    "LlmMessage",
    "McpToolSelectionEntry",
    "MessageEntry",
    "ModeChangeEntry",
    "ModelChangeEntry",
    "PythonExecutionMessage",
    "RedactedThinkingContent",
    "ServiceTierChangeEntry",
    "SessionInfoEntry",
    "SessionInitEntry",
    "StopReason",
    "StoredBlock",
    "StoredEntry",
    "StoredMessage",
    "TextContent",
    "ThinkingContent",
    "ThinkingLevelChangeEntry",
    "ToolCallContent",
    "ToolResultMessage",
    "TtsrInjectionEntry",
    "Usage",
    "UserBlock",
    "UserMessage",
    "entry_message",
    "is_assistant_message",
    "is_bash_execution_message",
    "is_branch_summary_entry",
    "is_branch_summary_message",
    "is_compaction_entry",
    "is_compaction_summary_message",
    "is_custom_entry",
    "is_custom_message_entry",
    "is_developer_message",
    "is_image_content",
    "is_label_entry",
    "is_message_entry",
    "is_model_change_entry",
    "is_text_content",
    "is_thinking_content",
    "is_tool_call_content",
    "is_tool_result_message",
    "is_user_message",
    "known_block",
    "known_entry",
    "known_message",
]

JsonDict = dict[str, Any]
"""Any JSON object decoded from or bound for a session file."""

StoredEntry = dict[str, Any]
"""One non-header line of a session file as read: ``{type, id, parentId, timestamp, ...}``,
its ``type`` possibly one this format does not define (see :func:`known_entry`)."""

Header = dict[str, Any]
"""Line 1 of a session file: ``{type: "session", version, id, timestamp, cwd, ...}``."""

StoredMessage = dict[str, Any]
"""A message as a ``message`` entry holds it or as built from an entry (has a ``role``), its
role possibly one this format does not define (see :func:`known_message`)."""

StoredBlock = dict[str, Any]
"""One block of message content as read, its ``type`` possibly unknown (:func:`known_block`)."""

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


class RedactedThinkingContent(TypedDict):
    """The fork's thinking block whose text the provider withheld."""

    type: Literal["redactedThinking"]
    data: str


class ToolCallContent(TypedDict):
    type: Literal["toolCall"]
    id: str
    name: str
    arguments: dict[str, Any]


UserBlock = TextContent | ImageContent
"""A block a user, developer, tool-result or custom message carries."""

AssistantBlock = TextContent | ThinkingContent | RedactedThinkingContent | ToolCallContent
"""A block an assistant message carries."""


# Messages (§2.2). ``timestamp`` is milliseconds since the epoch.


class UserMessage(TypedDict):
    role: Literal["user"]
    content: str | list[UserBlock]
    timestamp: NotRequired[int | float]


class DeveloperMessage(TypedDict):
    """The fork's agent-injected prompt (auto-continue, handoff); sent like a user message."""

    role: Literal["developer"]
    content: str | list[UserBlock]
    attribution: NotRequired[str]
    timestamp: NotRequired[int | float]


class AssistantMessage(TypedDict):
    role: Literal["assistant"]
    content: list[AssistantBlock] | str
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
    content: list[UserBlock] | str
    details: NotRequired[Any]
    isError: NotRequired[bool]
    prunedContent: NotRequired[list[UserBlock]]
    prunedAt: NotRequired[int | float]
    synthetic: NotRequired[bool]
    """Set on the result our provider view adds for a call that has none."""
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


class PythonExecutionMessage(TypedDict):
    """The fork's ``$code`` run (never sent to the model by pi's rules here)."""

    role: Literal["pythonExecution"]
    code: str
    output: str
    exitCode: NotRequired[int | None]
    cancelled: NotRequired[bool]
    truncated: NotRequired[bool]
    excludeFromContext: NotRequired[bool]
    timestamp: NotRequired[int | float]


class CustomMessage(TypedDict):
    role: Literal["custom"]
    customType: str
    content: str | list[UserBlock]
    display: NotRequired[bool]
    details: NotRequired[Any]
    timestamp: NotRequired[int | float]


class HookMessage(TypedDict):
    """The pre-v3 name of :class:`CustomMessage`."""

    role: Literal["hookMessage"]
    customType: NotRequired[str]
    content: str | list[UserBlock]
    display: NotRequired[bool]
    details: NotRequired[Any]
    timestamp: NotRequired[int | float]


class FileMentionMessage(TypedDict):
    """The fork's ``@file`` mention: ``files: [{path, content, lineCount?, ...}]``."""

    role: Literal["fileMention"]
    files: list[dict[str, Any]]
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
    message: StoredMessage
    """Its role may be unknown: type it with :func:`known_message` (or the ``is_*`` guards)."""


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
    content: str | list[UserBlock]
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


class ServiceTierChangeEntry(EntryBase):
    type: Literal["service_tier_change"]
    serviceTier: str | None


class TtsrInjectionEntry(EntryBase):
    type: Literal["ttsr_injection"]
    injectedRules: list[str]


class McpToolSelectionEntry(EntryBase):
    type: Literal["mcp_tool_selection"]
    selectedToolNames: list[str]


class SessionInitEntry(EntryBase):
    type: Literal["session_init"]
    systemPrompt: str
    task: str
    tools: list[Any]
    outputSchema: NotRequired[Any]


class ModeChangeEntry(EntryBase):
    type: Literal["mode_change"]
    mode: str
    data: NotRequired[Any]


# The unions: every shape this format defines, matched on its tag.

ContentBlock = (
    TextContent | ImageContent | ThinkingContent | RedactedThinkingContent | ToolCallContent
)
"""A content block of a known ``type`` (pi's four and the fork's ``redactedThinking``)."""

LlmMessage = UserMessage | DeveloperMessage | AssistantMessage | ToolResultMessage
"""A message after ``convert_to_llm``: what a model is sent."""

AgentMessage = (
    UserMessage
    | DeveloperMessage
    | AssistantMessage
    | ToolResultMessage
    | BashExecutionMessage
    | PythonExecutionMessage
    | CustomMessage
    | HookMessage
    | BranchSummaryMessage
    | CompactionSummaryMessage
    | FileMentionMessage
)
"""A message of a known ``role`` (:data:`MESSAGE_ROLES`)."""

Entry = (
    MessageEntry
    | ThinkingLevelChangeEntry
    | ModelChangeEntry
    | CompactionEntry
    | BranchSummaryEntry
    | CustomEntry
    | CustomMessageEntry
    | LabelEntry
    | SessionInfoEntry
    | ServiceTierChangeEntry
    | TtsrInjectionEntry
    | McpToolSelectionEntry
    | SessionInitEntry
    | ModeChangeEntry
)
"""An entry of a known ``type`` (:data:`ENTRY_TYPES`)."""

BLOCK_TYPES: Final = frozenset({"text", "image", "thinking", "redactedThinking", "toolCall"})
"""Content block types pi or its fork write. Others are kept and ignored."""


def _tag(value: object, key: str) -> object:
    """The tag (``type`` or ``role``) of a stored dict; ``None`` for anything else. This module
    (here and in ``known_message``/``known_block``) is where a tag read as an untyped value
    becomes a type."""
    if type(value) is dict:  # the usual case, ahead of the slower ABC check
        return value.get(key)
    return value.get(key) if isinstance(value, Mapping) else None


def known_entry(entry: Mapping[str, Any]) -> Entry | None:
    """``entry`` typed by its ``type`` (the same dict), or ``None`` when the type is not one
    this format defines: such entries stay in the file and the tree, and each reader decides
    what an unknown entry means for it."""
    tag = _tag(entry, "type")
    # A tag of another JSON type (a list, say) is not hashable: check it is a string first.
    # The same dict, typed by its tag: no cast() call (a function call per value; these run
    # for every message and block of every estimate and conversion).
    return entry if isinstance(tag, str) and tag in ENTRY_TYPES else None  # type: ignore[return-value]


def known_message(message: object) -> AgentMessage | None:
    """``message`` typed by its ``role`` (the same dict), or ``None`` when it is not an object
    or its role is not one this format defines (pi files may hold others: they are kept)."""
    # Read inline (no helper call): every estimate and conversion of a context comes here.
    role = message.get("role") if isinstance(message, dict) else None
    known = isinstance(role, str) and role in MESSAGE_ROLES
    return message if known else None  # type: ignore[return-value]  # the same dict, typed


def known_block(block: object) -> ContentBlock | None:
    """``block`` typed by its ``type`` (the same dict), or ``None`` when it is not an object
    or of a type this format does not define."""
    kind = block.get("type") if isinstance(block, dict) else None
    known = isinstance(kind, str) and kind in BLOCK_TYPES
    return block if known else None  # type: ignore[return-value]  # the same dict, typed


# Guards: a dict whose tag says it is one of the shapes above. They look at the tag only: in a
# damaged file a field may still be missing or of another type, so code that reads files keeps
# reading fields with .get and checking what it finds.


def entry_message(entry: Mapping[str, Any]) -> StoredMessage | None:
    """The message a ``message`` entry holds; ``None`` for other entries (and for a message
    entry whose ``message`` is not an object). Narrow it further with the message guards
    (``if is_tool_result_message(message := entry_message(entry)): ...``); ``entry`` itself
    stays a :data:`StoredEntry`, so it can still be passed on as one. Type the message with
    :func:`known_message` to match on its role."""
    message = entry.get("message") if _tag(entry, "type") == "message" else None
    return message if isinstance(message, dict) else None


def is_message_entry(entry: Mapping[str, Any]) -> TypeGuard[MessageEntry]:
    """A ``message`` entry holding a message object."""
    return _tag(entry, "type") == "message" and isinstance(entry.get("message"), dict)


def is_compaction_entry(entry: Mapping[str, Any]) -> TypeGuard[CompactionEntry]:
    return _tag(entry, "type") == "compaction"


def is_branch_summary_entry(entry: Mapping[str, Any]) -> TypeGuard[BranchSummaryEntry]:
    return _tag(entry, "type") == "branch_summary"


def is_custom_entry(entry: Mapping[str, Any]) -> TypeGuard[CustomEntry]:
    return _tag(entry, "type") == "custom"


def is_custom_message_entry(entry: Mapping[str, Any]) -> TypeGuard[CustomMessageEntry]:
    return _tag(entry, "type") == "custom_message"


def is_label_entry(entry: Mapping[str, Any]) -> TypeGuard[LabelEntry]:
    return _tag(entry, "type") == "label"


def is_model_change_entry(entry: Mapping[str, Any]) -> TypeGuard[ModelChangeEntry]:
    return _tag(entry, "type") == "model_change"


def is_user_message(message: object) -> TypeGuard[UserMessage]:
    return isinstance(message, dict) and _tag(message, "role") == "user"


def is_assistant_message(message: object) -> TypeGuard[AssistantMessage]:
    return isinstance(message, dict) and _tag(message, "role") == "assistant"


def is_tool_result_message(message: object) -> TypeGuard[ToolResultMessage]:
    return isinstance(message, dict) and _tag(message, "role") == "toolResult"


def is_bash_execution_message(message: object) -> TypeGuard[BashExecutionMessage]:
    return isinstance(message, dict) and _tag(message, "role") == "bashExecution"


def is_developer_message(message: object) -> TypeGuard[DeveloperMessage]:
    return isinstance(message, dict) and _tag(message, "role") == "developer"


def is_branch_summary_message(message: object) -> TypeGuard[BranchSummaryMessage]:
    return isinstance(message, dict) and _tag(message, "role") == "branchSummary"


def is_compaction_summary_message(message: object) -> TypeGuard[CompactionSummaryMessage]:
    return isinstance(message, dict) and _tag(message, "role") == "compactionSummary"


def is_text_content(block: object) -> TypeGuard[TextContent]:
    return isinstance(block, dict) and _tag(block, "type") == "text"


def is_image_content(block: object) -> TypeGuard[ImageContent]:
    return isinstance(block, dict) and _tag(block, "type") == "image"


def is_thinking_content(block: object) -> TypeGuard[ThinkingContent]:
    return isinstance(block, dict) and _tag(block, "type") == "thinking"


def is_tool_call_content(block: object) -> TypeGuard[ToolCallContent]:
    return isinstance(block, dict) and _tag(block, "type") == "toolCall"
