"""``contextree import`` and ``contextree export``: copy a session into or out of a database."""

from __future__ import annotations

from typing import Annotated

import typer

__all__ = ["register"]

_FORCE_HELP = "Replace the target when it already holds a session."
_SYMLINK_HELP = (
    "Write through a target file that is a symbolic link (creating or replacing the file it "
    "points to); without it such a target is refused."
)


def register(app: typer.Typer) -> None:
    from contextree.cli.common import handles_errors, state

    def report(transfer: object) -> None:
        from contextree.cli.preview import escaped, plural
        from contextree.store.transfer import Transfer

        assert isinstance(transfer, Transfer)
        verb = "replaced" if transfer.replaced else "wrote"
        state.console.print(
            f"{verb} {escaped(transfer.target)}: {plural(transfer.lines, 'line')}, "
            f"{plural(transfer.bytes, 'byte')}, identical to {escaped(transfer.source)}",
            markup=False,
            soft_wrap=True,
        )

    @app.command("import")
    @handles_errors
    def import_(
        file: Annotated[
            str,
            typer.Argument(metavar="FILE", help="The session file to copy.", show_default=False),
        ],
        url: Annotated[
            str,
            typer.Argument(
                metavar="URL",
                help="sqlite:///path/file.db[#NAME] or postgresql://user@host/db[#NAME] (or a "
                "file); without #NAME the session's id names it.",
                show_default=False,
            ),
        ],
        force: Annotated[bool, typer.Option("--force", help=_FORCE_HELP)] = False,
        follow_symlinks: Annotated[
            bool, typer.Option("--follow-symlinks", help=_SYMLINK_HELP)
        ] = False,
    ) -> None:
        """Copy a session file into a database, every line byte for byte."""
        from contextree.store.transfer import copy_session

        report(copy_session(file, url, overwrite=force, follow_symlinks=follow_symlinks))

    @app.command("export")
    @handles_errors
    def export(
        url: Annotated[
            str,
            typer.Argument(
                metavar="URL",
                help="sqlite:///path/file.db#NAME or postgresql://user@host/db#NAME.",
                show_default=False,
            ),
        ],
        file: Annotated[
            str,
            typer.Argument(metavar="FILE", help="The session file to write.", show_default=False),
        ],
        force: Annotated[bool, typer.Option("--force", help=_FORCE_HELP)] = False,
        follow_symlinks: Annotated[
            bool, typer.Option("--follow-symlinks", help=_SYMLINK_HELP)
        ] = False,
    ) -> None:
        """Copy a session out of a database into a JSONL file, byte for byte."""
        from contextree.store.transfer import copy_session

        report(copy_session(url, file, overwrite=force, follow_symlinks=follow_symlinks))
