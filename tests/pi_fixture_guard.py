"""Skip, with one reason, the tests that read ``../shared/pi-fixtures`` when it is absent.

A fresh clone has no ``../shared``; the tests that compare against pi's own files cannot run
there, and the rest of the suite must still pass. A test needs the fixtures when its source, a
module-level helper it calls, one of its pytest fixtures (recursively) or a parameter names
them.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest

from pi_fixtures import PI_FIXTURES, REASON

_NAMES = re.compile(
    r"\b(?:PI_FIXTURES|pi_fixture|LARGE_SESSION|BEFORE_COMPACTION|FIXTURES|FIXTURE_FILES)\b"
)
_FILES = frozenset({"large-session.jsonl", "before-compaction.jsonl"})


def _source(function: Callable[..., Any]) -> str:
    try:
        return inspect.getsource(function)
    except (OSError, TypeError):
        return ""


def _names_fixtures(function: Callable[..., Any], seen: set[int]) -> bool:
    """Whether ``function`` or a module-level function it calls names the fixtures."""
    if id(function) in seen:
        return False
    seen.add(id(function))
    source = _source(function)
    if _NAMES.search(source):
        return True
    module = inspect.getmodule(function)
    for name in set(re.findall(r"\b(_?[a-z]\w*)\(", source)):
        helper = getattr(module, name, None)
        local = inspect.isfunction(helper) and helper.__module__ == function.__module__
        if local and _names_fixtures(helper, seen):
            return True
    return False


def _param_names_fixtures(values: Iterable[object]) -> bool:
    for value in values:
        if isinstance(value, Path) and PI_FIXTURES.name in value.parts:
            return True
        if isinstance(value, str) and (value in _FILES or "pi-fixtures" in value):
            return True
    return False


def needs_pi_fixtures(item: pytest.Item) -> bool:
    """Whether the test ``item`` reads pi's fixture files."""
    seen: set[int] = set()
    function = getattr(item, "function", None)
    if function is not None and _names_fixtures(function, seen):
        return True
    callspec = getattr(item, "callspec", None)
    if callspec is not None and _param_names_fixtures(callspec.params.values()):
        return True
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return False
    for definitions in info.name2fixturedefs.values():
        for definition in definitions:
            if _names_fixtures(definition.func, seen):
                return True
    return False


def skip_without_pi_fixtures(items: list[pytest.Item]) -> None:
    """Mark the tests that need the fixtures as skipped when ``../shared/pi-fixtures`` is absent."""
    if PI_FIXTURES.is_dir():
        return
    marker = pytest.mark.skip(reason=REASON)
    for item in items:
        if needs_pi_fixtures(item):
            item.add_marker(marker)
