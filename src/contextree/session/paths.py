"""Where sessions live by default, named as pi names them (pi-behaviour §1.1)."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

from contextree.entries.ids import iso_now

__all__ = [
    "contextree_home",
    "latest_session",
    "new_session_path",
    "sessions_dir",
    "sessions_root",
]


def contextree_home(env: Mapping[str, str] | None = None) -> Path:
    """``$CONTEXTREE_HOME``, default ``~/.config/contextree``."""
    env = os.environ if env is None else env
    if env.get("CONTEXTREE_HOME"):
        return Path(env["CONTEXTREE_HOME"])
    return Path(env.get("HOME", str(Path.home()))) / ".config" / "contextree"


def sessions_root(env: Mapping[str, str] | None = None) -> Path:
    """``<home>/sessions``: the folder holding one session folder per working directory."""
    return contextree_home(env) / "sessions"


def sessions_dir(cwd: Path, env: Mapping[str, str] | None = None) -> Path:
    """``<home>/sessions/--<cwd with / \\ : as ->--/`` (pi's directory naming)."""
    slug = re.sub(r"[/\\:]", "-", str(cwd).lstrip("/\\"))
    return contextree_home(env) / "sessions" / f"--{slug}--"


def new_session_path(cwd: Path, session_id: str, env: Mapping[str, str] | None = None) -> Path:
    """``<timestamp with : and . as ->_<id>.jsonl`` in :func:`sessions_dir`."""
    stamp = iso_now().replace(":", "-").replace(".", "-")
    return sessions_dir(cwd, env) / f"{stamp}_{session_id}.jsonl"


def latest_session(cwd: Path, env: Mapping[str, str] | None = None) -> Path | None:
    """The most recently modified session file for ``cwd``, or ``None``."""
    folder = sessions_dir(cwd, env)
    if not folder.is_dir():
        return None
    files = [p for p in folder.glob("*.jsonl") if p.is_file()]
    return max(files, key=lambda p: p.stat().st_mtime) if files else None
