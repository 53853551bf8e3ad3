"""Issue 12 point 9: CLI commands stay thin - each parses its options, calls the library and
prints (STYLE.md "A thin CLI"). A long command body is where logic leaks out of the library
(it held the dry-run budget, `info`'s counts, `chat`'s agent set-up), so every body is kept
short; option plumbing (flags to settings keys) is what the budget allows beyond ~30 lines."""

from __future__ import annotations

import ast
from pathlib import Path

import contextree.cli

CLI = Path(contextree.cli.__file__).parent
MAX_BODY_LINES = 45


def _registered_by_call(tree: ast.Module) -> set[str]:
    """Names of functions a module registers as ``app.command(...)(function)``, or in a loop
    ``for command in (a, b): app.command()(command)``."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.For) and isinstance(node.iter, ast.Tuple):
            calls = [n for n in ast.walk(node) if isinstance(n, ast.Call)]
            if any(_is_command_call(call) for call in calls):
                names |= {e.id for e in node.iter.elts if isinstance(e, ast.Name)}
        if isinstance(node, ast.Call) and _is_command_call(node):
            names |= {a.id for a in node.args if isinstance(a, ast.Name)}
    return names


def _is_command_call(call: ast.Call) -> bool:
    """``X.command(...)(...)``: a command registered without a decorator."""
    inner = call.func
    return (
        isinstance(inner, ast.Call)
        and isinstance(inner.func, ast.Attribute)
        and inner.func.attr == "command"
    )


def _commands() -> list[tuple[str, str, int]]:
    found = []
    for module in sorted(CLI.glob("*.py")):
        tree = ast.parse(module.read_text(encoding="utf-8"))
        registered = _registered_by_call(tree)
        for node in ast.walk(tree):
            if not isinstance(node, ast.FunctionDef):
                continue
            decorators = [d.func if isinstance(d, ast.Call) else d for d in node.decorator_list]
            by_decorator = any(
                isinstance(d, ast.Attribute) and d.attr == "command" for d in decorators
            )
            if not by_decorator and node.name not in registered:
                continue
            body = node.body
            if isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                body = body[1:]  # the docstring is the command's --help
            end = body[-1].end_lineno or body[-1].lineno
            found.append((module.name, node.name, end - body[0].lineno + 1))
    return found


def test_every_command_is_found() -> None:
    names = {name for _, name, _ in _commands()}
    assert {"info", "tree", "context", "check", "compact", "prune", "navigate", "chat"} <= names
    assert {"recall", "expand", "uncompact"} <= names  # registered by app.command()(function)


def test_command_bodies_are_short() -> None:
    long = [f"{m}:{name} ({n} lines)" for m, name, n in _commands() if n > MAX_BODY_LINES]
    assert not long, f"move logic into the library: {', '.join(long)}"
