"""Keeping secrets out of what contextree sends away: redaction before summarization."""

from contextree.security.redact import (
    BUILTIN_PATTERNS,
    DEFAULT_REDACTOR,
    RedactionSettings,
    Redactor,
)

__all__ = ["BUILTIN_PATTERNS", "DEFAULT_REDACTOR", "RedactionSettings", "Redactor"]
