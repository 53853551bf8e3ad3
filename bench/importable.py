"""Run the benchmarks from a source checkout without installing contextree."""

from __future__ import annotations

import sys
from pathlib import Path

__all__ = ["ensure_importable"]


def ensure_importable() -> None:
    """Put ``src`` on the path when contextree is not installed."""
    try:
        import contextree  # noqa: F401
    except ImportError:
        sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))
