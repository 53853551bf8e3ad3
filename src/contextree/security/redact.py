"""Redact secrets from text before it is sent to a summarizer.

A session holds whatever the tools printed: ``env`` dumps, config files, ``curl -H
"Authorization: Bearer ..."``. Summarizing that history sends it to a model, often a remote
one, so :func:`contextree.compaction.summarize.build_summary_prompt` passes the serialized
conversation through a :class:`Redactor` first. The session file itself is never changed.

Built-in patterns (:data:`BUILTIN_PATTERNS`) cover common key formats; users add their own
regular expressions with the ``redaction.patterns`` setting, and ``redaction.enabled = false``
turns redaction off. A pattern with a group named ``secret`` (or ``secret2``...) replaces only
that group, so ``password=hunter2`` becomes ``password=[REDACTED:assigned_secret]`` and the
summary still says that a password was set. Redaction is on by default: a missed summary detail
costs less than a leaked key. It is a safety net, not a guarantee: a secret in a format no
pattern knows passes through.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

import ahocorasick_rs

from contextree.entries.types import (
    is_assistant_message,
    is_text_content,
    is_thinking_content,
    is_tool_result_message,
)

__all__ = [
    "BUILTIN_PATTERNS",
    "DEFAULT_REDACTOR",
    "TOOL_ENV_SCRUBBED",
    "RedactionSettings",
    "Redactor",
    "compile_pattern",
    "environment_secrets",
    "redact_stored_message",
    "tool_environment",
]

_VALUE: Final = (
    r"""(?:"(?P<secret>[^"\n]{1,500})"|'(?P<secret2>[^'\n]{1,500})'"""
    r"""|(?!\[REDACTED)(?![\d.]+(?:[\s,;&]|$))(?P<secret3>[^\s"',;&()\[\]{}<>]{4,500}))"""
)

_AWS_SECRET: Final = (
    r"(?<![A-Za-z0-9/+])(?=[A-Za-z0-9/+]{0,39}[a-z])(?=[A-Za-z0-9/+]{0,39}[A-Z])"
    r"(?P<s>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"
)
"""40 characters of base64 with both cases (a git SHA, all lower-case hex, is not one)."""

BUILTIN_PATTERNS: Final[tuple[tuple[str, str], ...]] = (
    (
        "private_key",
        r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"
        r"(?:(?!-----END)[\s\S]){0,20000}(?:-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----)?",
    ),
    ("anthropic_key", r"\bsk-ant-[A-Za-z0-9_\-]{16,}"),
    ("openai_key", r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{16,}"),
    ("github_token", r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})"),
    (
        # A bare secret access key (40 base64 characters, both cases) within a few lines of
        # its key id; before aws_access_key, which would hide the id that gives it away.
        "aws_secret_key",
        r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b[\s\S]{0,300}?"
        + _AWS_SECRET.replace("?P<s>", "?P<secret>")
        + r"|"
        + _AWS_SECRET.replace("?P<s>", "?P<secret2>")
        + r"[\s\S]{0,300}?\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",
    ),
    ("aws_access_key", r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b"),
    ("twilio_key", r"\bSK[0-9a-fA-F]{32}\b"),
    ("slack_token", r"\bxox[abposr]-[A-Za-z0-9\-]{10,}"),
    ("stripe_key", r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}"),
    ("gitlab_token", r"\bglpat-[A-Za-z0-9_\-]{20,}"),
    ("npm_token", r"\bnpm_[A-Za-z0-9]{36}\b"),
    ("google_api_key", r"\bAIza[0-9A-Za-z_\-]{35}"),
    ("jwt", r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
    ("bearer_token", r"(?i)\bbearer\s+(?P<secret>(?!\[REDACTED)[A-Za-z0-9._~+/\-]{8,}=*)"),
    (
        "basic_auth",
        r"(?i)\bauthorization\s*[:=]\s*[\"']?basic\s+(?P<secret>[A-Za-z0-9+/]{8,}=*)",
    ),
    (
        # Any other scheme ("Token", "Digest", none): the credential after the header name.
        "authorization_header",
        r"(?i)\bauthorization\s*[:=]\s*[\"']?(?:(?:token|bearer|basic|digest|apikey)\s+)?"
        r"(?!\[REDACTED)(?P<secret>[A-Za-z0-9._~+/\-=]{8,})",
    ),
    (
        "cli_password",
        r"(?<![\w-])--(?:password|passwd|pass|token|api-key|apikey|secret)(?:\s+|=)"
        r"(?:\"(?P<secret>[^\"\n]{1,500})\"|'(?P<secret2>[^'\n]{1,500})'"
        r"|(?!-|\[REDACTED)(?P<secret3>[^\s\"']{3,500}))",
    ),
    (
        # mysql -pSECRET (no space): only for the clients that take it that way.
        "mysql_password",
        r"\b(?:mysql|mysqldump|mysqladmin|mariadb)\b[^\n|;&]{0,300}?\s-p(?!\[REDACTED)"
        r"(?P<secret>[^\s\"']{3,200})",
    ),
    (
        # A secret inside JSON that is itself a JSON string: {\"password\": \"hunter2\"}.
        "escaped_json_secret",
        r"(?i)\\\"(?:password|passwd|secret|token|api[_\-]?key|apikey|access[_\-]?key"
        r"|private[_\-]?key|credential)s?[\w\-]{0,24}\\\"\s{0,3}:\s{0,3}"
        r"\\\"(?!\[REDACTED)(?P<secret>[^\"\\\n]{1,500})\\\"",
    ),
    (
        # sshpass -p SECRET: the password flag of the one client built to take it.
        "sshpass_password",
        r"\bsshpass\b[^\n|;&]{0,100}?\s-p\s*(?!\[REDACTED)"
        r"(?:\"(?P<secret>[^\"\n]{1,500})\"|'(?P<secret2>[^'\n]{1,500})'|(?P<secret3>[^\s\"']{1,500}))",
    ),
    (
        # DB_PASS=..., db.pass: ..., Pwd=... (ODBC, .NET connection strings). A bare "pass"
        # takes "=" only ("the pass: through" is prose); PWD=/path is the working directory.
        "assigned_password",
        r"(?i)(?:(?<=[_.\-])(?:pass|pwd)(?![a-z])[\w\-]{0,24}[\"']?\s{0,3}[:=]"
        r"|(?<![a-z0-9_.\-])(?:pass|pwd)(?![a-z])[\w\-]{0,24}[\"']?\s{0,3}=)\s{0,3}(?![/~])"
        + _VALUE,
    ),
    (
        "url_password",
        r"(?i)\b[a-z][a-z0-9+.\-]{1,20}://[^\s:/@\[]{1,200}:(?P<secret>[^\s@/\[]{1,200})@",
    ),
    (
        "assigned_secret",
        r"(?i)(?:password|passwd|secret|token|api[_\-]?key|apikey|access[_\-]?key"
        r"|account[_\-]?key|private[_\-]?key|credential)s?[\w\-]{0,24}[\"']?\s{0,3}[:=]\s{0,3}"
        + _VALUE,
    ),
)
"""``(name, regex)`` of every built-in pattern, applied in this order."""

_MIN_LITERAL: Final = 8

_HINTS: Final[dict[str, tuple[str, ...]]] = {
    # A rule runs only when one of its hints occurs in the lower-cased text: scanning a
    # megabyte with every regex costs far more than finding the hints. All hints are found in
    # one pass of an Aho-Corasick automaton (39 substring searches, one per hint, took 4.6 s
    # of a 100k-entry recall build; the automaton 0.7 s).
    "private_key": ("private key",),
    "anthropic_key": ("sk-ant-",),
    "openai_key": ("sk-",),
    "github_token": ("gh", "github_pat_"),
    "aws_secret_key": ("akia", "asia"),
    "aws_access_key": ("akia", "asia", "abia", "acca"),
    "twilio_key": ("sk",),
    "sshpass_password": ("sshpass",),
    "assigned_password": ("pass", "pwd"),
    "slack_token": ("xox",),
    "stripe_key": ("sk_live_", "sk_test_", "rk_live_", "rk_test_"),
    "gitlab_token": ("glpat-",),
    "npm_token": ("npm_",),
    "authorization_header": ("authorization",),
    "cli_password": ("--pass", "--token", "--api", "--secret"),
    "mysql_password": ("mysql", "mariadb"),
    "escaped_json_secret": ('\\"',),
    "google_api_key": ("aiza",),
    "jwt": ("eyj",),
    "bearer_token": ("bearer",),
    "basic_auth": ("basic",),
    "url_password": ("://",),
    "assigned_secret": (
        "password",
        "passwd",
        "secret",
        "token",
        "key",
        "credential",
    ),
}

_ANCHORS: Final[dict[str, tuple[str, ...]]] = {
    # Where every match of a rule begins (lower-case): the first letters of each alternative
    # its regex starts with. Such a rule is tried only there (``Pattern.match`` at each
    # place, which still sees the text before it for look-behinds) instead of by a scan of the
    # whole text: the two rules below, case-insensitive alternations that Python's regex
    # engine tries at every position, took two thirds of the time of redacting a session.
    "assigned_password": ("pass", "pwd"),
    "assigned_secret": (
        "passw",
        "secret",
        "token",
        "api",
        "access",
        "account",
        "private",
        "credential",
    ),
}

_FOLDS_ONTO_ASCII: Final = ("\u0130", "\u0131", "\u017f")
"""The characters that (?i) matches with an ASCII letter but lower() does not make one (and
U+0130, which lower() makes two characters): a text holding one is redacted by full scans."""

# Dashes a key may be written with (a hyphen turned into a dash by a word processor or a chat
# client), read as "-" so that the patterns see the key. One character for one: the spans found
# are those of the original text.
_DASHES: Final = str.maketrans(
    dict.fromkeys(
        map(chr, (0x2010, 0x2011, 0x2012, 0x2013, 0x2014, 0x2015, 0x2212, 0xFE58, 0xFE63, 0xFF0D)),
        "-",
    )
)
_ANY_DASH: Final = tuple(map(chr, _DASHES))  # one `in` each: 4x faster than a regex class


_SECRET_VARIABLES: Final = (
    "_API_KEY",
    "_TOKEN",
    "_SECRET",
    "_PASSWORD",
    "_PASS",
    "_PASSWD",
    "_SECRET_KEY",
    "_ACCESS_KEY",
    "_ACCOUNT_KEY",
)


def environment_secrets(env: Mapping[str, str]) -> list[str]:
    """The values of ``*_API_KEY``, ``*_TOKEN``, ``*_SECRET``, ``*_PASSWORD``, ``*_PASS``,
    ``*_PASSWD``, ``*_SECRET_KEY``, ``*_ACCESS_KEY`` and ``*_ACCOUNT_KEY`` variables
    (``DB_PASS``, ``AWS_SECRET_ACCESS_KEY``): literal secrets for :class:`Redactor`, so a key
    printed by a tool (``env``) is blanked out whatever its format."""
    return [value for name, value in env.items() if name.upper().endswith(_SECRET_VARIABLES)]


TOOL_ENV_SCRUBBED: Final = ("_API_KEY",)
"""Variables whose names end so (``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY``...) are not passed
to the commands the agent runs: ``env`` would otherwise print the provider's key into the
session and the next request."""
_TOOL_ENV_NAMES: Final = frozenset({"ANTHROPIC_AUTH_TOKEN", "CONTEXTREE_SERVE_TOKEN"})


def tool_environment(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` without the model providers' keys (:data:`TOOL_ENV_SCRUBBED`)."""
    return {
        name: value
        for name, value in env.items()
        if not name.upper().endswith(TOOL_ENV_SCRUBBED) and name.upper() not in _TOOL_ENV_NAMES
    }


def redact_stored_message(message: Mapping[str, Any], redactor: Redactor) -> dict[str, Any]:
    """A copy of an assistant reply or tool result, with secrets in its text redacted before
    it is written to the session (a model may echo a key; a tool may print one). Tool-call
    arguments and signed thinking stay as the model sent them; other roles, the user's own
    words above all, are returned unchanged."""
    out = dict(message)
    if not (is_assistant_message(message) or is_tool_result_message(message)):
        return out
    content = message.get("content")
    if isinstance(content, str):
        out["content"] = redactor.redact(content)
    elif isinstance(content, list):
        out["content"] = [_redact_block(block, redactor) for block in content]
    return out


def _redact_block(block: Any, redactor: Redactor) -> Any:
    if not isinstance(block, dict):
        return block
    if is_text_content(block) and isinstance(block.get("text"), str):
        return {**block, "text": redactor.redact(block["text"])}
    # A signed thinking block goes back to the provider verbatim or not at all.
    signed = bool(block.get("thinkingSignature"))
    if is_thinking_content(block) and isinstance(block.get("thinking"), str) and not signed:
        return {**block, "thinking": redactor.redact(block["thinking"])}
    return block


def compile_pattern(pattern: str) -> re.Pattern[str]:
    """Compile a user pattern, or raise ``ValueError`` naming it and the regex error."""
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"invalid regular expression {pattern!r}: {exc}") from None


# Part of the settings schema (contextree.settings.schema re-exports it with the other
# settings types), but defined here: settings sits above security in the layer order, and
# Redactor.from_settings below reads it.
@dataclass(frozen=True, slots=True, kw_only=True)
class RedactionSettings:
    """``redaction.*``: what to blank out of text sent to a summarizer."""

    enabled: bool = True
    """Off: nothing is redacted, built-in or user patterns alike."""
    patterns: tuple[str, ...] = ()
    """User regular expressions, applied after the built-in ones."""


class Redactor:
    """Replaces secrets in text with ``[REDACTED:<pattern name>]``.

    Args:
        patterns: extra regular expressions (strings or compiled), named ``custom``.
        builtin: also apply :data:`BUILTIN_PATTERNS`.
        literals: exact secret values to replace wherever they appear (e.g. the API keys in
            use); values shorter than 8 characters are ignored, they would match too much.
    """

    def __init__(
        self,
        patterns: Iterable[str | re.Pattern[str]] = (),
        *,
        builtin: bool = True,
        literals: Iterable[str] = (),
    ) -> None:
        rules: list[_Rule] = []
        values = sorted({v for v in literals if len(v) >= _MIN_LITERAL}, key=len, reverse=True)
        if values:
            literal = re.compile("|".join(re.escape(v) for v in values))
            rules.append(_Rule("secret", literal, ()))
        if builtin:
            rules.extend(
                _Rule(name, re.compile(regex), _HINTS.get(name, ()), _ANCHORS.get(name, ()))
                for name, regex in BUILTIN_PATTERNS
            )
        for pattern in patterns:
            compiled = pattern if isinstance(pattern, re.Pattern) else compile_pattern(pattern)
            rules.append(_Rule("custom", compiled, ()))
        self._rules = tuple(rules)
        self._hints = _HintFinder(rule.hints for rule in rules)
        self._unhinted = frozenset(at for at, rule in enumerate(rules) if not rule.hints)
        by_hint: dict[str, set[int]] = {}
        for at, rule in enumerate(rules):
            for hint in rule.hints:
                by_hint.setdefault(hint, set()).add(at)
        self._by_hint = {hint: frozenset(ats) for hint, ats in by_hint.items()}

    def __repr__(self) -> str:
        names = sorted({rule.name for rule in self._rules})
        return f"Redactor({', '.join(names) or 'nothing'})"

    @property
    def names(self) -> tuple[str, ...]:
        """The name of every rule, in the order they are applied."""
        return tuple(rule.name for rule in self._rules)

    def redact(self, text: str) -> str:
        """``text`` with every match replaced; the text itself when nothing matches.

        Unicode dashes are read as ``-`` (``sk‐proj-...`` written with U+2010 is a key); a
        text in which something was redacted comes back with its dashes as ``-``.

        A secret found by a pattern (``password=hunter2!x``) is also replaced where it appears
        again without the context that gave it away."""
        if not text.isascii() and any(dash in text for dash in _ANY_DASH):
            probe = text.translate(_DASHES)
            redacted = self._redact(probe)
            # Dashes stay as written unless a secret was there.
            return text if redacted == probe else redacted
        return self._redact(text)

    __call__ = redact

    def _redact(self, text: str) -> str:
        found: set[str] = set()
        rules = self._rules
        lower = text.lower()
        due = self._due(lower, 0)
        while due:
            # ``due``: the rules without hints and those whose hints occur. After a
            # replacement the text has changed, so the rules after it are chosen again.
            folds = not text.isascii() and any(c in text for c in _FOLDS_ONTO_ASCII)
            for at in due:
                rule = rules[at]
                replace = _Replace(f"[REDACTED:{rule.name}]", found)
                if rule.anchors and not folds:
                    # lower() keeps every position then, and what (?i) matches as an ASCII
                    # letter is one in lower() (the Kelvin sign is "k" in both).
                    replaced = _anchored_sub(rule, text, lower, replace)
                else:
                    replaced = rule.pattern.sub(replace, text)
                if replaced != text:
                    text = replaced
                    lower = text.lower()
                    due = self._due(lower, at + 1)
                    break
            else:
                break
        values = sorted((v for v in found if len(v) >= _MIN_LITERAL), key=len, reverse=True)
        if values:
            again = re.compile("|".join(re.escape(value) for value in values))
            text = again.sub("[REDACTED:repeated]", text)
        return text

    def _due(self, lower: str, start: int) -> list[int]:
        """The positions, from ``start`` on, of the rules to try on a text (``lower`` is it
        lower-cased): the rules without hints and those with a hint in it."""
        present = self._hints.present(lower)
        if not present and not self._unhinted:
            return []  # most texts: no rule is due
        due = set(self._unhinted)
        for hint in present:
            due.update(self._by_hint[hint])
        return sorted(at for at in due if at >= start)

    @classmethod
    def from_settings(
        cls, settings: RedactionSettings, *, literals: Iterable[str] = ()
    ) -> Redactor | None:
        """The redactor ``settings`` ask for, or ``None`` when redaction is disabled."""
        if not settings.enabled:
            return None
        return cls(settings.patterns, literals=literals)


class _HintFinder:
    """Which of a set of lower-case hints occur in a text, found in one pass."""

    __slots__ = ("_automaton", "_hints")

    def __init__(self, hint_sets: Iterable[tuple[str, ...]]) -> None:
        self._hints = tuple(sorted({hint for hints in hint_sets for hint in hints}))
        self._automaton = _automaton(self._hints) if self._hints else None

    def present(self, lower: str) -> frozenset[str]:
        """The hints that occur in ``lower`` (overlapping occurrences included)."""
        if self._automaton is None:
            return frozenset()
        hints = self._hints
        matches = self._automaton.find_matches_as_indexes(lower, overlapping=True)
        return frozenset(hints[index] for index in {index for index, _, _ in matches})


@dataclass(frozen=True, slots=True)
class _Rule:
    name: str
    pattern: re.Pattern[str]
    hints: tuple[str, ...]
    anchors: tuple[str, ...] = ()
    """Where every match begins (see ``_ANCHORS``); empty: anywhere."""


def _anchored_sub(rule: _Rule, text: str, lower: str, replace: _Replace) -> str:
    """``rule.pattern.sub(replace, text)`` for a rule whose matches all begin at one of its
    anchors in ``lower``: leftmost matches, none overlapping, as ``sub`` takes them."""
    found = _automaton(rule.anchors).find_matches_as_indexes(lower, overlapping=True)
    starts = {start for _, start, _ in found}
    out: list[str] = []
    done = 0
    for start in sorted(starts):
        if start < done:
            continue
        match = rule.pattern.match(text, start)
        if match is None or match.end() == start:
            continue
        out.append(text[done:start])
        out.append(replace(match))
        done = match.end()
    if not out:
        return text
    out.append(text[done:])
    return "".join(out)


@functools.cache
def _automaton(words: tuple[str, ...]) -> ahocorasick_rs.AhoCorasick:
    """One automaton finding all of ``words`` in one pass: the hints of every rule, or the
    anchors of one (eight str.find loops cost 1.6 s of redacting a 100k-entry session). A
    DFA: the fastest of the automaton's forms on session text (0.68 s against 1.4 s)."""
    return ahocorasick_rs.AhoCorasick(list(words), implementation=ahocorasick_rs.Implementation.DFA)


class _Replace:
    """Replace the groups named ``secret*`` that took part in a match, else the whole match;
    the replaced values go into ``found``."""

    __slots__ = ("_found", "_token")

    def __init__(self, token: str, found: set[str]) -> None:
        self._token = token
        self._found = found

    def __call__(self, match: re.Match[str]) -> str:
        spans = [
            match.span(group)
            for group in match.re.groupindex
            if group.startswith("secret") and match.start(group) >= 0
        ]
        if not spans:
            self._found.add(match.group(0))
            return self._token
        self._found.update(match.string[begin:end] for begin, end in spans)
        start = match.start()
        text = match.group(0)
        out: list[str] = []
        position = 0
        for begin, end in sorted(spans):
            out.append(text[position : begin - start])
            out.append(self._token)
            position = end - start
        out.append(text[position:])
        return "".join(out)


DEFAULT_REDACTOR: Final = Redactor()
"""The built-in patterns only: what summaries get when no redactor is passed."""
