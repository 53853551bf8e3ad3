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
import operator
import re
from collections.abc import Callable, Iterable, Mapping
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

_SECRET_NAME: Final = (
    r"(?:password|passwd|secret|token|api[_\-]?key|apikey|access[_\-]?key"
    r"|account[_\-]?key|private[_\-]?key|credential)s?[\w\-]{0,24}"
)
"""A name that says a secret follows (``assigned_secret``; case-insensitive there)."""

_VALUE: Final = (
    r"(?!(?:\"" + _SECRET_NAME + r"\"|'" + _SECRET_NAME + r"')\s{0,3}:"
    r"|" + _SECRET_NAME + r":(?:\s|$))"
    r"""(?:"(?P<secret>[^"\n]{1,500})"|'(?P<secret2>[^'\n]{1,500})'"""
    r"""|(?!\[REDACTED)(?![\d.]+(?:[\s,;&]|$))(?P<secret3>[^\s"',;&()\[\]{}<>]{4,500}))"""
)
"""The value assigned to a secret's name: quoted, or a run of characters. It is never a
secret's name itself followed by ``:``, quoted or not (``The secret: "token": "..."``,
``secret: token: ...``): that is the key of the pair that follows, and the rule matches again
at that key, so the value is redacted and the key name kept (the key used to be taken for the
value, and the value passed through)."""

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
    # Hugging Face access tokens: hf_ and 34 random letters (30+ letters and digits accepted);
    # one upper-case letter at least, so hf_ names (hf_hub_download, hf_transfer...) and hex
    # digests are left alone.
    ("huggingface_token", r"\bhf_(?=[a-z0-9]*[A-Z])[A-Za-z0-9]{30,}"),
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
        r"(?i)" + _SECRET_NAME + r"[\"']?\s{0,3}[:=]\s{0,3}" + _VALUE,
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
    "huggingface_token": ("hf_",),
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
_FOLD_MARKS: Final = ("\u0307", "\u0131", "\u017f")
"""What of them the lower-cased text shows: U+0130 lower-cased ends in U+0307 (a combining
dot, which a text may also hold on its own: then it is redacted by full scans, as it may be)."""

# Dashes a key may be written with (a hyphen turned into a dash by a word processor or a chat
# client), read as "-" so that the patterns see the key. One character for one: the spans found
# are those of the original text.
_DASHES: Final = str.maketrans(
    dict.fromkeys(
        map(chr, (0x2010, 0x2011, 0x2012, 0x2013, 0x2014, 0x2015, 0x2212, 0xFE58, 0xFE63, 0xFF0D)),
        "-",
    )
)
_ANY_DASH: Final = tuple(map(chr, _DASHES))  # none has a case: lower() keeps them all


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
    "_PRIVATE_KEY",
    "_DSN",  # Sentry's DSN holds its key
    "_WEBHOOK_URL",  # Slack's and Discord's webhook URLs are their own credential
    "_AUTH",  # npm's NPM_CONFIG__AUTH
)
# Named whole, not by a suffix: libpq's and MySQL's password variables (a "_PWD" suffix would
# be wrong for PWD and OLDPWD, the working directories).
_SECRET_VARIABLE_NAMES: Final = frozenset({"PGPASSWORD", "MYSQL_PWD"})


def environment_secrets(env: Mapping[str, str]) -> list[str]:
    """The values of ``*_API_KEY``, ``*_TOKEN``, ``*_SECRET``, ``*_PASSWORD``, ``*_PASS``,
    ``*_PASSWD``, ``*_SECRET_KEY``, ``*_ACCESS_KEY``, ``*_ACCOUNT_KEY``, ``*_PRIVATE_KEY``,
    ``*_DSN``, ``*_WEBHOOK_URL`` and ``*_AUTH`` variables (``DB_PASS``,
    ``AWS_SECRET_ACCESS_KEY``; also a suffix alone, ``SECRET_KEY``), ``PGPASSWORD`` and
    ``MYSQL_PWD``: literal secrets for :class:`Redactor`, so a key printed by a tool (``env``)
    is blanked out whatever its format."""
    # "_" + name: a suffix on its own (SECRET_KEY, PASSWORD, TOKEN) names a secret too.
    return [
        value
        for name, value in env.items()
        if f"_{name.upper()}".endswith(_SECRET_VARIABLES) or name.upper() in _SECRET_VARIABLE_NAMES
    ]


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
                _Rule(name, regex, _HINTS.get(name, ()), _ANCHORS.get(name, ()))
                for name, regex in BUILTIN_PATTERNS
            )
        for pattern in patterns:
            compiled = pattern if isinstance(pattern, re.Pattern) else compile_pattern(pattern)
            rules.append(_Rule("custom", compiled, ()))
        self._rules = tuple(rules)
        # A built-in rule's regex is compiled the first time a text is due for it: most texts
        # give few rules their hints, and compiling all of them took 17 ms of every process
        # that redacts (a quarter of `compact`'s start-up spent compiling patterns).
        self._patterns: list[re.Pattern[str] | None] = [
            rule.pattern if isinstance(rule.pattern, re.Pattern) else None for rule in rules
        ]
        self._tokens = tuple(f"[REDACTED:{rule.name}]" for rule in rules)
        # One automaton pass over the lower-cased text finds the rules' hints, the anchored
        # rules' anchors, Unicode dashes and the marks of characters (?i) folds onto ASCII
        # letters; the tables below map the index of each word found to what it means.
        marks = (_ANY_DASH, _FOLD_MARKS)
        self._words = _HintFinder([*(r.hints for r in rules), *(r.anchors for r in rules), *marks])
        words = self._words.words
        self._unhinted = frozenset(at for at, rule in enumerate(rules) if not rule.hints)
        self._rules_of = tuple(
            frozenset(at for at, rule in enumerate(rules) if word in rule.hints) for word in words
        )
        self._anchor_words = tuple(
            frozenset(w for w, word in enumerate(words) if word in rule.anchors) for rule in rules
        )
        self._due_of: dict[frozenset[int], tuple[int, ...]] = {}
        self._dash_words = frozenset(w for w, word in enumerate(words) if word in _ANY_DASH)
        self._fold_words = frozenset(w for w, word in enumerate(words) if word in _FOLD_MARKS)

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
        matches, encoded = self._words.find(text)
        if not matches and not self._unhinted:
            return text  # no hint (and no dash): no rule is due
        scan = (matches, frozenset(map(_WORD, matches)), encoded)
        if not scan[1].isdisjoint(self._dash_words):
            probe = text.translate(_DASHES)
            redacted = self._redact(probe, self._scan(probe))
            # Dashes stay as written unless a secret was there.
            return text if redacted == probe else redacted
        return self._redact(text, scan)

    __call__ = redact

    def _scan(self, text: str) -> _Scan:
        """The words found in ``text`` lower-cased, the set of their indexes, and the bytes
        their places count in (``None``: characters; see :meth:`_HintFinder.find`)."""
        matches, encoded = self._words.find(text)
        return matches, frozenset(map(_WORD, matches)), encoded

    def _redact(self, text: str, scan: _Scan) -> str:
        found: set[str] = set()
        rules = self._rules
        start = 0
        while start < len(rules):
            # The rules due from ``start`` on: those without hints and those whose hints occur.
            # After a replacement the text has changed, so the rest are chosen again.
            matches, words, encoded = scan
            folds = not words.isdisjoint(self._fold_words)
            for at in self._due(words, start):
                rule = rules[at]
                pattern = self._patterns[at] or self._compile(at)
                replace = _Replace(self._tokens[at], found)
                if rule.anchors and not folds:
                    # lower() keeps every position then, and what (?i) matches as an ASCII
                    # letter is one in lower() (the Kelvin sign is "k" in both).
                    anchors = self._anchor_words[at]
                    starts = {begin for word, begin, _ in matches if word in anchors}
                    if encoded is not None:
                        starts = _character_offsets(encoded, starts)
                    replaced = _anchored_sub(pattern, text, starts, replace)
                else:
                    replaced = pattern.sub(replace, text)
                if replaced != text:
                    text, start = replaced, at + 1
                    scan = self._scan(text)
                    break
            else:
                break
        if not found:
            return text
        values = sorted((v for v in found if len(v) >= _MIN_LITERAL), key=len, reverse=True)
        if values:
            again = re.compile("|".join(re.escape(value) for value in values))
            text = again.sub("[REDACTED:repeated]", text)
        return text

    def _compile(self, at: int) -> re.Pattern[str]:
        """The compiled regex of the rule at ``at`` (a built-in rule's, the first time)."""
        source = self._rules[at].pattern
        pattern = self._patterns[at] = re.compile(source)
        return pattern

    def _due(self, words: frozenset[int], start: int) -> tuple[int, ...]:
        """The positions, from ``start`` on, of the rules to try on a text holding ``words``
        (indexes into the automaton's words): the rules without hints and those with a hint
        among them. Texts hold few combinations of words: each one's rules are kept."""
        due = self._due_of.get(words)
        if due is None:
            if len(self._due_of) >= _DUE_KEPT:
                self._due_of.clear()
            rules_of = self._rules_of
            due = tuple(sorted(self._unhinted.union(*(rules_of[word] for word in words))))
            self._due_of[words] = due
        return due if start == 0 else tuple(at for at in due if at >= start)

    @classmethod
    def from_settings(
        cls, settings: RedactionSettings, *, literals: Iterable[str] = ()
    ) -> Redactor | None:
        """The redactor ``settings`` ask for, or ``None`` when redaction is disabled."""
        if not settings.enabled:
            return None
        return cls(settings.patterns, literals=literals)


_Scan = tuple[list[tuple[int, int, int]], frozenset[int], bytes | None]
_WORD: Final = operator.itemgetter(0)
"""The word's index in a match ``(word, start, end)``."""
_DUE_KEPT: Final = 4096
"""Combinations of words whose due rules a redactor keeps (a bound for adversarial text)."""


class _HintFinder:
    """Which of a set of lower-case words occur in a text, and where, found in one pass."""

    __slots__ = ("_byte_matches", "matches", "words")

    def __init__(self, word_sets: Iterable[tuple[str, ...]]) -> None:
        self.words = tuple(sorted({word for words in word_sets for word in words}))
        self.matches: Callable[[str], list[tuple[int, int, int]]] = (
            functools.partial(_automaton(self.words).find_matches_as_indexes, overlapping=True)
            if self.words
            else lambda lower: []
        )
        """``(index into words, start, end)`` of every occurrence in a lower-cased text,
        overlapping ones included (a partial: this runs for every text redacted)."""
        self._byte_matches: Callable[[bytes], list[tuple[int, int, int]]] | None = None

    def find(self, text: str) -> tuple[list[tuple[int, int, int]], bytes | None]:
        """:attr:`matches` in ``text`` lower-cased, and ``None``; or for most texts that are
        not ASCII, the same words found in its UTF-8 with the ASCII letters lowered, and
        those bytes, which the places then count in.

        ``str.lower()`` of a text that is not ASCII goes through the Unicode case tables
        character by character, and the automaton then encodes the result to UTF-8 anyway:
        for half the text of a 100k-entry session's summary, 34 ms against 13 ms for the
        bytes. It finds the same words: every word is ASCII or a character no other lowers
        into (dashes, the fold marks), and only U+0130 and the Kelvin sign lower into ASCII
        (or change length): a text holding one of them is lowered as before. Encoding is
        strict, as the automaton's own encoding of a ``str`` is (a lone surrogate raises the
        same error)."""
        if text.isascii() or not self.words or "\u0130" in text or "\u212a" in text:
            return self.matches(text.lower()), None
        encoded = text.encode("utf-8").lower()
        if self._byte_matches is None:
            self._byte_matches = functools.partial(
                _byte_automaton(self.words).find_matches_as_indexes, overlapping=True
            )
        return self._byte_matches(encoded), encoded

    def present(self, lower: str) -> frozenset[str]:
        """The words that occur in ``lower`` (overlapping occurrences included)."""
        words = self.words
        return frozenset(words[index] for index in {index for index, _, _ in self.matches(lower)})


@dataclass(frozen=True, slots=True)
class _Rule:
    name: str
    pattern: re.Pattern[str] | str
    """Compiled, or a built-in rule's regex (compiled when first used: Redactor._compile)."""
    hints: tuple[str, ...]
    anchors: tuple[str, ...] = ()
    """Where every match begins (see ``_ANCHORS``); empty: anywhere."""


def _anchored_sub(pattern: re.Pattern[str], text: str, starts: set[int], replace: _Replace) -> str:
    """``pattern.sub(replace, text)`` for a rule whose matches all begin at one of
    ``starts`` (where its anchors occur in the lower-cased text): leftmost matches, none
    overlapping, as ``sub`` takes them."""
    out: list[str] = []
    done = 0
    for start in sorted(starts):
        if start < done:
            continue
        match = pattern.match(text, start)
        if match is None or match.end() == start:
            continue
        out.append(text[done:start])
        out.append(replace(match))
        done = match.end()
    if not out:
        return text
    out.append(text[done:])
    return "".join(out)


def _character_offsets(encoded: bytes, offsets: set[int]) -> set[int]:
    """Where in the text the places ``offsets`` of its UTF-8 ``encoded`` are (each the first
    byte of a character: a word found begins with an ASCII letter or a whole character)."""
    found: set[int] = set()
    characters = done = 0
    for offset in sorted(offsets):
        characters += len(encoded[done:offset].decode("utf-8"))
        done = offset
        found.add(characters)
    return found


@functools.cache
def _byte_automaton(words: tuple[str, ...]) -> ahocorasick_rs.BytesAhoCorasick:
    """:func:`_automaton` of ``words`` encoded as UTF-8, for bytes (same word indexes)."""
    return ahocorasick_rs.BytesAhoCorasick(
        [word.encode("utf-8") for word in words], implementation=ahocorasick_rs.Implementation.DFA
    )


@functools.cache
def _automaton(words: tuple[str, ...]) -> ahocorasick_rs.AhoCorasick:
    """One automaton finding all of ``words`` in one pass: a redactor's hints, anchors and
    marks (eight str.find loops for the anchors of one rule cost 1.6 s of redacting a
    100k-entry session). A DFA: the fastest of the automaton's forms on session text (0.68 s
    against 1.4 s)."""
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
