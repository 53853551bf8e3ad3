"""``contextree navigate``: move a session's leaf, optionally leaving a branch summary.

``register(app)`` adds the command to the ``contextree`` app. Unlike the library's
``navigate_tree`` (pi's in-memory behaviour), the command keeps a move without a summary on
disk with a ``contextree.leaf`` entry (DESIGN decision 8).
"""

from __future__ import annotations

from collections.abc import Coroutine
from typing import TYPE_CHECKING, Annotated, Any

import typer

from contextree.cli.common import (
    effective_settings,
    fail,
    handles_errors,
    library_warnings_to_stderr,
    open_session,
    print_json,
    report_load,
    say_where_it_goes,
    state,
)
from contextree.cli.options import (
    BaseUrlOpt,
    FormatOpt,
    InstructionsOpt,
    ModelOpt,
    OutputFormat,
    SessionArg,
)

if TYPE_CHECKING:
    from rich.console import Console

    from contextree.branching.navigate import NavigationResult
    from contextree.llm.base import ModelClient

__all__ = ["register"]


@handles_errors
def navigate(
    session: SessionArg,
    target: Annotated[
        str,
        typer.Argument(
            metavar="TARGET",
            help="Entry id, or a unique prefix of one, to move to.",
            show_default=False,
        ),
    ],
    summarize: Annotated[
        bool, typer.Option("--summarize", help="Summarize the branch being left.")
    ] = False,
    instructions: InstructionsOpt = None,
    replace_instructions: Annotated[
        bool,
        typer.Option(
            "--replace-instructions", help="Send --instructions instead of the branch prompt."
        ),
    ] = False,
    label: Annotated[
        str | None, typer.Option(help="Label the summary, or the target when there is none.")
    ] = None,
    model: ModelOpt = None,
    base_url: BaseUrlOpt = None,
    format: FormatOpt = OutputFormat.text,
) -> None:
    """Move the leaf to TARGET; with --summarize, leave a summary of the branch left."""
    from contextree.branching.navigate import navigate_tree, resolve_entry_id
    from contextree.cli.models import make_client
    from contextree.compaction.options import summary_model, summary_options

    # The same settings and model choice as compact: flags, then CONTEXTREE_* and files.
    loaded = effective_settings(model=model).settings
    spec = summary_model(loaded)
    # leaf=False: the target's chain is checked, moving off a cycle
    tree = open_session(session, leaf=False)
    report_load(tree)
    target_id = resolve_entry_id(tree, target)
    client = make_client(spec, base_url=base_url) if summarize else None
    options = summary_options(
        loaded,
        model=spec,
        custom_instructions=instructions,
        replace_instructions=replace_instructions,
    )
    library_warnings_to_stderr()
    if client is not None:
        say_where_it_goes(client)
    move = navigate_tree(
        tree,
        target_id,
        summarize=summarize,
        client=client,
        options=options,
        label=label,
        persist=True,  # decision 8: the move must survive the process
    )
    result = _finish(move, client if summarize else None)
    if result.cancelled:
        raise fail("cancelled; nothing was written", 130 if result.aborted else 1)
    if format is OutputFormat.json:
        print_json(result.to_json())
    else:
        _print_result(state.console, result, target_id)


def _finish(
    move: Coroutine[Any, Any, NavigationResult], client: ModelClient | None
) -> NavigationResult:
    """Run the move; while ``client`` summarizes the branch left, say so."""
    import asyncio

    if client is None:
        return asyncio.run(move)
    with state.console.status(f"Summarizing the branch with {client.name}..."):
        return asyncio.run(move)


def register(app: typer.Typer) -> None:
    """Add the ``navigate`` command to ``app``."""
    app.command()(navigate)


def _print_result(console: Console, result: NavigationResult, target_id: str) -> None:
    from rich.text import Text

    from contextree.cli.preview import escaped, printable

    # Ids come from the file: escaped, like every id the CLI prints.
    position = result.new_leaf_id or "the start of the session (before the first entry)"
    if result.summary_entry is not None:
        position = str(result.summary_entry.get("parentId") or "the start of the session")
    old_leaf = escaped(result.old_leaf_id or "-")
    if target_id == result.old_leaf_id:
        console.print(f"The leaf is already at {old_leaf}; nothing to move.", markup=False)
    else:
        console.print(f"Moved the leaf from {old_leaf} to {escaped(position)}.", markup=False)
    recorded = result.leaf_entry_id
    if recorded is not None:
        console.print(Text(f"Recorded on disk as contextree.leaf entry {recorded}.", "ct.meta"))
    if result.label_entry_id is not None:
        console.print(Text(f"Label entry {result.label_entry_id}.", "ct.meta"))
    if result.editor_text is not None:
        console.print("[ct.heading]Message to edit and send again:[/]", markup=True)
        console.print(printable(result.editor_text), markup=False, highlight=False, soft_wrap=True)
    if result.summary_entry is not None:
        summary_id = escaped(str(result.summary_entry.get("id")))
        if result.summarized_elsewhere:
            console.print(
                Text(
                    "Another worker summarized this branch here meanwhile; following it.", "ct.meta"
                )
            )
        console.print(Text(f"Branch summary {summary_id}:", "ct.branch_summary"))
        console.print(
            printable(str(result.summary_entry.get("summary", ""))),
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
