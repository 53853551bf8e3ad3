"""The pip command that adds an extra to this installation of contextree.

``pip install "contextree[tui]"`` is right for an install from an index, but from a checkout it
installs a second contextree from PyPI (or fails); there the extra comes from the checkout.
"""

from __future__ import annotations

from pathlib import Path

import contextree

__all__ = ["checkout_root", "install_command"]


def checkout_root() -> Path | None:
    """The source tree this contextree is imported from (an editable install, or ``src`` on
    the path), or ``None`` for an installed copy (in site-packages)."""
    root = Path(contextree.__file__).resolve().parent.parent.parent  # src/contextree/__init__.py
    project = root / "pyproject.toml"
    try:
        text = project.read_text(encoding="utf-8")
    except OSError:
        return None
    return root if 'name = "contextree"' in text else None


def install_command(extra: str, *, cwd: Path | None = None) -> str:
    """``pip install -e ".[extra]"`` (the checkout's path unless it is ``cwd``) from a
    checkout, else ``pip install "contextree[extra]"``."""
    root = checkout_root()
    if root is None:
        return f'pip install "contextree[{extra}]"'
    here = (cwd or Path.cwd()).resolve()
    where = "." if here == root else str(root)
    return f'pip install -e "{where}[{extra}]"'
