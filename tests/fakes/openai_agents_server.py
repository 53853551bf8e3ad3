"""The fake OpenAI-compatible server for the OpenAI Agents SDK tests: usage as measured.

A provider reports the prompt tokens of the request it got. :class:`MeasuringFakeServer` does
the same (chars/4 of the request's ``messages``, times ``scale``), so a conversation driven by
the SDK's runner crosses the compaction threshold when its requests really grow, and falls
back under it once the session was compacted. Everything else is :class:`FakeLLMServer`.
"""

from __future__ import annotations

import json
from typing import Any

from fakes.fake_llm import FakeLLMServer, RecordedRequest

__all__ = ["MeasuringFakeServer", "prompt_tokens"]


def prompt_tokens(body: Any, scale: float = 1.0) -> int:
    """The prompt tokens the server reports for a request body: chars/4 of its messages."""
    messages = body.get("messages") if isinstance(body, dict) else None
    return int(len(json.dumps(messages or [])) / 4 * scale)


class MeasuringFakeServer(FakeLLMServer):
    """:class:`FakeLLMServer` whose scripted replies report the request's size as input."""

    scale: float = 1.0

    def _record_and_pop(self, request: RecordedRequest) -> Any:
        reply = super()._record_and_pop(request)
        if reply.kind == "text":
            reply.usage = {**reply.usage, "input": prompt_tokens(request.body, self.scale)}
        return reply
