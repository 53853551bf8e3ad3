"""Entry and message shapes of pi session files, their ids and their JSON codec."""

from contextree.entries.codec import decode_object, encode_line
from contextree.entries.ids import iso_now, new_entry_id, new_session_id
from contextree.entries.types import (
    CURRENT_SESSION_VERSION,
    ENTRY_TYPES,
    MESSAGE_ROLES,
    AgentMessage,
    ContentBlock,
    Entry,
    Header,
    JsonDict,
    LlmMessage,
    Usage,
)

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
    "Usage",
    "decode_object",
    "encode_line",
    "iso_now",
    "new_entry_id",
    "new_session_id",
]
