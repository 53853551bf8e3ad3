"""pi-shaped messages for generated sessions (user, assistant, tool calls and results, system)."""

from __future__ import annotations

from typing import Any

__all__ = ["Message", "assistant", "bash_result", "call", "system", "tool_result", "user"]

Message = dict[str, Any]


def _now() -> int:
    return 0  # the corpus sets timestamps from its seed


def user(text: str) -> Message:
    """A user message with one text block."""
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": _now()}


def system(text: str, *, custom: bool) -> Message:
    """A system/developer message: the fork's ``developer`` role, or a hook's ``custom``
    message (which the model sees as user text)."""
    content = [{"type": "text", "text": text}]
    if custom:
        return {
            "role": "custom",
            "customType": "system-note",
            "content": content,
            "display": False,
            "timestamp": _now(),
        }
    return {"role": "developer", "content": content, "timestamp": _now()}


def call(call_id: str, name: str, **arguments: object) -> Message:
    """A tool-call block of an assistant message."""
    return {"type": "toolCall", "id": call_id, "name": name, "arguments": arguments}


def assistant(text: str, *calls: Message) -> Message:
    """An assistant message: its text (if any), then its tool calls."""
    content: list[Message] = [{"type": "text", "text": text}] if text else []
    return {
        "role": "assistant",
        "content": [*content, *calls],
        "api": "openai-completions",
        "provider": "eval",
        "model": "scripted",
        "usage": {
            "input": 0,
            "output": 0,
            "cacheRead": 0,
            "cacheWrite": 0,
            "totalTokens": 0,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
        },
        "stopReason": "toolUse" if calls else "stop",
        "timestamp": _now(),
    }


def tool_result(call_id: str, name: str, text: str, *, is_error: bool = False) -> Message:
    """The result of the tool call ``call_id``."""
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": name,
        "content": [{"type": "text", "text": text}],
        "isError": is_error,
        "timestamp": _now(),
    }


def bash_result(call_id: str, output: str, exit_code: int = 0) -> Message:
    """A bash tool result as pi writes it: a non-zero exit code ends the text."""
    text = output.rstrip("\n") or "(no output)"
    if exit_code:
        text += f"\n\nCommand exited with code {exit_code}"
    return tool_result(call_id, "bash", text, is_error=exit_code != 0)
