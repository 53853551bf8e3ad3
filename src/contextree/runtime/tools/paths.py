"""Resolving the paths file tools receive, and keeping them inside the working directory."""

from __future__ import annotations

from pathlib import Path

from contextree.runtime.tools.base import ToolContext, ToolError

__all__ = ["resolve_path"]


def resolve_path(path: str, ctx: ToolContext) -> Path:
    """Turn a path from a tool call into the real path the tool should use.

    A relative path resolves against ``ctx.cwd``; an absolute one is taken as is; a leading ``~``
    is expanded. Symlinks are resolved, so unless ``ctx.allow_outside_cwd`` is set, a link inside
    the working directory that points outside it is refused like ``../x`` is. Components that do
    not exist yet (a file ``write`` creates) are kept as written.

    Raises:
        ToolError: the path is empty or lies outside the working directory.
    """
    if not path.strip():
        raise ToolError("path must not be empty")
    if "\0" in path:
        raise ToolError(f"path {path!r} contains a NUL character")
    cwd = ctx.cwd.resolve()
    try:
        real = (cwd / Path(path).expanduser()).resolve()
    except (OSError, RuntimeError) as exc:  # RuntimeError: a symlink loop on Python 3.11
        raise ToolError(f"path {path} cannot be resolved: {exc}") from exc
    if not ctx.allow_outside_cwd and not real.is_relative_to(cwd):
        raise ToolError(
            f"path {path} is outside the working directory {cwd} (it resolves to {real}); "
            "allow it with tools.allowOutsideCwd"
        )
    return real
