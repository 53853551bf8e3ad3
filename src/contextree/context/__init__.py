"""What the model sees: rebuild a leaf's messages, convert them for an LLM, and make them
provider-valid for a request (``provider_messages``)."""

from contextree.context.build import (
    ModelRef,
    SessionContext,
    appended_context,
    build_context_from_path,
    build_session_context,
    message_from_entry,
)
from contextree.context.convert import (
    bash_execution_to_text,
    branch_summary_text,
    compaction_summary_text,
    convert_message,
    convert_to_llm,
)
from contextree.context.provider import (
    DROPPED_STOP_REASONS,
    MISSING_RESULT_TEXT,
    ProviderView,
    provider_messages,
)

__all__ = [
    "DROPPED_STOP_REASONS",
    "MISSING_RESULT_TEXT",
    "ModelRef",
    "ProviderView",
    "SessionContext",
    "appended_context",
    "bash_execution_to_text",
    "branch_summary_text",
    "build_context_from_path",
    "build_session_context",
    "compaction_summary_text",
    "convert_message",
    "convert_to_llm",
    "message_from_entry",
    "provider_messages",
]
