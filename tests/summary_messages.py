"""pi-shaped messages for summarizer tests: a user line, an assistant turn with tool calls, a
tool result."""

from __future__ import annotations

from typing import Any

Message = dict[str, Any]

_ids = iter(range(1_000_000))


def _user(text: str) -> Message:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1}


def _say(text: str, *calls: Message) -> Message:
    content: list[Message] = [{"type": "text", "text": text}] if text else []
    return {"role": "assistant", "content": [*content, *calls], "stopReason": "stop"}


def _call(name: str, **arguments: object) -> Message:
    return {"type": "toolCall", "id": f"c{next(_ids)}", "name": name, "arguments": arguments}


def _result(text: str, *, tool: str = "bash", is_error: bool = False) -> Message:
    return {
        "role": "toolResult",
        "toolCallId": "c",
        "toolName": tool,
        "content": [{"type": "text", "text": text}],
        "isError": is_error,
    }


def _developer(text: str) -> Message:
    return {"role": "developer", "content": [{"type": "text", "text": text}], "timestamp": 1}
