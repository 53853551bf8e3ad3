"""What the model sees: rebuild a leaf's messages and convert them for an LLM."""

from contextree.context.build import (
    ModelRef,
    SessionContext,
    build_context_from_path,
    build_session_context,
    message_from_entry,
)
from contextree.context.convert import (
    bash_execution_to_text,
    branch_summary_text,
    compaction_summary_text,
    convert_to_llm,
)

__all__ = [
    "ModelRef",
    "SessionContext",
    "bash_execution_to_text",
    "branch_summary_text",
    "build_context_from_path",
    "build_session_context",
    "compaction_summary_text",
    "convert_to_llm",
    "message_from_entry",
]
