"""Run the benchmarks from a source checkout without installing contextree."""

from __future__ import annotations

import sys
from pathlib import Path

__all__ = ["ensure_importable"]


ROOT = Path(__file__).resolve().parent.parent


def ensure_importable(*, with_tests: bool = False) -> None:
    """Put ``src`` on the path when contextree is not installed; with ``with_tests`` also
    ``tests`` (the harnesses a bench drives, e.g. the fake model server)."""
    if with_tests and str(ROOT / "tests") not in sys.path:
        sys.path.insert(0, str(ROOT / "tests"))
    try:
        import contextree  # noqa: F401
    except ImportError:
        sys.path.insert(0, str(ROOT / "src"))
