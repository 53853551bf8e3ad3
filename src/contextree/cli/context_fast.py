"""``contextree context SESSION`` into a pipe or a file without building the command line.

Importing typer (with its own copy of click) takes about a quarter of what printing the context
of a 100k-entry session costs. The plain form of the command - one session file, no option,
output not a terminal - is the one scripts run, so :mod:`contextree.cli.entry` tries it here
first. Only the usual case is done here: a clean read that prints the context and its footer.
Anything else - a store URL, a warning to print, any error - prints nothing and returns False,
and the full command runs and says it the way every command does (reading is side-effect
free, so nothing is done twice that matters). ``tests/cli/test_context_fast.py`` checks that
both ways print the same bytes.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

__all__ = ["plain_stdout", "print_context"]


def plain_stdout() -> bool:
    """True when standard output is surely no terminal to rich (a pipe or a file, with neither
    ``FORCE_COLOR`` nor ``TTY_COMPATIBLE`` set), so a command may write plain text without
    importing rich; when this says False, ``state.console.is_terminal`` decides."""
    if "FORCE_COLOR" in os.environ or "TTY_COMPATIBLE" in os.environ:
        return False
    try:
        return not sys.stdout.isatty()
    except (AttributeError, ValueError):  # no stdout, or a closed one: as rich decides
        return False


def print_context(target: str) -> bool:
    """Print what ``contextree context TARGET`` prints when TARGET is a session file that
    reads cleanly and stdout is no terminal; False, having printed nothing, otherwise."""
    if target.startswith("-") or "://" in target or not plain_stdout():
        return False
    try:
        text = _context_text(Path(target))
    except Exception:  # the full command reports it, in its words
        return False
    if text is None:
        return False
    sys.stdout.write(text)
    return True


def _context_text(path: Path) -> str | None:
    from contextree.cli.context_render import context_plain, footer_text
    from contextree.context.convert import convert_to_llm
    from contextree.session.tree import SessionTree
    from contextree.tokens.usage import estimate_current_tokens

    if not path.is_file() or path.stat().st_size == 0:
        return None
    tree = SessionTree.open(path, create=False)
    if tree.leaf_id is None:
        return None
    tree.ensure_context_acyclic(tree.leaf_id)
    if tree.read_report.messages():
        return None
    context = tree.build_session_context()
    messages = convert_to_llm(context.messages)
    text = context_plain(messages)
    tokens = estimate_current_tokens(context.messages).tokens
    if tree.read_report.messages():  # found while decoding (invalid UTF-8 replaced)
        return None
    return text + footer_text(context, sent=len(messages), tokens=tokens) + "\n"
