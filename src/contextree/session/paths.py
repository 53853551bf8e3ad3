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
    "pi_sessions_dir",
    "pi_sessions_root",
    "session_dirs",
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
    return contextree_home(env) / "sessions" / _slug(cwd)


def _slug(cwd: Path) -> str:
    return "--" + re.sub(r"[/\\:]", "-", str(cwd).lstrip("/\\")) + "--"


def pi_sessions_root(env: Mapping[str, str] | None = None) -> Path:
    """pi's ``~/.pi/agent/sessions`` (pi-behaviour §1.1)."""
    env = os.environ if env is None else env
    return Path(env.get("HOME", str(Path.home()))) / ".pi" / "agent" / "sessions"


def pi_sessions_dir(cwd: Path, env: Mapping[str, str] | None = None) -> Path:
    """pi's session folder for ``cwd``: ``~/.pi/agent/sessions/--<cwd, / \\ : as ->--/``."""
    return pi_sessions_root(env) / _slug(cwd)


def session_dirs(cwd: Path, env: Mapping[str, str] | None = None) -> list[Path]:
    """Where ``cwd``'s sessions are: :func:`sessions_dir`, then pi's folder for ``cwd`` when it
    exists and is another folder."""
    ours = sessions_dir(cwd, env)
    pi = pi_sessions_dir(cwd, env)
    return [ours, pi] if pi.is_dir() and not _same(ours, pi) else [ours]


def _same(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return a == b


def new_session_path(cwd: Path, session_id: str, env: Mapping[str, str] | None = None) -> Path:
    """``<timestamp with : and . as ->_<id>.jsonl`` in :func:`sessions_dir`."""
    stamp = iso_now().replace(":", "-").replace(".", "-")
    return sessions_dir(cwd, env) / f"{stamp}_{session_id}.jsonl"


def latest_session(cwd: Path, env: Mapping[str, str] | None = None) -> Path | None:
    """The most recently modified session file for ``cwd`` in :func:`session_dirs` (ours and
    pi's), or ``None``."""
    files = [
        p
        for folder in session_dirs(cwd, env)
        if folder.is_dir()
        for p in folder.glob("*.jsonl")
        if p.is_file()
    ]
    return max(files, key=lambda p: p.stat().st_mtime) if files else None
