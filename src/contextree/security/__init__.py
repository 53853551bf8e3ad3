"""Keeping secrets out of what contextree sends away: redaction before summarization."""

from contextree.security.redact import (
    BUILTIN_PATTERNS,
    DEFAULT_REDACTOR,
    RedactionSettings,
    Redactor,
    environment_secrets,
)

__all__ = [
    "BUILTIN_PATTERNS",
    "DEFAULT_REDACTOR",
    "RedactionSettings",
    "Redactor",
    "environment_secrets",
]
