"""Shell commands: their outcome read from the output, error lines, read-only commands, families."""

from __future__ import annotations

import re
from typing import Final

from contextree.compaction.offline.digest import COMMAND_CHARS, ERROR_CHARS, Command
from contextree.compaction.offline.lazy_pattern import LazyPattern
from contextree.compaction.offline.specifics import has_specifics
from contextree.compaction.offline.text import Gated, add_once, clip, may_hold, words_of

_EXIT_CODE = re.compile(
    r"(?i)(?:command exited with code|exit(?:ed with)? (?:code|status):?)\s*(-?\d+)"
)
_CANCELLED = LazyPattern(
    r"(?i)\bcommand (?:aborted|cancelled|canceled|timed out)\b|\(command cancelled\)"
)
_EXIT_LINE = Gated(_EXIT_CODE, ("exit",))
"""Where :data:`_EXIT_CODE` is only searched for: every match says "exit"."""
_TRUNCATED = LazyPattern(r"\[\.\.\. \d+ more characters truncated\]")
ERROR_LINE = Gated(
    (
        r"Traceback \(most recent call last\)"
        r"|\b[A-Z]\w*(?:Error|Exception)\b|\bError\b"
        r"|\b(?:error|fatal|panic)\b\s*(?:[A-Za-z]+\d+\s*)?:"
        r"|\bERROR\b|\bFAIL(?:ED)?\b|\bfailed\b"
        r"|\bE(?:NOENT|ACCES|PERM|EXIST|ADDRINUSE)\b"
        r"|No such file or directory|Permission denied|command not found|Segmentation fault"
        r"|\b(?:Could not|Cannot|Can't|Unable to) (?:find|open|read|resolve|locate|import|load)\b"
        r"|\bNo changes made\b"
    ),
    (
        "traceback",
        "error",
        "exception",
        "fatal",
        "panic",
        "fail",
        "enoent",
        "eacces",
        "eperm",
        "eexist",
        "eaddrinuse",
        "no such file",
        "permission denied",
        "command not found",
        "segmentation fault",
        "could not",
        "cannot",
        "can't",
        "unable to",
        "no changes made",
    ),
)
# Lines that start (after an optional "file:line:" location) with an error word: compiler and
# test-runner output. Used where a loose match would catch source code, e.g. truncated output.
_STRICT_ERROR = LazyPattern(
    r"^(?:[\w./@~-]+(?:[:(]\d+(?:[,:]\d+)*\)?)?:?\s*)?"
    r"(?:(?:error|fatal|panic|Error|ERROR|[A-Z]\w*(?:Error|Exception))(?:\s*\[?[A-Z]*\d+\]?)?:"
    r"|FAIL(?:ED)?\b|npm ERR!|Traceback \(most recent call last\)|E\s+\w+(?:Error|Exception)\b)"
)

_NO_MATCH_PROGRAMS: Final = frozenset({"grep", "rg", "ag", "ack", "diff", "cmp", "test", "["})
_INSPECTION_PROGRAMS: Final = words_of(
    "grep rg ag ack cat head tail less more ls tree find fd wc echo printf pwd which "
    "whereis type file stat du df date whoami env printenv uname hostname id nl sort uniq "
    "cut jq yq column basename dirname realpath readlink sleep true code open"
)
_GIT_INSPECTION: Final = words_of(
    "status diff log show branch remote rev-parse blame ls-files grep describe"
)
_CD_PREFIX = LazyPattern(r"cd\s+(?:\"[^\"]*\"|'[^']*'|\S+)\s*(?:&&|;)\s*")
_ENV_ASSIGNMENT = LazyPattern(r"[A-Za-z_]\w*=\S*")


def bash_outcome(command: str, text: str) -> tuple[str, int | None, str | None]:
    """(status, exit code, first error line) of one run, read from its output.

    pi appends "Command exited with code N" only for a non-zero code, so no such line means
    success, unless the output was cut before its end (then only clear errors count).
    """
    # Both patterns are case-insensitive scans of the whole output: skipped without their word.
    codes = _EXIT_CODE.findall(text) if may_hold(text, "exit") else []
    if codes:
        exit_code: int | None = int(codes[-1])
        status = "ok" if exit_code == 0 else "failed"
    elif may_hold(text, "command") and _CANCELLED.search(text):
        return "cancelled", None, None
    elif _TRUNCATED.search(text):
        exit_code, status = None, "unknown"
    else:
        return "ok", None, None
    strict = error_lines(text, strict=True)
    if status == "unknown":
        return ("failed", None, strict[0]) if strict else ("unknown", None, None)
    if status == "ok":
        return "ok", exit_code, None
    if exit_code == 1 and not strict and _program(command)[0] in _NO_MATCH_PROGRAMS:
        return "ok", exit_code, None  # grep and friends say "no match" with exit code 1
    errors = strict or error_lines(text) or _last_lines(text)
    # A traceback's header says nothing; its last line names the exception.
    errors = sorted(errors, key=lambda line: line.startswith("Traceback"))
    return "failed", exit_code, errors[0] if errors else None


_COUNTS = LazyPattern(
    # Test runners and linters report in lower case: "41 passed", "3 files changed".
    r"\b\d+ (?:passed|failed|errors?|skipped|xfailed|xpassed|deselected|warnings?|tests?|"
    r"examples?|failures?|files? (?:changed|checked|would be reformatted)|rows?)\b"
)
_RESULT_CHARS: Final = 200


def result_line(text: str, *, counts_only: bool = False) -> str | None:
    """What a run reported, as it said it: the last line with counts (``41 passed in 0.93s``),
    or the whole output when it is short and names something specific."""
    cuts = list(_TRUNCATED.finditer(text))
    if cuts:
        cut = cuts[-1]
        # Output cut in the middle: only what follows the cut can be the final report.
        text, counts_only = text[cut.end() :], True
    # The line tests only where the whole output holds what they look for.
    exits = may_hold(text, "exit")
    marked = "more characters truncated]" in text
    lines = [
        stripped
        for line in text.splitlines()
        if (stripped := line.strip())
        and not (exits and _EXIT_LINE.search(line))
        and not (marked and _TRUNCATED.search(line))
        and stripped not in ("(no output)", "```")
    ]
    for line in reversed(lines):
        if _COUNTS.search(line):
            return clip(line.strip("=- "), _RESULT_CHARS)
    body = " ".join(lines)
    if (
        not counts_only
        and lines
        and len(lines) <= 3
        and len(body) <= _RESULT_CHARS
        and has_specifics(body)
    ):
        return body
    return None


_WRITES = LazyPattern(
    r"(?:^|[;&|]\s*)(?:sed|perl)\s+(?:-\w+\s+)*-[a-zA-Z]*i\S*\s+.*?(?P<a>[\w./~-]+\.\w+)\s*$"
    r"|\btee\s+(?:-a\s+)?(?P<b>[\w./~-]+)"
    r"|(?<![0-9&>])>{1,2}\s*(?P<c>[\w.~][\w./~-]*)"
)


def written_paths(command: str) -> list[str]:
    """Files a shell command writes: ``sed -i ... file``, ``tee file``, ``> file``."""
    found: list[str] = []
    for line in command.splitlines():
        for match in _WRITES.finditer(line.strip()):
            path = match.group("a") or match.group("b") or match.group("c")
            if path and not path.startswith("/dev/"):
                add_once(found, path)
    return found


def failure_line(text: str, first_line: str) -> str:
    """The line that names a tool's failure: its first line, except that a traceback's header
    says nothing and its exception line (``KeyError: 'conc_uM'``) does - the last one, which
    a chained traceback ("During handling of the above exception ...") raised in the end."""
    if not first_line.startswith("Traceback"):
        return first_line
    errors = error_lines(text, _ALL_LINES, strict=True) or error_lines(text, _ALL_LINES)
    named = [line for line in errors if not line.startswith("Traceback")]
    return named[-1] if named else first_line


_ALL_LINES: Final = 10_000


def error_lines(text: str, limit: int = 3, *, strict: bool = False) -> list[str]:
    pattern: LazyPattern | Gated = _STRICT_ERROR if strict else ERROR_LINE
    found: list[str] = []
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or _EXIT_LINE.search(stripped) or _TRUNCATED.search(stripped):
            continue
        if pattern.search(stripped):
            add_once(found, clip(stripped, ERROR_CHARS))
            if len(found) >= limit:
                break
    return found


def _program(command: str) -> tuple[str, str]:
    """The program a shell command runs, and its first argument, after ``cd x &&`` prefixes."""
    rest = command.strip()
    while cd := _CD_PREFIX.match(rest):
        rest = rest[cd.end() :]
    words = rest.split()
    while words and _ENV_ASSIGNMENT.fullmatch(words[0]):
        words.pop(0)
    if not words:
        return "", ""
    return words[0].rsplit("/", 1)[-1], words[1] if len(words) > 1 else ""


def inspection_name(command: str) -> str | None:
    """A name for a read-only command (grep, ls, git status ...), or None for anything else."""
    if re.search(r"(?<![0-9&>])>{1,2}(?![&>])", command):
        return None  # writes a file
    program, argument = _program(command)
    if program == "git":
        return f"git {argument}" if argument in _GIT_INSPECTION else None
    if program == "sed":
        return "sed -n" if argument == "-n" else None
    return program if program in _INSPECTION_PROGRAMS else None


def command_family(command: str) -> str:
    """The first words of a command, so a later ``npm run check | tail`` fixes ``npm run check``
    (``cd x &&`` and ``VAR=value`` prefixes left out)."""
    rest = command.strip()
    while cd := _CD_PREFIX.match(rest):
        rest = rest[cd.end() :]
    head = re.split(r"\s*(?:\|\|?|&&|;|2>&1|>)\s*", rest, maxsplit=1)[0]
    words = head.split()
    while words and _ENV_ASSIGNMENT.fullmatch(words[0]):
        words.pop(0)
    return " ".join(words[:3])


def _families(command: str) -> set[str]:
    """Every family a successful command vouches for: each step of an ``a && b`` chain ran and
    succeeded."""
    return {command_family(step) for step in re.split(r"\s*&&\s*", command) if step.strip()}


def _last_lines(text: str) -> list[str]:
    for line in reversed(text.splitlines()):
        stripped = line.strip()
        if stripped and not (_EXIT_LINE.search(stripped) or _TRUNCATED.search(stripped)):
            if stripped in ("(no output)", "```"):
                continue
            return [clip(stripped, ERROR_CHARS)]
    return []


def command_text(command: str) -> str:
    lines = [line for line in command.strip().splitlines() if line.strip()]
    if not lines:
        return ""
    first = lines[0].strip()
    if len(lines) > 1:
        first += " …"
    return clip(first, COMMAND_CHARS)


def resolved_failures(commands: dict[str, Command]) -> set[str]:
    """Failed commands made obsolete by a later run of the same family (``npm run check``
    after ``cd x && npm run check | head``): that later run tells the current state."""
    latest: dict[str, int] = {}
    for command in commands.values():
        families = (
            _families(command.text) if command.status == "ok" else {command_family(command.text)}
        )
        for family in families:
            latest[family] = max(latest.get(family, -1), command.seq)
    return {
        command.text
        for command in commands.values()
        if command.status == "failed" and latest[command_family(command.text)] > command.seq
    }
