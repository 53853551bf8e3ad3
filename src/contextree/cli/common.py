"""What the ``contextree`` commands share: the consoles and ``--debug`` (:data:`state`), the
one-line error (:func:`fail`, :func:`handles_errors`), opening a session and reporting what its
load found, the effective settings. ``app`` and the ``*_cmd`` modules import it; it imports
neither (rich and the session layer are imported inside the functions: ``contextree --help``
needs only typer)."""

from __future__ import annotations

import contextlib
import functools
import json
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

import typer

from contextree.errors import ContextreeError

if TYPE_CHECKING:
    from rich.console import Console

    from contextree.llm.base import ModelClient

__all__ = [
    "State",
    "effective_settings",
    "error_text",
    "exit_code",
    "fail",
    "handles_errors",
    "hold_to_exit",
    "library_warnings_to_stderr",
    "open_any_session",
    "open_session",
    "print_json",
    "print_report",
    "report_late",
    "report_load",
    "say_where_it_goes",
    "state",
]

P = ParamSpec("P")
R = TypeVar("R")


class State:
    debug = False

    def __init__(self) -> None:
        self.loaded: list[tuple[Any, set[str], bool]] = []
        """Sessions whose load report this command printed, with the lines it printed and
        whether it was the whole file's report."""
        self.held_to_exit: list[object] = []
        """What a command that wrote is done with, held until the process ends: when it
        ended well, ``main`` ends the process at once (``exit_now``) rather than free a
        decoded session object by object (60-90 ms of CPU after compacting the 100k bench
        session). Only a command whose writes are all out (file appends go out with
        ``os.write``) puts anything here."""
        self.ends_process = False
        """Whether the process is to end when the command is done (``main`` runs it, not a
        test's runner): then what it holds is never freed (see :attr:`held_to_exit`)."""
        self.collector_held = False
        """The command left the garbage collector paused for the process's end (see
        :func:`collector_paused_throughout`); ``main`` resumes it if the process goes on."""

    # markup=False: a string is printed as it is ("contextree[tui]" keeps its brackets); our
    # own markup is passed with markup=True and escapes what it interpolates.
    @functools.cached_property
    def console(self) -> Console:
        from rich.console import Console

        from contextree.cli.theme import THEME

        # emoji=False: "ollama:x: ..." must not print "ollama❌ ..." (rich's :x: code).
        return Console(theme=THEME, highlight=False, soft_wrap=False, markup=False, emoji=False)

    @functools.cached_property
    def errors(self) -> Console:
        from rich.console import Console

        from contextree.cli.theme import THEME

        # soft_wrap: an error or warning stays one line, however narrow the terminal.
        return Console(
            theme=THEME, stderr=True, highlight=False, soft_wrap=True, markup=False, emoji=False
        )


state = State()


def fail(message: str, code: int = 1) -> typer.Exit:
    from rich.markup import escape

    from contextree.cli.preview import escaped

    # Messages name sessions, ids and paths: escaped, they stay one line that cannot drive
    # the terminal.
    shown = escape(escaped(message))
    state.errors.print(f"[ct.error]error:[/] {shown}", markup=True, highlight=False)
    return typer.Exit(code)


def error_text(exc: ContextreeError) -> str:
    """The one line for ``exc``; a model's error names the model ("429 ..." alone does not)."""
    from contextree.errors import ModelError

    text = str(exc)
    model = exc.model if isinstance(exc, ModelError) else ""
    return f"{model}: {text}" if model and model not in text else text


def exit_code(exc: ContextreeError) -> int:
    """2 for a bad flag value (a usage error, as click's own), else 1."""
    from contextree.errors import SettingsError

    return 2 if isinstance(exc, SettingsError) and exc.source == "command line" else 1


def handles_errors(func: Callable[P, R]) -> Callable[P, R]:
    """Turn expected failures into one red line on stderr and exit code 1 (2 for usage)."""

    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return func(*args, **kwargs)
        finally:
            report_late()  # before any error line: what was found while reading

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return run(*args, **kwargs)
        except (typer.Exit, typer.Abort, KeyboardInterrupt):
            raise
        except ContextreeError as exc:
            if state.debug:
                raise
            raise fail(error_text(exc), exit_code(exc)) from None
        except OSError as exc:
            if state.debug:
                raise
            where = f"{exc.filename}: " if exc.filename else ""
            raise fail(f"{where}{exc.strerror or exc}") from None
        except (RecursionError, ValueError) as exc:
            # An entry the quick index accepted but the full decode did not (nesting too deep
            # for a later step, say): one line, not a traceback.
            from contextree.entries.codec import LineError

            if state.debug or not isinstance(exc, RecursionError | LineError):
                raise
            problem = (
                "is nested too deeply to process"
                if isinstance(exc, RecursionError)
                else f"cannot be decoded: {exc}"
            )
            raise fail(
                f"an entry of the session {problem}; run contextree check --repair"
            ) from None

    return wrapper


def collector_paused_throughout(func: Callable[P, R]) -> Callable[P, R]:
    """Run a command with the cyclic garbage collector paused: for a command that holds a
    whole decoded path and what is built from it, hundreds of thousands of containers that
    live until it ends, none in a cycle. It resumes when the command returns, unless the
    process then ends at once (:attr:`State.held_to_exit`): its first pass would go over
    everything the command made, for nothing (``compact`` of the 100k bench session: 79
    passes took 0.027 s before; 0.003 s are left, in the imports before the command)."""

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        import gc

        if not gc.isenabled():
            return func(*args, **kwargs)
        gc.disable()
        try:
            return func(*args, **kwargs)
        finally:
            if state.ends_process and state.held_to_exit:
                state.collector_held = True
            else:
                gc.enable()

    return wrapper


def open_session(target: str | Path, *, leaf: bool = True) -> Any:
    """The session at ``target`` (a file or a store URL) for a command on an existing session.
    An empty file is refused as ``sessions`` lists it ("not a session file: the file is
    empty"): reading one must not invent a session id. (The library and ``chat`` start a new
    session in an empty file.)

    With ``leaf``, a leaf whose parent chain loops is refused (``ParentCycleError``), the same
    way by every command that reads the path to it; ``check`` reports such cycles instead and
    ``navigate`` checks its target, so that it can move the leaf off a cycle."""
    tree = open_any_session(target)
    if leaf and tree.leaf_id is not None:
        tree.ensure_acyclic(tree.leaf_id)
    return tree


def open_any_session(target: str | Path) -> Any:
    """The session at ``target``, not checked for a parent cycle (see :func:`open_session`)."""
    from contextree.errors import SessionFileError
    from contextree.session.tree import SessionTree
    from contextree.store.url import is_store_url

    if is_store_url(target):
        return SessionTree.open(target, create=False)
    path = Path(target)
    with contextlib.suppress(OSError):
        if path.is_file() and path.stat().st_size == 0:
            raise SessionFileError(path, "not a session file: the file is empty")
    return SessionTree.open(path, create=False)


def report_load(tree: Any, *, whole: bool = True) -> None:
    """Print what loading ``tree`` found wrong, one ``warning:`` line each. Without ``whole``,
    only what the lines the command reads show (:attr:`SessionTree.read_report`): ``context``
    reads a large session's tail, and reading the rest only to warn about it would cost it
    most of its time."""
    shown: set[str] = set()
    print_report(tree, shown, whole=whole)
    state.loaded.append((tree, shown, whole))


def hold_to_exit(tree: Any, *done_with: object) -> None:
    """Let ``main`` end the process at once after a command that wrote to ``tree`` (see
    :attr:`State.held_to_exit`): for a file session only, whose appends went out with
    ``os.write`` and whose lock ends with the process; a database store's connection is
    closed as usual."""
    from contextree.store.jsonl import JsonlFileStore

    if isinstance(getattr(tree, "store", None), JsonlFileStore):
        state.held_to_exit.extend((tree, *done_with))


def report_late() -> None:
    """Print what the command found while reading its sessions (invalid UTF-8 replaced in an
    entry decoded after the load), once each."""
    loaded, state.loaded = state.loaded, []
    for tree, shown, whole in loaded:
        print_report(tree, shown, whole=whole)


def print_report(tree: Any, shown: set[str], *, whole: bool = True) -> None:
    report = tree.report if whole else tree.read_report
    print_load_warnings(report.messages(), shown)


def print_load_warnings(lines: Iterable[str], shown: set[str] | None = None) -> None:
    """Print each of ``lines`` (what loading a session found wrong) not in ``shown`` yet as a
    ``warning:`` line, escaped."""
    shown = set() if shown is None else shown
    new = [line for line in dict.fromkeys(lines) if line not in shown]
    if not new:
        return  # the usual case: no need to import rich
    from rich.markup import escape

    from contextree.cli.preview import escaped

    for line in new:
        shown.add(line)
        text = escape(escaped(line))
        state.errors.print(f"[ct.warning]warning:[/] {text}", markup=True, highlight=False)


def effective_settings(**overrides: Any) -> Any:
    """Effective settings: files and environment, then the command's flags."""
    from contextree.settings.load import load_settings

    loaded = load_settings(overrides={k: v for k, v in overrides.items() if v is not None})
    from rich.markup import escape

    for warning in loaded.warnings:
        text = escape(str(warning))
        state.errors.print(f"[ct.warning]warning:[/] {text}", markup=True, highlight=False)
    return loaded


def say_where_it_goes(client: ModelClient) -> None:
    """One stderr line whenever the conversation leaves this machine: which model, where. (A
    client without its API key sends nothing: the request fails at once, and the fallback's
    warning says why.)"""
    from contextree.cli.models import destination

    url = destination(client)
    if url is None:
        return  # the offline summarizer, a local server: spares importing the HTTP clients
    from contextree.llm.registry import missing_api_key

    if missing_api_key(client) is None:
        from contextree.store.masking import mask_passwords

        note = mask_passwords(f"note: the conversation is sent to {client.name} at {url}")
        state.errors.print(note, markup=False)


def library_warnings_to_stderr() -> None:
    """Show the library's warnings (e.g. a fallback to the offline summarizer) as our own
    one-line ``warning:`` messages instead of logging's bare last-resort output."""
    import logging

    class _Warnings(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            from rich.markup import escape

            text = escape(" ".join(record.getMessage().split()))
            state.errors.print(f"[ct.warning]warning:[/] {text}", markup=True, highlight=False)

    logger = logging.getLogger("contextree")
    if not any(h.name == "contextree-cli" for h in logger.handlers):
        handler = _Warnings(logging.WARNING)
        handler.name = "contextree-cli"
        logger.addHandler(handler)


def print_json(payload: object) -> None:
    """``payload`` as indented JSON on stdout (the ``--format json`` outputs)."""
    sys.stdout.write(json.dumps(payload, ensure_ascii=False, indent=2) + "\n")
