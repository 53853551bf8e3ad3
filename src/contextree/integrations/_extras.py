"""The one check every framework integration makes first: is its framework installed?"""

from __future__ import annotations

import importlib
from collections.abc import Sequence

__all__ = ["require_framework"]


def require_framework(integration: str, modules: Sequence[str], *, needs: str, extra: str) -> None:
    """Import ``modules`` or raise ``ImportError`` with the extra that installs them.

    Called at the top of ``contextree.integrations.<integration>`` so that a missing
    framework fails there, with the install hint, rather than deep inside a conversion.
    """
    try:
        for module in modules:
            importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(
            f"contextree.integrations.{integration} needs {needs}: "
            f'pip install "contextree[{extra}]"'
        ) from exc
