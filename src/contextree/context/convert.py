"""Turn session messages into the messages a model sees (pi-behaviour.md §3.2).

Models only know ``user``, ``assistant`` and ``toolResult`` (plus the fork's ``developer``).
Every other role the session stores is rewritten as a ``user`` message or dropped:

| role | becomes |
|---|---|
| ``user``, ``assistant``, ``developer`` | unchanged |
| ``toolResult`` | unchanged; once pruned (``prunedAt``) only its text, or a placeholder |
| ``custom``, ``hookMessage`` | ``user`` with the same content blocks |
| ``bashExecution`` | ``user`` text saying what ran and what it printed, unless excluded |
| ``branchSummary``, ``compactionSummary`` | ``user`` text wrapping the summary |
| anything else | dropped |

Unchanged messages are returned as they are (the same dicts); treat the result as read-only.
Input messages are never modified.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Final, assert_never, cast

from contextree.entries.js_json import js_stringify
from contextree.entries.types import (
    AgentMessage,
    BashExecutionMessage,
    LlmMessage,
    StoredMessage,
    TextContent,
    ToolResultMessage,
    UserMessage,
    is_text_content,
    is_user_message,
    known_message,
)

if TYPE_CHECKING:
    from contextree.context.build import SessionContext

__all__ = [
    "PRUNED_OUTPUT_PLACEHOLDER",
    "RECALL_HINT",
    "bash_execution_to_text",
    "branch_summary_text",
    "compaction_summary_text",
    "context_json",
    "convert_message",
    "convert_to_llm",
    "with_recall_hint",
]

PRUNED_OUTPUT_PLACEHOLDER: Final = "[Output truncated]"
"""What a pruned tool result says when none of its text survived (the fork's wording)."""

# Our own wording (DESIGN: borrowed prose stays out); the <summary> tags are what pi uses.
_COMPACTION_PREAMBLE: Final = (
    "Earlier turns of this conversation were condensed to save space. The summary below is "
    "the record of what happened before this point; treat it as context you already have "
    "and continue from it."
)
_BRANCH_PREAMBLE: Final = (
    "Before arriving here, this conversation explored another branch and then came back. "
    "The summary below records what happened on that branch; it is context, not part of "
    "the current path."
)


RECALL_HINT: Final = (
    "Details this summary leaves out are still on record: look them up with the recall tool."
)
"""The line our provider view adds to the compaction summary's wrapper when a ``recall`` tool
is offered (never in pi's context, which must stay equal to pi's)."""


def with_recall_hint(messages: list[LlmMessage]) -> list[LlmMessage]:
    """``messages`` with :data:`RECALL_HINT` added to the compaction summary's wrapper (a new
    list; the summary message is copied, the others are the same objects)."""
    out = list(messages)
    for index, message in enumerate(out):
        content = message.get("content")
        if not is_user_message(message) or not isinstance(content, list) or len(content) != 1:
            continue
        block = content[0]
        text = block.get("text") if isinstance(block, dict) else None
        if isinstance(text, str) and text.startswith(_COMPACTION_PREAMBLE + "\n\n<summary>"):
            hinted = text.replace(_COMPACTION_PREAMBLE, f"{_COMPACTION_PREAMBLE} {RECALL_HINT}", 1)
            hinted_block = cast("TextContent", {**block, "text": hinted})
            hinted_message: UserMessage = {**message, "content": [hinted_block]}
            out[index] = hinted_message
            break  # a context holds one compaction summary, first
    return out


def compaction_summary_text(summary: str) -> str:
    """The user text a ``compactionSummary`` message becomes."""
    return f"{_COMPACTION_PREAMBLE}\n\n<summary>\n{summary}\n</summary>"


def branch_summary_text(summary: str) -> str:
    """The user text a ``branchSummary`` message becomes."""
    return f"{_BRANCH_PREAMBLE}\n\n<summary>\n{summary}\n</summary>"


def bash_execution_to_text(message: BashExecutionMessage | StoredMessage) -> str:
    """The user text a ``bashExecution`` message becomes (pi's ``bashExecutionToText``)."""
    command = message.get("command")
    output = message.get("output")
    text = f"Ran `{command if isinstance(command, str) else ''}`\n"
    if isinstance(output, str) and output:
        text += f"```\n{output}\n```"
    else:
        text += "(no output)"
    exit_code = message.get("exitCode")
    if message.get("cancelled"):
        text += "\n\n(command cancelled)"
    elif _is_number(exit_code) and exit_code != 0:
        text += f"\n\nCommand exited with code {js_stringify(exit_code)}"
    full_output_path = message.get("fullOutputPath")
    if message.get("truncated") and isinstance(full_output_path, str) and full_output_path:
        text += f"\n\n[Output truncated. Full output: {full_output_path}]"
    return text


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def convert_to_llm(messages: Iterable[StoredMessage | AgentMessage]) -> list[LlmMessage]:
    """The messages a model sees for ``messages``, in order (see the module docstring)."""
    converted: list[LlmMessage] = []
    for message in messages:
        llm_message = convert_message(message)
        if llm_message is not None:
            converted.append(llm_message)
    return converted


def context_json(context: SessionContext) -> dict[str, Any]:
    """``context`` as ``contextree context --format json`` prints it: ``thinkingLevel``,
    ``model`` (``{provider, modelId}`` or ``None``) and the converted ``messages``, each with
    the id of the entry it comes from as its first key ``entryId`` (the compaction's id for the
    summary; the message's own keys follow unchanged)."""
    messages: list[dict[str, Any]] = [
        {"entryId": entry_id, **llm_message}
        for message, entry_id in zip(context.messages, context.entry_ids, strict=False)
        for llm_message in convert_to_llm([message])
    ]
    model = context.model
    return {
        "thinkingLevel": context.thinking_level,
        "model": {"provider": model.provider, "modelId": model.model_id} if model else None,
        "messages": messages,
    }


def convert_message(message: object) -> LlmMessage | None:
    """What a model sees for one agent message, or ``None`` (not sent)."""
    known = known_message(message)
    if known is None:
        # Not an object, or a role this format does not define (a pi file may hold one: it is
        # kept in the file and sent nowhere).
        return None
    match known["role"]:
        # pi drops "developer"; the fork sends it to the model as is, and so do we.
        case "user" | "assistant" | "developer":
            return known
        case "toolResult":
            return _pruned_tool_result(known) if known.get("prunedAt") is not None else known
        case "custom" | "hookMessage":
            return _user(known, _custom_content(known.get("content")))
        case "bashExecution":
            if known.get("excludeFromContext"):
                return None
            return _user(known, [_text(bash_execution_to_text(known))])
        case "branchSummary":
            return _user(known, [_text(branch_summary_text(_summary(known)))])
        case "compactionSummary":
            return _user(known, [_text(compaction_summary_text(_summary(known)))])
        case "pythonExecution" | "fileMention":
            return None  # the fork's own roles: not part of pi's context
        case _:
            assert_never(known)


def _pruned_tool_result(message: ToolResultMessage) -> ToolResultMessage:
    # The fork's rule: a pruned result keeps only its text (images dropped), or a placeholder.
    content: object = message.get("content")  # a damaged file may hold anything here
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        text = "".join(
            block["text"]
            for block in content
            if is_text_content(block) and isinstance(block.get("text"), str)
        )
    else:
        text = ""
    kept = {key: value for key, value in message.items() if key != "prunedContent"}
    converted = cast("ToolResultMessage", kept)
    converted["content"] = [_text(text or PRUNED_OUTPUT_PLACEHOLDER)]
    return converted


def _custom_content(content: object) -> list[Any]:
    if isinstance(content, str):
        return [_text(content)]
    if isinstance(content, list):
        return list(content)
    return []


def _summary(message: AgentMessage) -> str:
    summary = message.get("summary")
    return summary if isinstance(summary, str) else ""


def _text(text: str) -> TextContent:
    return {"type": "text", "text": text}


def _user(source: AgentMessage, content: list[Any]) -> UserMessage:
    converted: UserMessage = {"role": "user", "content": content}
    if "timestamp" in source:
        converted["timestamp"] = source["timestamp"]
    return converted
