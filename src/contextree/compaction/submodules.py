"""A package's submodule as its attribute, loaded on first use: the compaction packages load
their heavier names lazily (``__getattr__``), so a submodule is no attribute of its package
until something imports it (``contextree.compaction.prune`` was one while the package
imported it itself)."""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType

__all__ = ["submodule"]


def submodule(package: str, name: str) -> ModuleType:
    """``package.name`` imported, for the package's ``__getattr__``; :class:`AttributeError`
    (as for any missing attribute) when there is no such submodule."""
    if not name.startswith("_") and importlib.util.find_spec(f"{package}.{name}"):
        return importlib.import_module(f"{package}.{name}")
    raise AttributeError(f"module {package!r} has no attribute {name!r}")
