"""The ``contextree`` command: one small function per command, rendering in ``render``."""

from __future__ import annotations

import contextlib
import functools
import json
import sys
from collections.abc import Callable, Sequence
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
import typer.core

from contextree.cli.common import (
    collector_paused_throughout,
    effective_settings,
    fail,
    handles_errors,
    hold_to_exit,
    library_warnings_to_stderr,
    open_session,
    print_json,
    report_load,
    say_where_it_goes,
    state,
)
from contextree.cli.options import (
    BaseUrlOpt,
    CompactDryRunOpt,
    FormatOpt,
    InstructionsOpt,
    KeepRecentOpt,
    ModelOpt,
    NoFallbackOpt,
    NoUsageAdjustOpt,
    OutputFormat,
    PromptsDirOpt,
    QuietOpt,
    ReserveTokensOpt,
    SessionArg,
    ShowDroppedOpt,
    SummaryTokensOpt,
)

if TYPE_CHECKING:
    from contextree.llm.base import ModelClient

# rich is imported by the commands that print, not here: `contextree --help` needs only typer
# (bench "contextree --help" startup).

__all__ = ["app", "main"]

try:  # typer >= 0.2x carries its own copy of click
    from typer._click import exceptions as _click_errors
except ImportError:  # pragma: no cover - older typer uses click itself
    from click import exceptions as _click_errors  # type: ignore[no-redef,import-not-found,unused-ignore]


class _Command(typer.core.TyperCommand):
    """A command whose usage line names its arguments as the help does (``SESSION``, not
    typer's ``{session}``)."""

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        pieces = super().collect_usage_pieces(ctx)
        return [p[1:-1] if p.startswith("{") and p.endswith("}") else p for p in pieces]


class _Group(typer.core.TyperGroup):
    """The app's command group: ``--debug`` anywhere on the line, and a usage error as one
    ``error:`` line (the README's promise), not click's three."""

    def main(  # type: ignore[override]
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        words = list(sys.argv[1:] if args is None else args)
        end = words.index("--") if "--" in words else len(words)
        if "--debug" in words[1:end]:
            # After the command name too: `contextree info FILE --debug`.
            words = ["--debug", *(w for w in words[:end] if w != "--debug"), *words[end:]]
        if not standalone_mode:
            return super().main(words, prog_name, complete_var, False, **extra)
        try:
            code = super().main(words, prog_name, complete_var, False, **extra)
        except _click_errors.NoArgsIsHelpError as exc:
            exc.show()  # `contextree` alone: the help
            sys.exit(exc.exit_code)
        except _click_errors.UsageError as exc:
            sys.exit(_usage_error(exc))
        except _click_errors.ClickException as exc:
            exc.show()
            sys.exit(exc.exit_code)
        except typer.Abort:
            state.errors.print("Aborted!", markup=False)
            sys.exit(1)
        sys.exit(code if isinstance(code, int) else 0)


def _usage_error(exc: Any) -> int:
    """Print a usage error as one line, ``error: <message> (see contextree CMD --help)``."""
    from rich.markup import escape

    message = " ".join(str(exc.format_message()).split())
    # The wording of typer's pydantic validation, e.g. for --format xml.
    message = message.replace("Value error, ", "")
    where = exc.ctx.command_path if exc.ctx is not None else "contextree"
    text = f"{escape(message)} (see {escape(where)} --help)"
    state.errors.print(f"[ct.error]error:[/] {text}", markup=True, highlight=False)
    return int(exc.exit_code)


_F = TypeVar("_F", bound=Callable[..., Any])


class _App(typer.Typer):
    """Every command gets :class:`_Command`."""

    def command(self, *args: Any, **kwargs: Any) -> Callable[[_F], _F]:
        kwargs.setdefault("cls", _Command)
        return super().command(*args, **kwargs)


app = _App(
    name="contextree",
    cls=_Group,
    help="Inspect, compact and navigate pi-compatible LLM agent sessions (JSONL trees).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def _show_version(value: bool) -> None:
    if value:
        from contextree import __version__

        state.console.print(f"contextree {__version__}", markup=False)
        raise typer.Exit()


@app.callback()
def _root(
    debug: Annotated[
        bool, typer.Option("--debug", help="Show tracebacks on errors (anywhere on the line).")
    ] = False,
    version: Annotated[
        bool,
        typer.Option(
            "--version", help="Print the version and exit.", callback=_show_version, is_eager=True
        ),
    ] = False,
) -> None:
    state.debug = debug
    state.held_to_exit.clear()  # (the tests run many command lines in one process)


def _show(shown: Any, payload: object, format: OutputFormat) -> None:
    """Print the rendered text, or with ``--format json`` the library's dict."""
    _show_built(shown, lambda: payload, format)


def _show_built(shown: Any, build: Callable[[], object], format: OutputFormat) -> None:
    """:func:`_show`, with the library's dict built only when it is printed (the outcome of
    ``compact`` copies the summary and the entry: 15 ms at 100k entries)."""
    if format is OutputFormat.json:
        print_json(build())
    else:
        state.console.print(shown)


@app.command()
@handles_errors
def info(session: SessionArg, format: FormatOpt = OutputFormat.text) -> None:
    """Summarize a session: entries, branches, model, context size."""
    from contextree.cli import render
    from contextree.session.describe import describe_session
    from contextree.store.url import parse_target

    tree = open_session(session)
    report_load(tree)
    described = describe_session(tree)
    if format is OutputFormat.json:
        print_json(described.to_json())
        return
    where = parse_target(session).display  # a password masked, the name percent-encoded
    state.console.print(render.session_description(described, file=where))


@app.command()
@handles_errors
def tree(
    session: SessionArg,
    fold: Annotated[
        int,
        typer.Option(min=0, help="Entries shown at each end of a linear run; 0 shows all."),
    ] = 6,
    interactive: Annotated[
        bool,
        typer.Option(
            "--interactive", "-i", help="Browse, label and navigate in the terminal (textual)."
        ),
    ] = False,
    format: FormatOpt = OutputFormat.text,
) -> None:
    """Show the entry tree: the leaf, compactions and branch summaries marked."""
    from contextree.cli import render

    session_tree = open_session(session)
    report_load(session_tree)
    if interactive:
        from contextree.cli.models import make_client
        from contextree.cli.tree_app import run_tree_app

        settings = effective_settings().settings
        factory = functools.partial(make_client, settings.model)
        run_tree_app(session_tree, settings=settings, client_factory=factory)
        return
    from contextree.store.index import collector_paused

    # A view of every entry: many short-lived objects, none in a cycle (see get_tree).
    with collector_paused():
        if format is OutputFormat.json:
            from contextree.session.tree_json import tree_json

            print_json(tree_json(session_tree))
            return
        shown = render.entry_tree(session_tree, fold=fold, width=state.console.width)
        state.console.print(shown)


class ContextFormat(StrEnum):
    text = "text"
    json = "json"
    openai = "openai"
    anthropic = "anthropic"


ListFormat = OutputFormat


@app.command()
@handles_errors
def context(
    session: SessionArg,
    leaf: Annotated[
        str | None,
        typer.Option(help="Entry id, or a unique prefix of one, to build the context for."),
    ] = None,
    format: Annotated[
        ContextFormat,
        typer.Option(
            "--format",
            "-f",
            help="text or json: the context as pi builds it; openai or anthropic: the "
            "messages of a request to that provider (failed replies left out, every tool call "
            "answered).",
        ),
    ] = ContextFormat.text,
) -> None:
    """Print what the LLM sees at the leaf (or at --leaf)."""
    from contextree.cli import context_render as render
    from contextree.cli.context_fast import plain_stdout
    from contextree.context.convert import convert_to_llm
    from contextree.tokens.usage import estimate_current_tokens

    # Only the part of the path that the context reads is checked, and only the lines read are
    # reported on: in a large session that is its tail, and reading the whole file would cost
    # the command most of its time (issue 27). check and info still look at every line.
    session_tree = open_session(session, leaf=False)
    if leaf is not None:
        from contextree.branching.navigate import resolve_entry_id

        leaf = resolve_entry_id(session_tree, leaf)  # a unique prefix, as navigate takes
    target = leaf if leaf is not None else session_tree.leaf_id
    if target is not None:
        session_tree.ensure_context_acyclic(target)
    report_load(session_tree, whole=False)
    if format in (ContextFormat.openai, ContextFormat.anthropic):
        from contextree.session.request import Provider, provider_request

        provider: Provider = "openai" if format is ContextFormat.openai else "anthropic"
        keep = effective_settings().settings.keep_thinking_turns
        print_json(provider_request(session_tree, leaf, provider, keep_thinking_turns=keep))
        return
    ctx = session_tree.build_session_context(leaf)
    messages = convert_to_llm(ctx.messages)
    if format is ContextFormat.json:
        from contextree.context.convert import context_json

        print_json(context_json(ctx))
        return
    tokens = estimate_current_tokens(ctx.messages).tokens
    if plain_stdout():
        # Into a pipe or a file rich writes plain text anyway; writing it directly is many
        # times faster, and spares importing rich. Lines stay unbroken.
        sys.stdout.write(render.context_plain(messages))
        sys.stdout.write(render.footer_text(ctx, sent=len(messages), tokens=tokens) + "\n")
        return
    # Message text is printed as it is, lines unbroken (the terminal wraps them): rich's word
    # wrapping would break code lines and takes seconds on a large context.
    state.console.print(render.context_text(messages), soft_wrap=True)
    state.console.print(render.context_footer(ctx, sent=len(messages), tokens=tokens))


@app.command()
@handles_errors
def check(
    session: SessionArg,
    repair: Annotated[
        bool,
        typer.Option(
            "--repair",
            help="Back up the file to <name>.bak-<time>, move unreadable lines to "
            "<name>.rejected, then replace the file atomically with the rest; dangling "
            "references and duplicate ids are only reported. A database session keeps both "
            "as sessions beside it (NAME.bak-<time>, NAME.rejected). Rejected lines are only "
            "added to a log of rejected lines: when <name>.rejected is anything else, "
            "<name>.rejected-2 (-3...) is used.",
        ),
    ] = False,
    format: FormatOpt = OutputFormat.text,
) -> None:
    """Check a session for damage; exit code 1 when any is found (or remains after --repair)."""
    from contextree.cli import render
    from contextree.session.check import check_session

    if repair:
        from contextree.session.repair import repair_session

        repaired = repair_session(session)
        if format is OutputFormat.json:
            print_json(repaired.to_json())
        else:
            state.console.print(render.repair_lines(repaired), soft_wrap=True)
        raise typer.Exit(1 if repaired.damaged else 0)
    report = check_session(open_session(session, leaf=False))
    if format is OutputFormat.json:
        print_json(report.to_json())
    else:
        state.console.print(render.check_report(report))
    raise typer.Exit(1 if report.damaged else 0)


def _summarizer(
    model: str | None, base_url: str | None, prompts_dir: Path | None
) -> ModelClient:
    """The client ``compact`` summarizes with, its prompts directory checked: made for a dry
    run too, so that it refuses what the run refuses (a spec naming no provider, a malformed
    endpoint, a prompts directory that is not one). Making a client sends nothing."""
    from contextree.cli.models import make_client
    from contextree.compaction.options import check_prompts_dir

    check_prompts_dir(prompts_dir)
    return make_client(model, base_url=base_url)


@app.command()
@handles_errors
@collector_paused_throughout
def compact(
    session: SessionArg,
    dry_run: CompactDryRunOpt = False,
    instructions: InstructionsOpt = None,
    model: ModelOpt = None,
    base_url: BaseUrlOpt = None,
    keep_recent: KeepRecentOpt = None,
    reserve_tokens: ReserveTokensOpt = None,
    no_usage_adjust: NoUsageAdjustOpt = False,
    prompts_dir: PromptsDirOpt = None,
    summary_tokens: SummaryTokensOpt = None,
    no_fallback: NoFallbackOpt = False,
    quiet: QuietOpt = False,
    format: FormatOpt = OutputFormat.text,
    show_dropped: ShowDroppedOpt = False,
) -> None:
    """Fold old history into a compaction entry (use --dry-run to preview)."""
    import asyncio

    from contextree.cli import dropped_render
    from contextree.compaction.options import summary_model, summary_options
    from contextree.compaction.report import compaction_json, plan_json
    from contextree.compaction.run import CompactionPlan, compact_session, plan_compaction

    loaded = effective_settings(
        **{
            "compaction.keepRecentTokens": keep_recent,
            "compaction.reserveTokens": reserve_tokens,
            "compaction.adjustKeepRecentByUsage": False if no_usage_adjust else None,
            "compaction.summaryTokens": summary_tokens,
            "compaction.fallbackToOffline": False if no_fallback else None,
            "model": model,
            "prompts.dir": str(prompts_dir) if prompts_dir else None,
        }
    ).settings
    settings = loaded.compaction
    model = summary_model(loaded)
    options = summary_options(loaded, model=model, custom_instructions=instructions)
    session_tree = open_session(session)
    report_load(session_tree)
    client = _summarizer(model, base_url, options.prompts_dir)
    if dry_run:
        from contextree.compaction.cost_report import compaction_cost  # (for --dry-run only)
        plan = plan_compaction(session_tree, settings=settings, options=options)
        cost = (
            compaction_cost(plan, loaded, summarizer=model, estimator=options.estimator)
            if isinstance(plan, CompactionPlan)
            else None
        )
        shown, dropped = dropped_render.dry_run_view(plan, show_dropped=show_dropped, cost=cost)
        _show(shown, plan_json(plan, dropped, cost), format)
        return
    library_warnings_to_stderr()
    say_where_it_goes(client)
    with _status(f"Summarizing with {client.name}..."):
        run = compact_session(session_tree, client, settings=settings, options=options)
        outcome = asyncio.run(run)
    shown = dropped_render.outcome_view(
        outcome, session_tree, show_summary=not quiet, show_dropped=show_dropped
    )
    _show_built(shown, lambda: compaction_json(outcome), format)
    hold_to_exit(session_tree, outcome)


def _status(text: str) -> contextlib.AbstractContextManager[object]:
    """A spinner saying ``text`` while the block runs, on a terminal: into a pipe or a file
    rich's live display writes nothing, and its import and thread were 3 ms of ``compact``."""
    console = state.console
    if console.is_terminal or console.is_jupyter:
        return console.status(text)
    return contextlib.nullcontext()


@app.command()
@handles_errors
def prune(
    session: SessionArg,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show what would be pruned.")] = False,
    protect_tokens: Annotated[
        int | None,
        typer.Option(
            min=0,
            help="Tokens of the newest tool outputs never pruned (pruning.protectTokens).",
        ),
    ] = None,
    minimum_savings: Annotated[
        int | None,
        typer.Option(
            min=0,
            help="Prune only when it saves at least this many tokens (pruning.minimumSavings).",
        ),
    ] = None,
    protected_tools: Annotated[
        str | None,
        typer.Option(
            metavar="NAMES",
            help="Comma-separated tools whose outputs are never pruned; empty for none "
            "(pruning.protectedTools).",
        ),
    ] = None,
    format: FormatOpt = OutputFormat.text,
) -> None:
    """Replace old tool outputs with a placeholder for the model (originals are kept)."""
    from contextree.cli import render
    from contextree.compaction.cost_report import prune_cost
    from contextree.compaction.prune import prune_session
    from contextree.compaction.report import prune_json

    settings = effective_settings(
        **{
            "pruning.protectTokens": protect_tokens,
            "pruning.minimumSavings": minimum_savings,
            "pruning.protectedTools": protected_tools,  # "" protects none
        }
    ).settings
    session_tree = open_session(session)
    report_load(session_tree)
    decision = prune_session(session_tree, settings.prune, dry_run=dry_run)
    cost = prune_cost(session_tree.get_branch_view(), decision, settings) if dry_run else None
    shown = render.prune_outcome(decision, dry_run=dry_run, cost=cost)
    _show(shown, prune_json(decision, dry_run=dry_run, cost=cost), format)


@app.command()
@handles_errors
def serve(
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port (0 picks a free one).", min=0, max=65535)] = 8765,
    model: ModelOpt = None,
    base_url: BaseUrlOpt = None,
    token: Annotated[
        str | None,
        typer.Option(
            envvar="CONTEXTREE_SERVE_TOKEN",
            help=(
                "Bearer token clients must send (required beyond loopback). Prefer the "
                "CONTEXTREE_SERVE_TOKEN variable: a command line is visible to other users."
            ),
        ),
    ] = None,
    max_body_bytes: Annotated[int, typer.Option(help="Largest request body accepted.")] = (
        8 * 1024 * 1024
    ),
    timeout: Annotated[float, typer.Option(help="Seconds a summary may take (then 504).")] = 300.0,
    max_connections: Annotated[
        int, typer.Option(min=1, help="Connections served at once; more get 503 at once.")
    ] = 64,
) -> None:
    """Run the remote summarization endpoint ({systemPrompt, prompt} -> {summary}).

    Secrets are redacted (redaction.*) from the prompts before the model sees them, and from
    the summary before it is answered."""
    import logging

    from contextree.cli.models import make_client
    from contextree.compaction.options import summary_options
    from contextree.serve import ServerConfig, SummaryServer

    logging.basicConfig(level=logging.INFO, format="%(message)s")
    # The redactor `compact --model` uses: redaction.* and the secret-looking variables.
    redactor = summary_options(effective_settings().settings).redactor
    client = make_client(model, base_url=base_url)
    server = SummaryServer(
        client,
        ServerConfig(
            host=host,
            port=port,
            token=token,
            max_body_bytes=max_body_bytes,
            model_timeout=timeout,
            max_connections=max_connections,
        ),
        redactor=redactor,
    )
    state.errors.print(
        f"serving {client.name} summaries at {server.url} (Ctrl-C stops)", markup=False
    )
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        state.errors.print("stopped")


@app.command()
@handles_errors
def config() -> None:
    """Show the effective settings and where each value came from."""
    from contextree.cli import render

    loaded = effective_settings()
    state.console.print(render.settings_table(loaded))


@app.command()
@handles_errors
def sessions(
    where: Annotated[
        str | None,
        typer.Argument(
            metavar="DIR",
            help="A folder of session files, e.g. pi's ~/.pi/agent/sessions/--work--/ "
            "(default: this directory's sessions folder, and pi's when it has one), or a "
            "database: sqlite:///path/file.db or postgresql://user@host/db.",
            show_default=False,
        ),
    ] = None,
    all_: Annotated[
        bool,
        typer.Option(
            "--all",
            "-a",
            help="Every session folder under <home>/sessions and pi's ~/.pi/agent/sessions "
            "(or the folders inside DIR).",
        ),
    ] = False,
    limit: Annotated[
        int, typer.Option("--limit", "-n", min=0, help="Show at most N sessions; 0 shows all.")
    ] = 20,
    format: Annotated[ListFormat, typer.Option("--format", "-f")] = ListFormat.text,
) -> None:
    """List session files, newest first: name, first message, entries, size."""
    from contextree.cli import render
    from contextree.session.listing import list_session_folders
    from contextree.session.paths import session_dirs, session_roots
    from contextree.store.url import is_store_url

    if where is not None and is_store_url(where):
        _list_database(where, format)
        return
    if where is not None:
        folders = [_folder_argument(where)]
    else:  # ours, then pi's and oh-my-pi's when they exist (for this directory, or all)
        folders = session_roots() if all_ else session_dirs(Path.cwd())
    listing = list_session_folders(folders, nested=all_, limit=limit)
    if format is ListFormat.json:
        payload = [summary.to_json() for summary in listing.sessions]
        sys.stdout.write(json.dumps(payload, ensure_ascii=False, indent=2) + "\n")
        return
    shown = render.session_listing(listing, here=where is None, width=state.console.width)
    state.console.print(shown, soft_wrap=True)


def _folder_argument(where: str) -> Path:
    folder = Path(where)
    if not folder.exists():
        raise fail(f"{folder}: no such directory")
    if not folder.is_dir():
        raise fail(
            f"{folder}: not a directory; give the folder that holds the session files "
            "(contextree info FILE describes one session)"
        )
    return folder


def _list_database(url: str, format: ListFormat) -> None:
    """``sessions URL``: the sessions a database holds, by name."""
    from contextree.cli import render
    from contextree.store.url import parse_target

    target = parse_target(url)
    location = target.display.split("#", 1)[0]
    if target.kind == "sqlite":
        from contextree.store.sqlite import list_sqlite_sessions

        found = list_sqlite_sessions(target.location, location)
    else:
        from contextree.store.postgres import list_postgres_sessions

        found = list_postgres_sessions(target.location, location)
    if format is ListFormat.json:
        payload = render.database_listing_json(location, found)
        sys.stdout.write(json.dumps(payload, ensure_ascii=False, indent=2) + "\n")
        return
    state.console.print(render.database_listing(location, found), soft_wrap=True)


def _register_commands() -> None:
    from contextree.cli import (
        chat_cmd,
        eval_cmd,
        navigate_cmd,
        recall_cmd,
        report_cmd,
        transfer_cmd,
    )

    navigate_cmd.register(app)
    recall_cmd.register(app)
    chat_cmd.register(app)
    transfer_cmd.register(app)
    eval_cmd.register(app)
    report_cmd.register(app)


_register_commands()


def _only_the_named_command(words: Sequence[str]) -> None:
    """Register only the command the line names. typer reads every command's signature and
    builds its parameters on each run, though one runs: 0.1 s of every call for 18 commands.
    The command's help, errors and behaviour are the same; a line that names no known command
    (``--help``, a typo) keeps them all, so the usage and "No such command" errors list them."""
    from typer.main import get_command_name

    name = next((word for word in words if not word.startswith("-")), None)
    chosen = [
        info
        for info in app.registered_commands
        if name is not None
        and (info.name or (info.callback and get_command_name(info.callback.__name__))) == name
    ]
    if chosen:
        app.registered_commands = chosen


def main() -> None:
    """Console-script entry point."""
    _only_the_named_command(sys.argv[1:])
    try:
        app()
    except KeyboardInterrupt:
        state.errors.print("interrupted; nothing was written", style="ct.error")
        sys.exit(130)
