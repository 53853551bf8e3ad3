"""Regular expressions compiled when first used.

The offline summarizer's modules define about a hundred patterns; compiling them all on import
cost a summary's process more time than many of them are ever searched for (a pattern for a
message shape a session never has is compiled and never used). A :class:`LazyPattern`
compiles on its first call, then hands out the compiled pattern's own methods: after that a
call costs what a call of a compiled pattern costs.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterator
from typing import Any, Final

__all__ = ["LazyPattern"]

_METHODS: Final = ("search", "match", "fullmatch", "sub", "subn", "split", "findall", "finditer")


class LazyPattern:
    """``re.compile(pattern, flags)``, compiled when one of its methods is first called.

    The methods below run only for that first call: it puts the compiled pattern's bound
    methods on the instance, where attribute lookup finds them before the class's.
    """

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern = pattern
        """The source, as ``re.Pattern.pattern`` (reading it compiles nothing)."""
        self._flags = flags

    def __repr__(self) -> str:
        return f"LazyPattern({self.pattern!r}, {self._flags!r})"

    def compiled(self) -> re.Pattern[str]:
        """The compiled pattern (compiled now if it was not yet)."""
        compiled = re.compile(self.pattern, self._flags)
        # (Two threads may both compile: re's cache gives them one pattern, and either
        # assignment is whole.)
        for name in _METHODS:
            self.__dict__[name] = getattr(compiled, name)
        return compiled

    def search(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.compiled().search(string, pos, endpos)

    def match(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.compiled().match(string, pos, endpos)

    def fullmatch(
        self, string: str, pos: int = 0, endpos: int = sys.maxsize
    ) -> re.Match[str] | None:
        return self.compiled().fullmatch(string, pos, endpos)

    def sub(self, repl: str | Callable[[re.Match[str]], str], string: str, count: int = 0) -> str:
        return self.compiled().sub(repl, string, count)

    def subn(
        self, repl: str | Callable[[re.Match[str]], str], string: str, count: int = 0
    ) -> tuple[str, int]:
        return self.compiled().subn(repl, string, count)

    def split(self, string: str, maxsplit: int = 0) -> list[str | Any]:
        return self.compiled().split(string, maxsplit)

    def findall(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> list[Any]:
        return self.compiled().findall(string, pos, endpos)

    def finditer(
        self, string: str, pos: int = 0, endpos: int = sys.maxsize
    ) -> Iterator[re.Match[str]]:
        return self.compiled().finditer(string, pos, endpos)
