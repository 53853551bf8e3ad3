"""A fake OpenAI-compatible server whose usage measures the request, for the LangChain tests.

:class:`MeasuringFakeServer` is :class:`~fakes.fake_llm.FakeLLMServer` with one change: a
scripted reply's ``input`` usage is what the request it answers holds (its messages and tools,
JSON characters / 4, times ``scale``) unless the script gave one. A provider measures the
prompt it got, so after a compaction the reported usage falls, as it does with a real model;
a fixed script cannot know how large each request of an agent loop will be.
"""

from __future__ import annotations

import dataclasses
import json

from fakes.fake_llm import FakeLLMServer, RecordedRequest, _Reply

__all__ = ["MeasuringFakeServer", "measured_tokens"]


def measured_tokens(body: object, scale: float = 1.0) -> int:
    """The prompt size of a chat-completions body as the server reports it."""
    if not isinstance(body, dict):
        return 0
    size = len(json.dumps(body.get("messages", []))) + len(json.dumps(body.get("tools", [])))
    return int(size / 4 * scale)


class MeasuringFakeServer(FakeLLMServer):
    """Reports each request's measured size as its ``input`` usage (see the module doc)."""

    def __init__(self, scale: float = 1.0) -> None:
        super().__init__()
        self.scale = scale

    def _record_and_pop(self, request: RecordedRequest) -> _Reply:
        reply = super()._record_and_pop(request)
        if reply.kind != "text" or "measured" not in reply.usage:
            return reply
        usage = {key: value for key, value in reply.usage.items() if key != "measured"}
        usage["input"] = measured_tokens(request.body, self.scale)
        return dataclasses.replace(reply, usage=usage)
