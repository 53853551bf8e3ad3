"""Where sessions live by default, named as pi names them (pi-behaviour §1.1).

Besides our own folder, the session listing and ``chat --continue`` look in pi's
(``~/.pi/agent/sessions/--<cwd>--/``) and oh-my-pi's (``~/.omp/agent/sessions/<name>/``; the
name is relative to the home or temp folder, see :func:`omp_sessions_dir`).
"""

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
    "omp_sessions_dir",
    "omp_sessions_root",
    "pi_sessions_dir",
    "pi_sessions_root",
    "session_dirs",
    "session_roots",
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


def omp_sessions_root(env: Mapping[str, str] | None = None) -> Path:
    """oh-my-pi's sessions folder: ``~/.omp/agent/sessions`` (``PI_CONFIG_DIR`` renames
    ``.omp``), or ``$XDG_DATA_HOME/omp/sessions`` once ``$XDG_DATA_HOME/omp`` exists (its
    ``omp config init-xdg`` layout)."""
    env = os.environ if env is None else env
    xdg = env.get("XDG_DATA_HOME")
    if xdg and (Path(xdg) / "omp").is_dir():
        return Path(xdg) / "omp" / "sessions"
    home = Path(env.get("HOME", str(Path.home())))
    return home / (env.get("PI_CONFIG_DIR") or ".omp") / "agent" / "sessions"


def omp_sessions_dir(cwd: Path, env: Mapping[str, str] | None = None) -> Path:
    """oh-my-pi's session folder for ``cwd``, named from the real path of ``cwd``:

    - under the home folder: ``-`` and the relative path with ``/ \\ :`` as ``-``
      (``~/src/app`` -> ``-src-app``; the home folder itself is ``-``);
    - under the temp folder (``$TMPDIR``, default ``/tmp``): ``-tmp-`` and the relative path;
    - elsewhere: pi's ``--<path>--``.
    """
    env = os.environ if env is None else env
    real = _real(cwd)
    home = _real(Path(env.get("HOME", str(Path.home()))))
    temp = _real(Path((env.get("TMPDIR") or "/tmp").rstrip("/") or "/"))
    if real == home or real.is_relative_to(home):
        name = _relative_name("-", real.relative_to(home))
    elif real == temp or real.is_relative_to(temp):
        name = _relative_name("-tmp", real.relative_to(temp))
    else:
        name = _slug(real)
    return omp_sessions_root(env) / name


def _real(path: Path) -> Path:
    try:
        return Path(os.path.realpath(path))
    except OSError:
        return Path(os.path.abspath(path))


def _relative_name(prefix: str, relative: Path) -> str:
    encoded = re.sub(r"[/\\:]", "-", "" if str(relative) == "." else str(relative))
    if not encoded:
        return prefix
    return f"{prefix}{encoded}" if prefix.endswith("-") else f"{prefix}-{encoded}"


def session_dirs(cwd: Path, env: Mapping[str, str] | None = None) -> list[Path]:
    """Where ``cwd``'s sessions are: :func:`sessions_dir`, then pi's and oh-my-pi's folders for
    ``cwd`` when they exist (each folder once)."""
    return _existing_others(
        sessions_dir(cwd, env), pi_sessions_dir(cwd, env), omp_sessions_dir(cwd, env)
    )


def session_roots(env: Mapping[str, str] | None = None) -> list[Path]:
    """Every sessions folder (``sessions --all``): ours, then pi's and oh-my-pi's when they
    exist (each folder once)."""
    return _existing_others(sessions_root(env), pi_sessions_root(env), omp_sessions_root(env))


def _existing_others(ours: Path, *others: Path) -> list[Path]:
    found = [ours]
    for other in others:
        if other.is_dir() and not any(_same(other, seen) for seen in found):
            found.append(other)
    return found


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
    """The most recently modified session file for ``cwd`` in :func:`session_dirs` (ours,
    pi's and oh-my-pi's), or ``None``."""
    files = [
        p
        for folder in session_dirs(cwd, env)
        if folder.is_dir()
        for p in folder.glob("*.jsonl")
        if p.is_file()
    ]
    return max(files, key=lambda p: p.stat().st_mtime) if files else None
