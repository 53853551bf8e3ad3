"""Named styles of the command line (rich), so output stays consistent and themable."""

from __future__ import annotations

from rich.theme import Theme

__all__ = ["THEME"]

THEME = Theme(
    {
        "ct.id": "cyan",
        "ct.role.user": "bold green",
        "ct.role.assistant": "bold blue",
        "ct.role.tool": "magenta",
        "ct.role.other": "yellow",
        "ct.meta": "dim",
        "ct.leaf": "bold reverse",
        "ct.compaction": "bold yellow",
        "ct.branch_summary": "bold magenta",
        "ct.label": "bold cyan",
        "ct.fold": "dim italic",
        "ct.error": "bold red",
        "ct.warning": "yellow",
        "ct.ok": "green",
        "ct.heading": "bold",
    }
)
