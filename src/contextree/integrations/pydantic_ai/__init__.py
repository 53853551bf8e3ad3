"""pydantic-ai on a contextree session (extra ``[pydantic-ai]``).

- :class:`SessionHistory`: a pydantic-ai capability that keeps an agent's conversation in a
  session file and compacts it when it grows past the threshold; its
  :meth:`~SessionHistory.processor` is the same as a plain history processor
  (``ProcessHistory``).
- :func:`model_messages_to_pi` / :func:`pi_to_model_messages`: the conversion both ways.

Importing this module imports pydantic-ai; importing ``contextree`` never does.
"""

from __future__ import annotations

from contextree.integrations._extras import require_framework

require_framework("pydantic_ai", ("pydantic_ai",), needs="pydantic-ai", extra="pydantic-ai")

from contextree.integrations.pydantic_ai.convert import (  # noqa: E402 - after the check
    EXTRA_KEY,
    METADATA_KEY,
    model_messages_to_pi,
    pi_to_model_messages,
)
from contextree.integrations.pydantic_ai.history import SessionHistory  # noqa: E402

__all__ = [
    "EXTRA_KEY",
    "METADATA_KEY",
    "SessionHistory",
    "model_messages_to_pi",
    "pi_to_model_messages",
]
