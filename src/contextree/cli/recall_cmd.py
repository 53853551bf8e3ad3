"""``contextree recall``, ``expand`` and ``uncompact``: get back what compactions folded away.

``register(app)`` adds the commands to the ``contextree`` app; the logic is in
:mod:`contextree.recall` and :mod:`contextree.branching.uncompact`.
"""

from __future__ import annotations

import os
from typing import Annotated

import typer

from contextree.cli.common import (
    effective_settings,
    fail,
    handles_errors,
    open_session,
    print_json,
    print_load_warnings,
    report_load,
    state,
)
from contextree.cli.options import FormatOpt, OutputFormat, SessionArg

__all__ = ["register"]


@handles_errors
def recall(
    session: SessionArg,
    query: Annotated[
        str,
        typer.Argument(
            metavar="QUERY",
            help='Words, identifiers, paths or numbers; "quoted words" form one phrase.',
            show_default=False,
        ),
    ],
    leaf: Annotated[
        str | None, typer.Option(help="Entry id, or a unique prefix, to search from.")
    ] = None,
    limit: Annotated[int, typer.Option(min=1, max=1000, help="Hits to show at most.")] = 10,
    all_branches: Annotated[
        bool,
        typer.Option("--all-branches", help="Also search branches the leaf left behind."),
    ] = False,
    format: FormatOpt = OutputFormat.text,
) -> None:
    """Search what compactions folded out of the context (BM25-ranked)."""
    from contextree.cli import recall_render
    from contextree.recall import query_terms, recall_json
    from contextree.recall import recall as run_recall
    from contextree.security.redact import environment_secrets

    if not query_terms(query):
        raise fail(f'the query "{query}" has no letter or digit to search for', 2)
    settings = effective_settings().settings
    # The path is checked for a cycle by recall itself, and only when the index has not
    # kept the scope of these bytes: most of a call on a large session otherwise.
    tree = open_session(session, leaf=False)
    leaf_id = None
    if leaf is not None:
        # Here only: navigation pulls in the model clients (a third of a second).
        from contextree.branching.navigate import resolve_entry_id

        leaf_id = resolve_entry_id(tree, leaf)
    result = run_recall(
        tree,
        query,
        leaf_id=leaf_id,
        limit=limit,
        all_branches=all_branches,
        settings=settings,
        # The environment's secret values, as compact redacts them (docs/recall.md).
        literals=environment_secrets(os.environ),
    )
    # What loading found wrong, kept with the scope: printing tree.report would read
    # every line of a large session the scope let this call skip.
    print_load_warnings(result.load_warnings)
    for notice in result.notices:
        state.errors.print(f"note: {notice}", markup=False)
    if format is OutputFormat.json:
        print_json(recall_json(result))
        return
    state.console.print(recall_render.recall_result(result), soft_wrap=True)


@handles_errors
def expand(
    session: SessionArg,
    entry_id: Annotated[
        str,
        typer.Argument(
            metavar="ENTRY_ID", help="Entry id, or a unique prefix of one.", show_default=False
        ),
    ],
    around: Annotated[
        int, typer.Option(min=0, max=1000, help="Entries to show before and after it.")
    ] = 0,
    format: FormatOpt = OutputFormat.text,
) -> None:
    """Show an original entry in full (with --around N, its neighbours too)."""
    from contextree.branching.navigate import resolve_entry_id
    from contextree.cli import recall_render
    from contextree.recall import expand_entry, expansion_json

    tree = open_session(session)
    report_load(tree)
    result = expand_entry(tree, resolve_entry_id(tree, entry_id), around=around)
    if format is OutputFormat.json:
        print_json(expansion_json(result))
        return
    state.console.print(recall_render.expansion(result), soft_wrap=True)


@handles_errors
def uncompact(session: SessionArg, format: FormatOpt = OutputFormat.text) -> None:
    """Undo the latest compaction: move the leaf back to just before it (nothing deleted)."""
    from contextree.branching.uncompact import uncompact as undo
    from contextree.branching.uncompact import uncompact_json
    from contextree.cli import recall_render

    tree = open_session(session)
    report_load(tree)
    result = undo(tree, persist=True)  # decision 8: the move must survive the process
    if format is OutputFormat.json:
        print_json(uncompact_json(result))
    else:
        state.console.print(recall_render.uncompact_result(result), soft_wrap=True)
    if result is None:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    """Add ``recall``, ``expand`` and ``uncompact`` to ``app``."""
    for command in (recall, expand, uncompact):
        app.command()(command)
