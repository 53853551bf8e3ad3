"""pydantic-ai on a contextree session (extra ``[pydantic-ai]``).

- :class:`SessionHistory`: a pydantic-ai capability that keeps an agent's conversation in a
  session file and compacts it when it grows past the threshold; its
  :meth:`~SessionHistory.processor` is the same as a plain history processor
  (``ProcessHistory``).
- :func:`model_messages_to_pi` / :func:`pi_to_model_messages`: the conversion both ways.

Importing this module imports pydantic-ai; importing ``contextree`` never does.
"""

from __future__ import annotations

try:
    import pydantic_ai as _pydantic_ai  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised in a subprocess test
    raise ImportError(
        "contextree.integrations.pydantic_ai needs pydantic-ai: "
        'pip install "contextree[pydantic-ai]"'
    ) from exc

from contextree.integrations.pydantic_ai.convert import (
    EXTRA_KEY,
    METADATA_KEY,
    model_messages_to_pi,
    pi_to_model_messages,
)
from contextree.integrations.pydantic_ai.history import SessionHistory

__all__ = [
    "EXTRA_KEY",
    "METADATA_KEY",
    "SessionHistory",
    "model_messages_to_pi",
    "pi_to_model_messages",
]
