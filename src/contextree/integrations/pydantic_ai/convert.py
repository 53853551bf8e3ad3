"""Conversion between pydantic-ai ``ModelMessage``s and pi session messages.

What both sides can express maps field to field:

| pydantic-ai | pi |
|---|---|
| ``ModelRequest`` > ``UserPromptPart`` (text, images as ``BinaryContent``) | ``user`` |
| ``ModelRequest`` > ``ToolReturnPart`` (``outcome`` failed/retried: ``isError``) | ``toolResult`` |
| ``ModelRequest`` > ``RetryFeedbackPart`` | ``user`` (the text the model is shown) |
| ``ModelRequest`` > ``CompactionPart`` (a summary no provider wrote) | ``compactionSummary`` |
| ``ModelResponse`` > ``TextPart``, ``ThinkingPart``, ``ToolCallPart`` | ``assistant`` blocks |
| ``ModelResponse.usage`` (input includes cached tokens) | ``usage`` (``input`` excludes them) |
| ``finish_reason`` ``stop``, ``length``, ``tool_call``, ``error`` | ``stopReason`` ``stop``, |
| | ``length``, ``toolUse``, ``error`` |

Timestamps are kept to the millisecond (pi's precision).

Everything only one side has travels along so that a round trip gives back what went in:

- pydantic-ai only (ids, ``run_id``, ``provider_details``, system prompts, request boundaries,
  parts pi has no block for): under the ``"pydanticAi"`` key of the pi message or block. pi
  ignores keys it does not know; contextree keeps them. System prompts and other parts pi has
  no message for ride on the first pi message of their request, with their positions.
- pi only (``api``, ``errorMessage``, tool ``details``, roles pydantic-ai has no part for):
  under ``metadata["contextree"]["pi"]`` of the ``ModelRequest`` / ``ModelResponse``, which
  pydantic-ai never sends to a model. A pi message pydantic-ai cannot express (``bashExecution``,
  ``custom``, ``branchSummary``...) becomes the user text contextree would send for it.

The text of a message is never copied into that extra data, so redacting what the session
stores (``contextree.security``) redacts all of it.
"""

from __future__ import annotations

from contextree.integrations.pydantic_ai.convert_shared import EXTRA_KEY, METADATA_KEY
from contextree.integrations.pydantic_ai.from_pi import ConversionCache, pi_to_model_messages
from contextree.integrations.pydantic_ai.to_pi import model_messages_to_pi

__all__ = [
    "EXTRA_KEY",
    "METADATA_KEY",
    "ConversionCache",
    "model_messages_to_pi",
    "pi_to_model_messages",
]
