"""The built-in offline summarizer: structured summaries with no model, no network, no key.

It is the default summarizer (DESIGN.md "Built-in default"). It implements the model-client
protocol, so the compaction code can hand it the same request it would send to a model: one user
message holding the assembled prompt (pi-behaviour.md §7.2). The prompt is taken apart again, the
serialized conversation (§7.1) is read as structure (requests, tool calls and their results,
commands and exit codes, errors, the assistant's last words) and the summary is written in the
section layout our prompts ask models for (§7.3). Code that already has the pieces can call
:meth:`OfflineSummarizer.summarize` directly and skip the prompt round trip.

Properties the compaction code relies on:

- Deterministic: the same input gives the same output, byte for byte.
- Iterative: with a previous summary, its facts are merged with the new ones, not replaced.
- Bounded: the summary is at most ``max_fraction`` of the summarized tokens (chars/4, with
  the previous summary carried at its own size), at most ``max_tokens_cap`` and at most the
  request's ``max_tokens``. Lines are dropped least important and oldest first; the goal, file
  paths, failing commands, the user's constraints and a pending question are kept even then.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Final, Literal, get_args

from contextree.compaction.prompt_templates import load_prompt
from contextree.llm.base import Completion, CompletionRequest, make_usage
from contextree.tokens.estimate import utf16_len

__all__ = [
    "SUMMARY_KINDS",
    "OfflineSummarizer",
    "SummaryKind",
    "SummaryPrompt",
    "parse_summary_prompt",
]

SummaryKind = Literal["initial", "update", "turn_prefix", "short", "branch"]
"""Which summary is asked for: first history summary, update of a previous one, the prefix of
a split turn, the short display summary, or a branch summary."""

SUMMARY_KINDS: Final[tuple[SummaryKind, ...]] = get_args(SummaryKind)

_TEMPLATE_KINDS: Final[tuple[tuple[str, SummaryKind], ...]] = (
    ("initial-summary", "initial"),
    ("update-summary", "update"),
    ("turn-prefix", "turn_prefix"),
    ("short-summary", "short"),
    ("branch-summary", "branch"),
)
_FOCUS_MARKER: Final = "Additional focus: "
_SHORT_PROMPT = re.compile(
    r"(?i)\b(?:2|two)\s*(?:-|–|to|or)\s*(?:3|three)\s+sentences|short summary"
)
_TURN_PREFIX_PROMPT = re.compile(r"(?i)## original request|context for suffix|prefix of a turn")
_BRANCH_WORD = re.compile(r"(?i)\bbranch\b")


@dataclass(frozen=True)
class SummaryPrompt:
    """An assembled summarization prompt taken apart (pi-behaviour.md §7.2)."""

    conversation: str
    """The serialized conversation inside ``<conversation>``."""
    previous_summary: str | None
    """The text inside ``<previous-summary>``, if the block is there."""
    extra_context: tuple[str, ...]
    """The lines of ``<additional-context>``, without their ``"- "`` bullets."""
    instructions: str
    """The prompt text after the blocks, without the ``Additional focus`` line."""
    focus: str | None
    """The custom instructions after ``Additional focus:``, if any."""
    kind: SummaryKind
    """The summary the instructions ask for (see :func:`parse_summary_prompt`)."""


def parse_summary_prompt(text: str) -> SummaryPrompt:
    """Take apart a prompt assembled as in pi-behaviour.md §7.2.

    The kind is found by comparing the instructions with our built-in templates; for other
    texts (pi's own prompts reach ``contextree serve``; users override templates) a few
    distinctive phrases decide, and otherwise a prompt with a previous summary is an update and
    one without is an initial summary. Text without a ``<conversation>`` block is read as the
    conversation itself.
    """
    conversation, rest = _take_conversation(text)
    previous, rest = _take_block(rest, "previous-summary")
    extra_block, rest = _take_block(rest, "additional-context")
    extra: tuple[str, ...] = ()
    if extra_block is not None:
        extra = tuple(
            line[2:] if line.startswith("- ") else line
            for line in extra_block.splitlines()
            if line.strip()
        )
    instructions, focus = _split_focus(rest)
    return SummaryPrompt(
        conversation=conversation,
        previous_summary=previous,
        extra_context=extra,
        instructions=instructions,
        focus=focus,
        kind=_detect_kind(instructions, has_previous=previous is not None),
    )


class OfflineSummarizer:
    """A deterministic summarizer that reads conversation structure instead of calling a model.

    Args:
        name: the client name reported in the protocol's ``name`` attribute.
        max_fraction: the summary may use at most this share of the summarized tokens.
        max_tokens_cap: the summary never exceeds this many tokens.
        min_tokens: the budget never drops below this, so tiny conversations still get a
            usable summary (a request's ``max_tokens`` can still lower it).
    """

    def __init__(
        self,
        name: str = "offline",
        *,
        max_fraction: float = 0.2,
        max_tokens_cap: int = 4000,
        min_tokens: int = 400,
    ) -> None:
        if not 0 < max_fraction <= 1:
            raise ValueError(f"max_fraction must be in (0, 1], got {max_fraction}")
        if max_tokens_cap < 1 or min_tokens < 1:
            raise ValueError(
                f"max_tokens_cap and min_tokens must be positive, got {max_tokens_cap} "
                f"and {min_tokens}"
            )
        self.name = name
        self.max_fraction = max_fraction
        self.max_tokens_cap = max_tokens_cap
        self.min_tokens = min_tokens

    async def complete(self, request: CompletionRequest) -> Completion:
        """Summarize the prompt in ``request`` (the model-client protocol).

        The user messages' text is parsed with :func:`parse_summary_prompt`; ``max_tokens``
        lowers the budget. Usage is chars/4 of the prompt and of the summary.
        """
        texts = [_message_text(message) for message in request.messages]
        prompt = "\n\n".join(text for text in texts if text)
        parsed = parse_summary_prompt(prompt)
        summary = self.summarize(
            parsed.conversation,
            kind=parsed.kind,
            previous_summary=parsed.previous_summary,
            extra_context=parsed.extra_context,
            focus=parsed.focus,
            budget_tokens=request.max_tokens,
        )
        usage = make_usage(
            input=_estimate_tokens(request.system_prompt) + _estimate_tokens(prompt),
            output=_estimate_tokens(summary),
        )
        return Completion(
            content=[{"type": "text", "text": summary}],
            usage=usage,
            stop_reason="stop",
            model="offline",
        )

    def summarize(
        self,
        conversation_text: str,
        *,
        kind: SummaryKind = "initial",
        previous_summary: str | None = None,
        extra_context: Iterable[str] = (),
        focus: str | None = None,
        budget_tokens: int | None = None,
    ) -> str:
        """Summarize a conversation serialized as in pi-behaviour.md §7.1.

        Args:
            conversation_text: the output of ``serialize_conversation``.
            kind: the summary to write; ``"update"`` and ``"initial"`` differ only in whether
                a previous summary is merged, which happens whenever one is given.
            previous_summary: an earlier summary whose facts are kept.
            extra_context: lines a hook added; they go to Critical Context verbatim.
            focus: the user's custom instructions; shown and used to rank lines.
            budget_tokens: an upper bound on the summary size, e.g. the request's max_tokens.

        Raises:
            ValueError: ``kind`` is not one of :data:`SUMMARY_KINDS`.
        """
        if kind not in SUMMARY_KINDS:
            raise ValueError(f'unknown summary kind "{kind}"; expected one of: {SUMMARY_KINDS}')
        focus_text = focus.strip() if focus and focus.strip() else None
        digest = _digest_conversation(conversation_text, focus=focus_text)
        if previous_summary and previous_summary.strip() and kind != "turn_prefix":
            digest = _merge(_digest_summary(previous_summary), digest)
        context = [line.strip() for line in extra_context if line.strip()]
        if context:
            # A hook gives its context for this call; older context lines are replaced.
            digest.extra_context = context
        budget = self._budget(conversation_text, previous_summary, budget_tokens)
        if kind == "short":
            return _clip(_short_summary(digest), budget * 4)
        return _render(digest, kind=kind, budget_tokens=budget)

    def _budget(self, conversation: str, previous: str | None, limit: int | None) -> int:
        # The previous summary already stands for older history at most max_fraction of its
        # size, so it is carried at its own size; only the new messages are scaled.
        new_share = math.floor(self.max_fraction * _estimate_tokens(conversation))
        carried = _estimate_tokens(previous) if previous else 0
        budget = min(max(self.min_tokens, new_share + carried), self.max_tokens_cap)
        if limit is not None and limit > 0:
            budget = min(budget, limit)
        return budget


def _short_summary(digest: _Digest) -> str:
    """Two or three first-person sentences about the changes (the short display summary)."""
    sentences: list[str] = []
    modified = list(digest.edits)
    if modified:
        names = [f"`{path}`" for path in modified[:4]]
        if len(modified) > 4:
            names.append(_plural(len(modified) - 4, "more file"))
        sentences.append(f"I modified {_join_names(names)}.")
    elif digest.reads:
        names = [f"`{path}`" for path in list(digest.reads)[:3]]
        sentences.append(f"I made no file changes; I read {_join_names(names)}.")
    else:
        sentences.append("I made no file changes.")
    resolved = _resolved_failures(digest.commands)
    failing = [
        command
        for command in digest.commands.values()
        if command.status == "failed" and command.text not in resolved
    ]
    if failing:
        runs = [f"`{_clip(c.text, 60)}` ({c.status_note()})" for c in failing[:3]]
        verb = "fails" if len(runs) == 1 else "fail"
        sentences.append(f"I ran {_join_names(runs)}, which still {verb}.")
    elif digest.commands:
        sentences.append(f"I ran {_plural(len(digest.commands), 'command')} without errors.")
    if digest.pending_question:
        question = " ".join(digest.pending_question.split())
        sentences.append(f"I asked the user: {_clip(question, 200)}")
    elif digest.in_progress:
        sentences.append(f"I have not finished: {_clip(digest.in_progress[-1], 160)}.")
    return " ".join(sentences[:3])


def _join_names(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


# --- prompt parsing -----------------------------------------------------------------------------


def _take_conversation(text: str) -> tuple[str, str]:
    opening = "<conversation>\n"
    if not text.startswith(opening):
        return text, ""
    # The conversation may itself quote "</conversation>", so prefer a closing tag that is
    # followed by one of the blocks §7.2 puts after it, and otherwise take the last one.
    end = -1
    for follower in ("<previous-summary>\n", "<additional-context>\n"):
        end = text.rfind(f"\n</conversation>\n\n{follower}")
        if end >= 0:
            break
    if end < 0:
        end = text.rfind("\n</conversation>")
    if end < len(opening) - 1:
        return text[len(opening) :], ""
    body = text[len(opening) : max(end, len(opening))]
    return body, text[end + len("\n</conversation>") :].lstrip("\n")


def _take_block(text: str, tag: str) -> tuple[str | None, str]:
    opening = f"<{tag}>\n"
    if not text.startswith(opening):
        return None, text
    end = text.rfind(f"\n</{tag}>")
    if end < len(opening) - 1:
        return text[len(opening) :], ""
    body = text[len(opening) : max(end, len(opening))]
    return body, text[end + len(f"\n</{tag}>") :].lstrip("\n")


def _split_focus(instructions: str) -> tuple[str, str | None]:
    if instructions.startswith(_FOCUS_MARKER):
        return "", instructions[len(_FOCUS_MARKER) :].strip() or None
    index = instructions.rfind("\n\n" + _FOCUS_MARKER)
    if index < 0:
        return instructions.strip(), None
    focus = instructions[index + 2 + len(_FOCUS_MARKER) :].strip()
    return instructions[:index].strip(), focus or None


def _detect_kind(instructions: str, *, has_previous: bool) -> SummaryKind:
    for template, kind in _TEMPLATE_KINDS:
        if instructions and instructions == load_prompt(template):
            return kind
    if _TURN_PREFIX_PROMPT.search(instructions):
        return "turn_prefix"
    if _SHORT_PROMPT.search(instructions):
        return "short"
    # pi's history prompts mention "branch" too (repository state), but they also ask for
    # Critical Context, which the branch prompts do not.
    if (
        _BRANCH_WORD.search(instructions)
        and "critical context" not in instructions.lower()
        and not has_previous
    ):
        return "branch"
    return "update" if has_previous else "initial"


def _message_text(message: object) -> str:
    if not isinstance(message, dict) or message.get("role") not in ("user", "developer"):
        return ""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "".join(
        block["text"]
        for block in content
        if isinstance(block, dict)
        and block.get("type") == "text"
        and isinstance(block.get("text"), str)
    )


def _estimate_tokens(text: str) -> int:
    return math.ceil(utf16_len(text) / 4)


# --- what a conversation or an earlier summary tells us ------------------------------------------

_ROLES: Final = "User|Assistant thinking|Assistant tool calls|Assistant|Tool result"
_ROLE_KEYS: Final = {
    "User": "user",
    "Assistant thinking": "thinking",
    "Assistant": "assistant",
    "Assistant tool calls": "calls",
    "Tool result": "result",
}
# A part's text may contain blank lines, so parts are split only before a role marker (§7.1).
_PART_BOUNDARY = re.compile(rf"\n\n(?=\[(?:{_ROLES})\]: )")
_PART_HEAD = re.compile(rf"\[({_ROLES})\]: ")
_BASH_EXECUTION = re.compile(r"Ran `(?P<cmd>.*?)`\n", re.S)
_EMBEDDED_SUMMARY = re.compile(
    r"(?P<intro>[^<]{0,800}?)<summary>\n(?P<body>.*?)\n?</summary>\s*\Z", re.S
)
_SLASH_COMMAND = re.compile(r"/[\w:.-]+")
_CALL_NAME = re.compile(r"\s*([^\s(;]+)\(")
_CALL_KEY = re.compile(r"\s*([^=(),\s]+)=")
_JSON = json.JSONDecoder()

_EXIT_CODE = re.compile(
    r"(?i)(?:command exited with code|exit(?:ed with)? (?:code|status):?)\s*(-?\d+)"
)
_CANCELLED = re.compile(
    r"(?i)\bcommand (?:aborted|cancelled|canceled|timed out)\b|\(command cancelled\)"
)
_TRUNCATED = re.compile(r"\[\.\.\. \d+ more characters truncated\]")
_ERROR_LINE = re.compile(
    r"Traceback \(most recent call last\)"
    r"|\b[A-Z]\w*(?:Error|Exception)\b|\bError\b"
    r"|\b(?:error|fatal|panic)\b\s*(?:[A-Za-z]+\d+\s*)?:"
    r"|\bERROR\b|\bFAIL(?:ED)?\b|\bfailed\b"
    r"|\bE(?:NOENT|ACCES|PERM|EXIST|ADDRINUSE)\b"
    r"|No such file or directory|Permission denied|command not found|Segmentation fault"
    r"|\b(?:Could not|Cannot|Can't|Unable to) (?:find|open|read|resolve|locate|import|load)\b"
    r"|\bNo changes made\b"
)
# Lines that start (after an optional "file:line:" location) with an error word: compiler and
# test-runner output. Used where a loose match would catch source code, e.g. truncated output.
_STRICT_ERROR = re.compile(
    r"^(?:[\w./@~-]+(?:[:(]\d+(?:[,:]\d+)*\)?)?:?\s*)?"
    r"(?:(?:error|fatal|panic|Error|ERROR|[A-Z]\w*(?:Error|Exception))(?:\s*\[?[A-Z]*\d+\]?)?:"
    r"|FAIL(?:ED)?\b|npm ERR!|Traceback \(most recent call last\)|E\s+\w+(?:Error|Exception)\b)"
)


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_NO_MATCH_PROGRAMS: Final = frozenset({"grep", "rg", "ag", "ack", "diff", "cmp", "test", "["})
_INSPECTION_PROGRAMS: Final = _words(
    "grep rg ag ack cat head tail less more ls tree find fd wc echo printf pwd which "
    "whereis type file stat du df date whoami env printenv uname hostname id nl sort uniq "
    "cut jq yq column basename dirname realpath readlink sleep true code open"
)
_GIT_INSPECTION: Final = _words(
    "status diff log show branch remote rev-parse blame ls-files grep describe"
)
_CD_PREFIX = re.compile(r"cd\s+(?:\"[^\"]*\"|'[^']*'|\S+)\s*(?:&&|;)\s*")
_ENV_ASSIGNMENT = re.compile(r"[A-Za-z_]\w*=\S*")
_FENCE = re.compile(r"```.*?(?:```|\Z)", re.S)
_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+(?=\S)|\n+")
_LIST_MARKER = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")
# Imperatives at the start of a sentence, or obligations anywhere in it. "I don't know why"
# is a complaint, not a rule, so "don't" only counts at the start.
_CONSTRAINT = re.compile(
    r"(?i)^(?:please\s+|and\s+|but\s+|also\s+|so\s+)?(?:don'?t|do not|never|always|avoid|"
    r"make sure|ensure|only)\b"
    r"|\b(?:must|mustn'?t|shall not|never|not allowed|no need to)\b"
    r"|\b(?:you|we) (?:should(?:n'?t)?|need to|have to)\b"
)
_PREFERENCE = re.compile(r"(?i)\b(?:should|prefer|use|keep|instead|rather)\b")
_FIRM_PREFERENCE = re.compile(r"(?i), not\b|, no\b|\binstead of\b|\brather than\b")
_DECISION = re.compile(
    r"(?i)\b(?:decided|decide to|decision|instead of|rather than|because|root cause|"
    r"the (?:issue|problem|bug|fix) (?:is|was)|going with|opted|chose|switch(?:ed|ing)? to|"
    r"the approach)\b"
)
_INTENT = re.compile(r"(?i)^(?:I'll|I will|Let's|We'll|We will|I'm going to|I am going to)\b")
_LOOK_INTENT = re.compile(
    r"(?i)^(?:I'll|I will|Let's|Let me|We'll|We will|I'm going to|I am going to)\s+"
    r"(?:now\s+|first\s+|also\s+|quickly\s+|just\s+)?(?:read|check|look|see|examine|inspect|"
    r"view|search|find|explore|start|run|verify|try|open|investigate|review|analy[sz]e|"
    r"understand|get|take|fix|help|create a summary|summarize)\b"
)
_RATIONALE = re.compile(r"\s(?:because|since|so that|as it|to avoid|which means)\s")
_PLAN_INTRO = re.compile(r"(?i)\b(?:next|remaining|todo|to do|still need|plan|will)\b.*:$")
_PLAN_SENTENCE = re.compile(
    r"(?i)^(?:next|then|after that|finally)\b|\b(?:still need to|next step|remaining work|"
    r"left to do|todo)\b"
)
_PATH = re.compile(
    r"(?<![\w/.:@-])(?:~/|\.{1,2}/|/)?(?:[\w@+-][\w.@+-]*/)+[\w.@+-]*\w\.[A-Za-z][A-Za-z0-9]{0,7}\b"
    r"|`([\w.@+-]+\.[A-Za-z][A-Za-z0-9]{0,7})`"
)
_FOCUS_WORD = re.compile(r"[a-z0-9_./-]{4,}")
_STOPWORDS: Final = _words(
    "the and for with that this from into about keep focus more less only also please "
    "should must what when where which their there them they have been were will would "
    "could make sure summary summarize context details important especially"
)

_WAITING: Final = "Waiting for the user's answer to the pending question"
_GENERATED_STEPS: Final = (
    "Wait for the user's answer",
    "Respond to the latest user request",
    "Check the result of the last action",
    "Check whether the latest request",
    "Fix the failure of `",
    "Re-read `",
)
_GOAL_CHARS: Final = 400
_REQUEST_CHARS: Final = 240
_SENTENCE_CHARS: Final = 240
_COMMAND_CHARS: Final = 160
_ERROR_CHARS: Final = 240
_STATE_CHARS: Final = 400
_USER_SCAN_CHARS: Final = 4000
_PATHS_PER_LINE: Final = 10
_FILE_TOOLS: Final = {"read": "read", "write": "write", "edit": "edit"}


@dataclass(frozen=True)
class _Part:
    role: str
    text: str


@dataclass(frozen=True)
class _ToolCall:
    name: str
    args: dict[str, object]

    def describe(self) -> str:
        target = _call_path(self) or _call_command(self)
        return f"{self.name} `{_clip(target, _COMMAND_CHARS)}`" if target else self.name


@dataclass
class _Command:
    """One distinct shell command and the outcome of its latest run."""

    text: str
    runs: int = 0
    failures: int = 0
    status: str = "unknown"
    """``ok``, ``failed``, ``cancelled``, ``unknown`` (no result, or the exit line was cut), or
    ``superseded`` (read back from a summary: failed, then a later run of its family)."""
    exit_code: int | None = None
    error: str | None = None
    seq: int = 0
    """When the latest run finished, counted over all commands; orders fixes after failures."""

    def finish(self, status: str, exit_code: int | None, error: str | None) -> None:
        if status == "failed":
            self.failures += 1
        self.status, self.exit_code, self.error = status, exit_code, error

    def status_note(self) -> str:
        if self.status in ("failed", "superseded"):
            return f"exit {self.exit_code}" if self.exit_code is not None else "errors in output"
        if self.status == "ok":
            return f"exit {self.exit_code if self.exit_code is not None else 0}"
        return "cancelled" if self.status == "cancelled" else "exit status not shown"


@dataclass
class _FileChange:
    ops: dict[str, int] = field(default_factory=dict)
    failures: int = 0
    failed_last: bool = False
    error: str | None = None


@dataclass
class _Digest:
    """Facts in the order they happened; lists hold one-line texts without list markers."""

    goal: str = ""
    requests: list[str] = field(default_factory=list)
    constraints: list[str] = field(default_factory=list)
    preferences: list[str] = field(default_factory=list)
    reads: dict[str, None] = field(default_factory=dict)
    edits: dict[str, _FileChange] = field(default_factory=dict)
    commands: dict[str, _Command] = field(default_factory=dict)
    tools: dict[str, int] = field(default_factory=dict)
    inspections: dict[str, int] = field(default_factory=dict)
    """Read-only shell commands (grep, ls, git status ...) counted by program."""
    errors: list[str] = field(default_factory=list)
    decisions: list[str] = field(default_factory=list)
    done_notes: list[str] = field(default_factory=list)
    in_progress: list[str] = field(default_factory=list)
    blocked_notes: list[str] = field(default_factory=list)
    next_steps: list[str] = field(default_factory=list)
    critical: list[str] = field(default_factory=list)
    focus_notes: list[str] = field(default_factory=list)
    mentioned: dict[str, None] = field(default_factory=dict)
    extra_context: list[str] = field(default_factory=list)
    active: bool = False
    """Whether a conversation with at least one part produced this digest."""
    focus: str | None = None
    pending_question: str | None = None
    last_state: str | None = None
    last_action: str | None = None
    last_output: str | None = None


def _digest_conversation(text: str, *, focus: str | None) -> _Digest:
    reader = _ConversationReader(focus)
    for part in _split_parts(text):
        reader.feed(part)
    return reader.finish()


def _split_parts(conversation: str) -> list[_Part]:
    parts: list[_Part] = []
    for chunk in _PART_BOUNDARY.split(conversation):
        head = _PART_HEAD.match(chunk)
        if head:
            parts.append(_Part(_ROLE_KEYS[head.group(1)], chunk[head.end() :]))
        elif chunk.strip():
            # Text before the first marker: not pi's format, read it as the user's words.
            parts.append(_Part("user", chunk))
    return parts


def _parse_tool_calls(text: str) -> list[_ToolCall]:
    """``name(k=JSON, k2=JSON); name2()`` as rendered by §7.1; stops at the first oddity."""
    calls: list[_ToolCall] = []
    pos = 0
    while True:
        name = _CALL_NAME.match(text, pos)
        if name is None:
            return calls
        pos = name.end()
        args: dict[str, object] = {}
        while pos < len(text) and text[pos] != ")":
            key = _CALL_KEY.match(text, pos)
            if key is None:
                calls.append(_ToolCall(name.group(1), args))
                return calls
            try:
                args[key.group(1)], pos = _JSON.raw_decode(text, key.end())
            except json.JSONDecodeError:
                calls.append(_ToolCall(name.group(1), args))
                return calls
            if text.startswith(", ", pos):
                pos += 2
        calls.append(_ToolCall(name.group(1), args))
        pos += 1
        if not text.startswith("; ", pos):
            return calls
        pos += 2


def _call_path(call: _ToolCall) -> str:
    for key in ("path", "file_path", "filePath"):
        value = call.args.get(key)
        if isinstance(value, str) and value:
            return value
    return ""


def _call_command(call: _ToolCall) -> str:
    for key in ("command", "cmd"):
        value = call.args.get(key)
        if isinstance(value, str) and value.strip():
            return value
    return ""


class _ConversationReader:
    """Walks the parts of one serialized conversation and fills a :class:`_Digest`."""

    def __init__(self, focus: str | None) -> None:
        self.digest = _Digest(focus=focus)
        self.focus_words = _focus_words(focus)
        self.pending: list[tuple[_ToolCall, str]] = []
        self.last_calls: list[_ToolCall] = []
        self.last_role = ""
        self.last_text = ""
        self.latest_request = ""
        self.question_open = False
        self.embedded: list[str] = []
        self.seq = 0

    def feed(self, part: _Part) -> None:
        self.digest.active = True
        match part.role:
            case "user":
                self._user(part.text.strip())
            case "assistant":
                self._assistant(part.text.strip())
            case "calls":
                self._calls(part.text)
            case "result":
                self._result(part.text)
            case _:
                pass  # thinking: the visible text and the tool calls carry what matters

    def _user(self, text: str) -> None:
        if not text:
            return
        bash = _BASH_EXECUTION.match(text)
        if bash:
            self._user_bash(bash.group("cmd"), text[bash.end() :])
            return
        embedded = _EMBEDDED_SUMMARY.match(text)
        if embedded and "summar" in embedded.group("intro").lower():
            self.embedded.append(embedded.group("body"))
            return
        if text.startswith(("<system-reminder>", "<file ")) or _SLASH_COMMAND.fullmatch(text):
            return
        d = self.digest
        request = _one_line(text)
        if not d.goal:
            d.goal = _clip(request, _GOAL_CHARS)
        else:
            _add(d.requests, _clip(request, _REQUEST_CHARS))
        self.latest_request = request
        self.last_role = "user"
        self.question_open = False
        scanned = text[:_USER_SCAN_CHARS]
        for sentence in _sentences(scanned):
            line = _clip(sentence, _SENTENCE_CHARS)
            if _CONSTRAINT.search(sentence):
                _add(d.constraints, line)
            elif _PREFERENCE.search(sentence):
                firm = _FIRM_PREFERENCE.search(sentence) is not None
                _add(d.constraints if firm else d.preferences, line)
        for error in _error_lines(_FENCE.sub("", scanned), strict=True):
            _add(d.errors, error)
        self._notice(scanned)

    def _user_bash(self, command: str, output: str) -> None:
        # "Ran `cmd`" is the user's own "!cmd" (a bashExecution message, §3.2).
        self._start_command(command)
        self._finish_command(command, output)

    def _start_command(self, command: str) -> None:
        inspection = _inspection_name(command)
        if inspection:
            inspections = self.digest.inspections
            inspections[inspection] = inspections.get(inspection, 0) + 1
        else:
            self._command(command).runs += 1

    def _finish_command(self, command: str, output: str) -> None:
        status, exit_code, error = _bash_outcome(command, output)
        if error:
            _add(self.digest.errors, error)
        if _inspection_name(command):
            return
        self.seq += 1
        record = self._command(command)
        record.finish(status, exit_code, error)
        record.seq = self.seq

    def _assistant(self, text: str) -> None:
        if not text:
            return
        self.last_text = text
        self.last_role = "assistant"
        self.question_open = _pending_question(text) is not None
        for sentence in _sentences(text):
            decision = _decision(sentence)
            if decision:
                _add(self.digest.decisions, decision)
        self._notice(text)

    def _calls(self, text: str) -> None:
        calls = _parse_tool_calls(text)
        if not calls:
            return
        d = self.digest
        self.pending = []
        self.last_calls = calls
        self.last_role = "calls"
        self.question_open = False
        for call in calls:
            kind = _FILE_TOOLS.get(call.name, "")
            path = _call_path(call)
            command = _call_command(call) if call.name == "bash" else ""
            if kind == "read" and path:
                d.reads.setdefault(path, None)
            elif kind in ("write", "edit") and path:
                change = d.edits.setdefault(path, _FileChange())
                change.ops[kind] = change.ops.get(kind, 0) + 1
            elif command:
                self._start_command(command)
                kind = "bash"
            else:
                d.tools[call.name] = d.tools.get(call.name, 0) + 1
                kind = "other"
            self.pending.append((call, kind))

    def _result(self, text: str) -> None:
        self.last_role = "result"
        self.question_open = False
        self.digest.last_output = text
        if not self.pending:
            return
        call, kind = self.pending.pop(0)
        first_line = next((line.strip() for line in text.splitlines() if line.strip()), "")
        if kind == "bash":
            self._finish_command(_call_command(call), text)
            return
        failed = bool(_ERROR_LINE.search(first_line)) and not first_line.startswith("Successfully")
        if kind == "read":
            # A file's content may well contain "Error"; only a short answer is a failure.
            failed = failed and len(text) < 500
        if kind in ("write", "edit"):
            change = self.digest.edits[_call_path(call)]
            change.failed_last = failed
            if failed:
                change.failures += 1
                change.error = _clip(first_line, _ERROR_CHARS)
        if failed:
            _add(self.digest.errors, _clip(first_line, _ERROR_CHARS))

    def _command(self, command: str) -> _Command:
        key = _command_text(command)
        return self.digest.commands.setdefault(key, _Command(key))

    def _notice(self, text: str) -> None:
        d = self.digest
        for match in _PATH.finditer(_FENCE.sub("", text)):
            d.mentioned.setdefault(match.group(1) or match.group(0), None)
        if self.focus_words:
            for sentence in _sentences(text):
                if _mentions(sentence, self.focus_words):
                    _add(d.focus_notes, _clip(sentence, _SENTENCE_CHARS))

    def finish(self) -> _Digest:
        d = self.digest
        latest = _clip(self.latest_request, _REQUEST_CHARS)
        if self.question_open:
            d.pending_question = _pending_question(self.last_text)
        if self.last_text:
            d.last_state = _clip(_one_line(self.last_text), _STATE_CHARS)
        if self.last_role != "result":
            d.last_output = None
        elif d.last_output is not None:
            d.last_output = _clip(_one_line(d.last_output), 300)
        # Whether the latest request is finished cannot be read from the text, so it stays in
        # progress until the user moves on to another one (see _merge).
        if latest:
            d.in_progress.append(latest)
        if d.pending_question:
            d.in_progress.append(_WAITING)
            d.next_steps.append(
                "Wait for the user's answer to the pending question under Critical Context."
            )
        elif self.last_role == "user" and latest:
            d.next_steps.append(f"Respond to the latest user request: {latest}")
        elif self.last_role in ("calls", "result"):
            d.last_action = "; ".join(call.describe() for call in self.last_calls[:3])
            d.next_steps.append("Check the result of the last action, then continue the work.")
        elif self.last_role == "assistant":
            for step in _planned_steps(self.last_text):
                _add(d.next_steps, step)
            if not d.next_steps and latest:
                d.next_steps.append(
                    "Check whether the latest request is complete and finish it if not."
                )
        d.focus_notes = d.focus_notes[-12:]
        merged = _Digest()
        for body in self.embedded:
            merged = _merge(merged, _digest_summary(body))
        return _merge(merged, d) if self.embedded else d


def _bash_outcome(command: str, text: str) -> tuple[str, int | None, str | None]:
    """(status, exit code, first error line) of one run, read from its output.

    pi appends "Command exited with code N" only for a non-zero code, so no such line means
    success, unless the output was cut before its end (then only clear errors count).
    """
    codes = _EXIT_CODE.findall(text)
    if codes:
        exit_code: int | None = int(codes[-1])
        status = "ok" if exit_code == 0 else "failed"
    elif _CANCELLED.search(text):
        return "cancelled", None, None
    elif _TRUNCATED.search(text):
        exit_code, status = None, "unknown"
    else:
        return "ok", None, None
    strict = _error_lines(text, strict=True)
    if status == "unknown":
        return ("failed", None, strict[0]) if strict else ("unknown", None, None)
    if status == "ok":
        return "ok", exit_code, None
    if exit_code == 1 and not strict and _program(command)[0] in _NO_MATCH_PROGRAMS:
        return "ok", exit_code, None  # grep and friends say "no match" with exit code 1
    errors = strict or _error_lines(text) or _last_lines(text)
    return "failed", exit_code, errors[0] if errors else None


def _error_lines(text: str, limit: int = 3, *, strict: bool = False) -> list[str]:
    pattern = _STRICT_ERROR if strict else _ERROR_LINE
    found: list[str] = []
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or _EXIT_CODE.search(stripped) or _TRUNCATED.search(stripped):
            continue
        if pattern.search(stripped):
            _add(found, _clip(stripped, _ERROR_CHARS))
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


def _inspection_name(command: str) -> str | None:
    """A name for a read-only command (grep, ls, git status ...), or None for anything else."""
    if re.search(r"(?<![0-9&>])>{1,2}(?![&>])", command):
        return None  # writes a file
    program, argument = _program(command)
    if program == "git":
        return f"git {argument}" if argument in _GIT_INSPECTION else None
    if program == "sed":
        return "sed -n" if argument == "-n" else None
    return program if program in _INSPECTION_PROGRAMS else None


def _family(command: str) -> str:
    """The first words of a command, so a later ``npm run check | tail`` fixes ``npm run check``."""
    rest = command.strip()
    while cd := _CD_PREFIX.match(rest):
        rest = rest[cd.end() :]
    head = re.split(r"\s*(?:\|\|?|&&|;|2>&1|>)\s*", rest, maxsplit=1)[0]
    return " ".join(head.split()[:3])


def _last_lines(text: str) -> list[str]:
    for line in reversed(text.splitlines()):
        stripped = line.strip()
        if stripped and not (_EXIT_CODE.search(stripped) or _TRUNCATED.search(stripped)):
            if stripped in ("(no output)", "```"):
                continue
            return [_clip(stripped, _ERROR_CHARS)]
    return []


def _pending_question(text: str) -> str | None:
    """The end of an assistant message that asks the user something, verbatim."""
    paragraphs = [p for p in re.split(r"\n[ \t]*\n", text.strip()) if p.strip()]
    for index in range(len(paragraphs) - 1, max(len(paragraphs) - 4, -1), -1):
        prose = _FENCE.sub("", paragraphs[index])
        if re.search(r"\?(?:[\s)\"'*_`]|$)", prose):
            tail = "\n\n".join(paragraphs[index:])
            if len(tail) <= 1200:
                return tail
            asked = [s for s in _sentences(paragraphs[index]) if s.rstrip("*_`\"') ").endswith("?")]
            return " ".join(asked) or paragraphs[index]
    return None


def _planned_steps(text: str, limit: int = 5) -> list[str]:
    steps: list[str] = []
    in_plan = False
    for line in _FENCE.sub("\n", text).splitlines():
        stripped = line.strip()
        if not stripped:
            continue
        item = _LIST_MARKER.match(stripped)
        if item and in_plan:
            _add(steps, _clip(stripped[item.end() :], _SENTENCE_CHARS))
            continue
        in_plan = bool(_PLAN_INTRO.search(stripped)) and not item
        if not in_plan:
            for sentence in _sentences(stripped):
                if _PLAN_SENTENCE.search(sentence):
                    _add(steps, _clip(sentence, _SENTENCE_CHARS))
    return steps[:limit]


def _decision(sentence: str) -> str | None:
    sentence = sentence.replace("**", "").strip()
    if len(sentence) < 25 or sentence.endswith((":", "?")):
        return None
    strong = _DECISION.search(sentence) is not None
    if not strong and not (_INTENT.match(sentence) and not _LOOK_INTENT.match(sentence)):
        return None
    text = _clip(sentence, _SENTENCE_CHARS)
    why = _RATIONALE.search(text)
    if why and why.start() >= 12:
        head = text[: why.start()].rstrip(" ,;:")
        return f"**{head}**: {text[why.start() + 1 :]}"
    return f"**{text}**"


def _sentences(text: str) -> list[str]:
    found: list[str] = []
    for raw in _SENTENCE_SPLIT.split(_FENCE.sub("\n", text)):
        sentence = _LIST_MARKER.sub("", raw.strip()).strip()
        if len(sentence) >= 8:
            found.append(sentence)
    return found


def _focus_words(focus: str | None) -> tuple[str, ...]:
    if not focus:
        return ()
    words: dict[str, None] = {}
    for word in _FOCUS_WORD.findall(focus.lower()):
        if word not in _STOPWORDS:
            words.setdefault(word, None)
    return tuple(words)


def _mentions(text: str, words: tuple[str, ...]) -> bool:
    lowered = text.lower()
    return any(word in lowered for word in words)


def _command_text(command: str) -> str:
    lines = [line for line in command.strip().splitlines() if line.strip()]
    if not lines:
        return ""
    first = lines[0].strip()
    if len(lines) > 1:
        first += " …"
    return _clip(first, _COMMAND_CHARS)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _clip(text: str, limit: int) -> str:
    """``text`` cut at a word boundary before ``limit`` with a ``[…]`` marker, never inside a
    backtick span (which is where paths and commands are)."""
    if len(text) <= limit:
        return text
    cut = text.rfind(" ", 0, limit)
    if cut < limit // 2:
        cut = limit
    if text.count("`", 0, cut) % 2 == 1:
        opening = text.rfind("`", 0, cut)
        if opening > 0:
            cut = opening
    return text[:cut].rstrip() + " […]"


def _add(items: list[str], item: str) -> None:
    if item and item not in items:
        items.append(item)


def _union(*lists: Iterable[str]) -> list[str]:
    merged: list[str] = []
    for items in lists:
        for item in items:
            _add(merged, item)
    return merged


# --- reading an earlier summary back -----------------------------------------------------------

_TAG_BLOCK = re.compile(r"<(read-files|modified-files)>\n?(.*?)\n?</\1>\s*", re.S)
_OMITTED = re.compile(r"^(?:…|\.\.\.) \(\d+ more files? omitted\)$")
_HEADING = re.compile(r"^(#{2,3})\s+(.+?)\s*:?\s*$")
_TURN_CONTEXT = re.compile(r"\n-{3,}\n+\*\*Turn Context \(split turn\):\*\*\n")
_ITEM_MARKER = re.compile(r"^(?:[-*•]|\d+[.)])\s+(?:\[[ xX]\]\s+)?")
_SECTION_KEYS: Final = {
    "goal": "goal",
    "goals": "goal",
    "original request": "request",
    "constraints & preferences": "constraints",
    "constraints and preferences": "constraints",
    "constraints": "constraints",
    "done": "done",
    "completed": "done",
    "early progress": "done",
    "in progress": "in_progress",
    "pending": "in_progress",
    "blocked": "blocked",
    "key decisions": "decisions",
    "decisions": "decisions",
    "next steps": "next",
    "critical context": "critical",
    "context for suffix": "suffix",
    "progress": "progress",
}
_REQUESTS_LABEL: Final = "Later requests from the user:"
_QUESTION_LABEL: Final = "**Pending question to the user** (verbatim):"
_STATE_LABEL: Final = "**Last assistant state**:"
_CONTEXT_LABEL: Final = "**Context**:"
_ACTION_LABEL: Final = "**Last action before the cut**:"
_OUTPUT_LABEL: Final = "**Latest tool output** (excerpt):"
_MODIFIED_LINE = re.compile(r"^Modified `(?P<path>.+)`(?: \((?P<ops>[^()]*)\))?$")
_READ_LINE = re.compile(r"^Read (?P<paths>`.*)$")
_RAN_LINE = re.compile(r"^Ran `(?P<cmd>.+)`(?: ×(?P<runs>\d+))? \((?P<note>[^()]*)\)$")
_TOOLS_LINE = re.compile(r"^Other tools used: (?P<tools>.+)$")
_INSPECTIONS_LINE = re.compile(r"^Ran \d+ read-only commands? \((?P<counts>.+)\)$")
_FAILED_LINE = re.compile(r"^`(?P<cmd>.+)` failed \((?P<note>[^()]*)\)(?:: (?P<error>.*))?$")
_EDIT_FAILED_LINE = re.compile(r"^Editing `(?P<path>.+)` failed(?:: (?P<error>.*))?$")
_BACKTICKED = re.compile(r"`([^`]+)`")
_EMPTY_SUMMARIES: Final = ("No prior history.", "No content to summarize", "No summary generated")


def _digest_summary(text: str) -> _Digest:
    """Read an earlier summary: our own lines become structure again, other lines stay verbatim."""
    d = _Digest()
    body = _TAG_BLOCK.sub(lambda match: _collect_tag(d, match), text)
    body = _TURN_CONTEXT.sub("\n", body)
    sections = _split_sections(body)
    for key, lines in sections:
        for item in _group_items(lines):
            _read_item(d, key, item)
    return d


def _collect_tag(d: _Digest, match: re.Match[str]) -> str:
    # The fork writes "\n" between names as two characters (§8), so split on both.
    for raw in re.split(r"\n|\\n", match.group(2)):
        path = raw.strip()
        if not path or _OMITTED.match(path):
            continue
        if match.group(1) == "read-files":
            d.reads.setdefault(path, None)
        else:
            d.edits.setdefault(path, _FileChange())
    return ""


def _split_sections(body: str) -> list[tuple[str, list[str]]]:
    sections: list[tuple[str, list[str]]] = [("preamble", [])]
    for line in body.splitlines():
        heading = _HEADING.match(line)
        if heading:
            title = heading.group(2).strip("*").strip().lower()
            sections.append((_SECTION_KEYS.get(title, "critical"), []))
        else:
            sections[-1][1].append(line)
    preamble = [line for line in sections[0][1] if line.strip()]
    if len(sections) == 1:
        whole = "\n".join(preamble).strip()
        if whole and whole not in _EMPTY_SUMMARIES:
            return [("critical", [f"Earlier summary: {whole}"])]
        return []
    # Lines before the first heading are a preamble such as the branch one; keep anything else.
    kept = [
        line
        for line in preamble
        if not line.rstrip().endswith(":") and "branch" not in line.lower()
    ]
    return [("critical", kept), *sections[1:]]


def _group_items(lines: list[str]) -> list[str]:
    items: list[str] = []
    for line in lines:
        if not line.strip() or line.strip().lower() in ("(none)", "none", "- (none)"):
            continue
        if items and line[:1] in (" ", "\t", ">"):
            items[-1] += "\n" + line
        else:
            items.append(line.rstrip())
    return items


def _read_item(d: _Digest, key: str, item: str) -> None:
    text = _ITEM_MARKER.sub("", item, count=1)
    if text.startswith(("**Focus**", "**Related to focus**")):
        return  # they belong to the request that asked for a focus
    if text.startswith(_CONTEXT_LABEL):
        _add(d.extra_context, text[len(_CONTEXT_LABEL) :].strip())
        return
    if text.startswith(_QUESTION_LABEL):
        question = text[len(_QUESTION_LABEL) :].lstrip(" \n")
        lines = [re.sub(r"^\s*> ?", "", line) for line in question.splitlines()]
        d.pending_question = "\n".join(lines) if "\n" in question else question
        return
    for label in (_STATE_LABEL, _ACTION_LABEL, _OUTPUT_LABEL):
        if text.startswith(label):
            value = text[len(label) :].strip()
            if label == _STATE_LABEL:
                d.last_state = value
            elif label == _ACTION_LABEL:
                d.last_action = value
            else:
                d.last_output = value
            return
    if text.startswith("**Error**: "):
        _add(d.errors, text.split(": ", 1)[1])
        return
    if text.startswith("**Paths mentioned**: "):
        for path in _BACKTICKED.findall(text):
            d.mentioned.setdefault(path, None)
        return
    match key:
        case "goal":
            _read_goal_item(d, item, text)
        case "request":
            _add(d.requests, _clip(_one_line(text), _REQUEST_CHARS))
        case "constraints":
            _add(d.constraints, text)
        case "done":
            _read_done_item(d, text)
        case "in_progress":
            _add(d.in_progress, text)
        case "blocked":
            _read_blocked_item(d, text)
        case "decisions":
            _add(d.decisions, text)
        case "next":
            _add(d.next_steps, text)
        case "suffix":
            _read_suffix_item(d, item, text)
        case _:
            _add(d.critical, text)


def _read_suffix_item(d: _Digest, item: str, text: str) -> None:
    # Our turn-prefix summary puts several kinds of lines under "Context for Suffix".
    if item.startswith("- [ ] "):
        _add(d.in_progress, text)
    elif text.startswith(_GENERATED_STEPS):
        _add(d.next_steps, text)
    elif _CONSTRAINT.search(text) or _FIRM_PREFERENCE.search(text):
        _add(d.constraints, text)
    else:
        _add(d.critical, text)


def _read_goal_item(d: _Digest, item: str, text: str) -> None:
    if item == _REQUESTS_LABEL or d.requests or _ITEM_MARKER.match(item):
        if item != _REQUESTS_LABEL:
            _add(d.requests, text)
        return
    d.goal = f"{d.goal}\n{item}" if d.goal else item


def _read_done_item(d: _Digest, text: str) -> None:
    if modified := _MODIFIED_LINE.match(text):
        change = d.edits.setdefault(modified.group("path"), _FileChange())
        for op in (modified.group("ops") or "").split(";")[0].split(", "):
            name, _, count = op.strip().partition(" ×")
            if name:
                change.ops[name] = change.ops.get(name, 0) + (int(count) if count.isdigit() else 1)
        if failed := re.search(r"; (\d+) failed", modified.group("ops") or ""):
            change.failures += int(failed.group(1))
    elif read := _READ_LINE.match(text):
        for path in _BACKTICKED.findall(read.group("paths")):
            d.reads.setdefault(path, None)
    elif ran := _RAN_LINE.match(text):
        command = d.commands.setdefault(ran.group("cmd"), _Command(ran.group("cmd")))
        command.runs += int(ran.group("runs") or 1)
        note = ran.group("note")
        failures = re.search(r"(\d+) earlier failures?", note)
        command.failures += int(failures.group(1)) if failures else 0
        code = re.match(r"exit (-?\d+)", note)
        command.exit_code = int(code.group(1)) if code else None
        if "superseded" in note:
            command.status = "superseded"
        elif note.startswith("cancelled"):
            command.status = "cancelled"
        elif note.startswith("exit status not shown"):
            command.status = "unknown"
        else:
            command.status = "ok"
    elif tools := _TOOLS_LINE.match(text):
        _read_counts(d.tools, tools.group("tools"))
    elif inspections := _INSPECTIONS_LINE.match(text):
        _read_counts(d.inspections, inspections.group("counts"))
    elif _FAILED_LINE.match(text) or _EDIT_FAILED_LINE.match(text):
        _read_blocked_item(d, text)  # a turn-prefix summary lists failures under Early Progress
    elif text.startswith("**"):
        _add(d.decisions, text)
    else:
        _add(d.done_notes, text)


def _read_counts(counts: dict[str, int], text: str) -> None:
    for entry in text.split(", "):
        name, _, count = entry.partition(" ×")
        counts[name] = counts.get(name, 0) + (int(count) if count.isdigit() else 1)


def _read_blocked_item(d: _Digest, text: str) -> None:
    if failed := _FAILED_LINE.match(text):
        command = d.commands.setdefault(failed.group("cmd"), _Command(failed.group("cmd")))
        command.runs += 1
        code = re.fullmatch(r"exit (-?\d+)", failed.group("note"))
        command.finish("failed", int(code.group(1)) if code else None, failed.group("error"))
    elif edit := _EDIT_FAILED_LINE.match(text):
        # The Done line already counted the failure; this line only says it is unresolved.
        change = d.edits.setdefault(edit.group("path"), _FileChange())
        change.failed_last, change.error = True, edit.group("error")
    else:
        _add(d.blocked_notes, text)


def _merge(old: _Digest, new: _Digest) -> _Digest:
    """``old`` (an earlier summary) updated with ``new``: facts are united, older first, and
    the newest state wins for work in progress, next steps and the pending question."""
    user_moved_on = bool(new.goal)
    merged = _Digest(
        goal=old.goal or new.goal,
        requests=_union(
            old.requests, [new.goal] if old.goal and new.goal != old.goal else [], new.requests
        ),
        constraints=_union(old.constraints, new.constraints),
        preferences=_union(old.preferences, new.preferences),
        reads={**old.reads, **new.reads},
        errors=_union(old.errors, new.errors),
        decisions=_union(old.decisions, new.decisions),
        blocked_notes=_union(old.blocked_notes, new.blocked_notes),
        next_steps=new.next_steps if new.active else old.next_steps,
        critical=_union(old.critical, new.critical),
        focus_notes=new.focus_notes,
        mentioned={**old.mentioned, **new.mentioned},
        extra_context=_union(old.extra_context, new.extra_context),
        focus=new.focus or old.focus,
        # The newest state wins; an empty update keeps the old one.
        pending_question=new.pending_question if new.active else old.pending_question,
        last_state=new.last_state or old.last_state,
        last_action=new.last_action if new.active else old.last_action,
        last_output=new.last_output if new.active else old.last_output,
        active=old.active or new.active,
    )
    finished = [item for item in old.in_progress if not item.startswith(_WAITING)]
    merged.done_notes = _union(old.done_notes, finished if user_moved_on else [], new.done_notes)
    if user_moved_on:
        merged.in_progress = new.in_progress
    elif new.active:
        merged.in_progress = _union(finished, new.in_progress)
    else:
        merged.in_progress = old.in_progress
    for path, change in [*old.edits.items(), *new.edits.items()]:
        target = merged.edits.setdefault(path, _FileChange())
        for op, count in change.ops.items():
            target.ops[op] = target.ops.get(op, 0) + count
        target.failures += change.failures
        target.failed_last, target.error = change.failed_last, change.error
    offset = max((command.seq for command in old.commands.values()), default=0)
    for key, command in [*old.commands.items(), *new.commands.items()]:
        target_command = merged.commands.setdefault(key, _Command(key))
        target_command.runs += command.runs
        target_command.failures += command.failures
        target_command.status = command.status
        target_command.exit_code, target_command.error = command.exit_code, command.error
        is_new = key in new.commands and command is new.commands[key]
        target_command.seq = command.seq + (offset if is_new else 0)
    for counts, merged_counts in ((old.tools, merged.tools), (new.tools, merged.tools)):
        for name, count in counts.items():
            merged_counts[name] = merged_counts.get(name, 0) + count
    for name, count in [*old.inspections.items(), *new.inspections.items()]:
        merged.inspections[name] = merged.inspections.get(name, 0) + count
    return merged


# --- rendering within the budget ---------------------------------------------------------------


@dataclass(frozen=True)
class _Item:
    text: str
    priority: int
    """Higher is kept longer; items with ``must`` are never dropped."""
    order: int
    """Position in history: within a priority, the oldest item is dropped first."""
    must: bool = False
    clip_to: int | None = None
    """Length a ``must`` item may be shortened to when even the essentials exceed the budget."""
    plain: bool = False
    """Rendered without a list marker (the goal text)."""
    label: str | None = None
    """A line written once before the first item of a run with this label."""


_Layout = tuple[tuple[str, str, tuple[str, ...]], ...]
"""(heading, list style, logical keys); a heading with no keys introduces the next one."""

_CRITICAL_KEYS: Final = (
    "focus",
    "question",
    "context",
    "state",
    "errors",
    "notes",
    "related",
    "paths",
    "output",
)
_FULL_LAYOUT: Final[_Layout] = (
    ("## Goal", "-", ("goal",)),
    ("## Constraints & Preferences", "-", ("constraints",)),
    ("## Progress", "", ()),
    ("### Done", "-", ("done",)),
    ("### In Progress", "-", ("in_progress",)),
    ("### Blocked", "-", ("blocked",)),
    ("## Key Decisions", "-", ("decisions",)),
    ("## Next Steps", "1.", ("next",)),
    ("## Critical Context", "-", _CRITICAL_KEYS),
)
_BRANCH_LAYOUT: Final[_Layout] = (
    ("## Goal", "-", ("goal",)),
    ("## Constraints & Preferences", "-", ("constraints", "focus", "context")),
    ("## Progress", "", ()),
    ("### Done", "-", ("done",)),
    ("### In Progress", "-", ("in_progress", "state")),
    ("### Blocked", "-", ("blocked", "errors")),
    ("## Key Decisions", "-", ("decisions",)),
    ("## Next Steps", "1.", ("next", "question")),
)
_TURN_PREFIX_LAYOUT: Final[_Layout] = (
    ("## Original Request", "-", ("goal",)),
    ("## Early Progress", "-", ("done", "blocked", "decisions")),
    (
        "## Context for Suffix",
        "-",
        (
            "constraints",
            "focus",
            "context",
            "in_progress",
            "question",
            "state",
            "errors",
            "notes",
            "next",
            "related",
            "paths",
            "output",
        ),
    ),
)


class _ItemBuilder:
    def __init__(self, focus_words: tuple[str, ...]) -> None:
        self.items: dict[str, list[_Item]] = {}
        self.focus_words = focus_words
        self.count = 0

    def add(
        self,
        key: str,
        text: str,
        priority: int,
        *,
        must: bool = False,
        clip_to: int | None = None,
        plain: bool = False,
        label: str | None = None,
    ) -> None:
        self.count += 1
        if not must and self.focus_words and _mentions(text, self.focus_words):
            priority = min(priority + 25, 99)
        item = _Item(text, priority, self.count, must, clip_to, plain, label)
        self.items.setdefault(key, []).append(item)


def _render(d: _Digest, *, kind: SummaryKind, budget_tokens: int) -> str:
    layout = {"branch": _BRANCH_LAYOUT, "turn_prefix": _TURN_PREFIX_LAYOUT}.get(kind, _FULL_LAYOUT)
    items = _build_items(d)
    return _fit(layout, items, budget_tokens)


def _build_items(d: _Digest) -> dict[str, list[_Item]]:
    b = _ItemBuilder(_focus_words(d.focus))
    if d.goal:
        b.add("goal", d.goal, 100, must=True, clip_to=160, plain=True)
    for index, request in enumerate(d.requests):
        if index == len(d.requests) - 1:
            priority = 70
        elif len(request) < 16 or request in d.constraints:
            priority = 15  # "continue", "yes", "sleep" or a line already kept as a constraint
        else:
            priority = 30 + _recency(index, len(d.requests))
        b.add("goal", request, priority, label=_REQUESTS_LABEL)
    for constraint in d.constraints:
        b.add("constraints", constraint, 100, must=True, clip_to=160)
    for index, preference in enumerate(d.preferences):
        b.add("constraints", preference, 45 + _recency(index, len(d.preferences)))

    for note in d.done_notes:
        b.add("done", f"[x] {note}", 45)
    for path, change in d.edits.items():
        b.add("done", f"[x] Modified `{path}`{_ops_note(change)}", 100, must=True)
    read_only = [path for path in d.reads if path not in d.edits]
    for start in range(0, len(read_only), _PATHS_PER_LINE):
        chunk = read_only[start : start + _PATHS_PER_LINE]
        b.add("done", "[x] Read " + ", ".join(f"`{path}`" for path in chunk), 100, must=True)
    resolved = _resolved_failures(d.commands)
    by_recency = sorted(d.commands.values(), key=lambda command: command.seq)
    rank = {command.text: index for index, command in enumerate(by_recency)}
    for command in d.commands.values():
        runs = f" ×{command.runs}" if command.runs > 1 else ""
        bonus = _recency(rank[command.text], len(rank))
        if command.text in resolved or command.status == "superseded":
            note = f"{command.status_note()}; superseded by a later run"
            b.add("done", f"[x] Ran `{command.text}`{runs} ({note})", 30 + bonus)
        elif command.status != "failed":
            earlier = (
                f"; {_plural(command.failures, 'earlier failure')}" if command.failures else ""
            )
            note = f"{command.status_note()}{earlier}"
            line = f"[x] Ran `{command.text}`{runs} ({note})"
            b.add("done", line, (35 if earlier else 25) + bonus)
    if d.inspections:
        total = sum(d.inspections.values())
        counts = ", ".join(f"{name} ×{n}" if n > 1 else name for name, n in d.inspections.items())
        b.add("done", f"[x] Ran {_plural(total, 'read-only command')} ({counts})", 45)
    if d.tools:
        used = ", ".join(f"{name} ×{n}" if n > 1 else name for name, n in d.tools.items())
        b.add("done", f"[x] Other tools used: {used}", 15)

    for item in d.in_progress:
        b.add("in_progress", f"[ ] {item}", 80)
    if d.last_action:
        b.add("in_progress", f"[ ] {_ACTION_LABEL} {d.last_action}", 60)

    blocked_errors: list[str] = []
    for command in d.commands.values():
        if command.status == "failed" and command.text not in resolved:
            error = f": {command.error}" if command.error else ""
            blocked_errors.append(command.error or "")
            line = f"`{command.text}` failed ({command.status_note()}){error}"
            b.add("blocked", line, 100, must=True, clip_to=220)
    for path, change in d.edits.items():
        if change.failed_last:
            blocked_errors.append(change.error or "")
            error = f": {change.error}" if change.error else ""
            b.add("blocked", f"Editing `{path}` failed{error}", 100, must=True, clip_to=220)
    for note in d.blocked_notes:
        b.add("blocked", note, 60)

    for index, decision in enumerate(d.decisions):
        b.add("decisions", decision, 35 + _recency(index, len(d.decisions)))
    steps = list(d.next_steps)
    failing = [c for c in d.commands.values() if c.status == "failed" and c.text not in resolved]
    for command in sorted(failing, key=lambda c: c.seq)[-3:]:
        _add(steps, f"Fix the failure of `{command.text}` and run it again.")
    for path, change in d.edits.items():
        if change.failed_last:
            _add(steps, f"Re-read `{path}` and redo the edit that failed.")
    for index, step in enumerate(steps):
        b.add("next", step, 75 if index < 3 else 65)

    if d.focus:
        b.add("focus", f"**Focus** (requested for this summary): {d.focus}", 100, must=True)
    if d.pending_question:
        b.add("question", _question_text(d.pending_question), 100, must=True)
    for line in d.extra_context:
        b.add("context", f"{_CONTEXT_LABEL} {line}", 85)
    state = d.last_state or ""
    if d.pending_question and state.endswith(_one_line(d.pending_question)):
        state = state[: -len(_one_line(d.pending_question))].strip()
    if state:
        b.add("state", f"{_STATE_LABEL} {state}", 65)
    errors = [error for error in d.errors if error not in blocked_errors]
    for index, error in enumerate(errors):
        b.add("errors", f"**Error**: {error}", 35 + _recency(index, len(errors)))
    for note in d.critical:
        b.add("notes", note, 45)
    shown_prose = " ".join(
        [d.goal, *d.requests, *d.constraints, *d.preferences, d.pending_question or "", state]
        + [decision.replace("**: ", " ").replace("**", "") for decision in d.decisions]
    )
    for note in d.focus_notes:
        if note.removesuffix(" […]") not in shown_prose:
            b.add("related", f"**Related to focus**: {note}", 30)
    known = set(d.reads) | set(d.edits)
    mentioned = [path for path in d.mentioned if path not in known]
    for start in range(0, len(mentioned), _PATHS_PER_LINE):
        chunk = mentioned[start : start + _PATHS_PER_LINE]
        b.add("paths", "**Paths mentioned**: " + ", ".join(f"`{p}`" for p in chunk), 20)
    if d.last_output:
        b.add("output", f"{_OUTPUT_LABEL} {d.last_output}", 10)
    return b.items


def _recency(index: int, count: int) -> int:
    """Priority bonus for the newest entries of a list, so old detail is dropped first."""
    if index >= count - 5:
        return 20
    return 8 if index >= count - 15 else 0


def _resolved_failures(commands: dict[str, _Command]) -> set[str]:
    """Failed commands made obsolete by a later run of the same family (``npm run check``
    after ``cd x && npm run check | head``): that later run tells the current state."""
    latest: dict[str, int] = {}
    for command in commands.values():
        family = _family(command.text)
        latest[family] = max(latest.get(family, -1), command.seq)
    return {
        command.text
        for command in commands.values()
        if command.status == "failed" and latest[_family(command.text)] > command.seq
    }


def _ops_note(change: _FileChange) -> str:
    ops = ", ".join(f"{op} ×{n}" if n > 1 else op for op, n in change.ops.items())
    failed = f"; {change.failures} failed" if change.failures else ""
    return f" ({ops}{failed})" if ops or failed else ""


def _plural(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _question_text(question: str) -> str:
    if "\n" not in question:
        return f"{_QUESTION_LABEL} {question}"
    quoted = "\n".join(f"> {line}" if line else ">" for line in question.splitlines())
    return f"{_QUESTION_LABEL}\n{quoted}"


def _fit(layout: _Layout, items: dict[str, list[_Item]], budget_tokens: int) -> str:
    shown = [item for keys in layout for key in keys[2] for item in items.get(key, [])]
    dropped: set[int] = set()
    clipped: dict[int, str] = {}
    text = _render_layout(layout, items, dropped, clipped)
    candidates = sorted(
        (item for item in shown if not item.must), key=lambda item: (item.priority, item.order)
    )
    next_candidate = 0
    while _estimate_tokens(text) > budget_tokens and next_candidate < len(candidates):
        excess = (_estimate_tokens(text) - budget_tokens) * 4
        freed = 0
        while next_candidate < len(candidates) and freed < excess:
            dropped.add(candidates[next_candidate].order)
            freed += len(candidates[next_candidate].text) + 3
            next_candidate += 1
        text = _render_layout(layout, items, dropped, clipped)
    if _estimate_tokens(text) > budget_tokens:
        # Only essentials are left; shorten their prose (never a path) and accept the rest.
        for item in shown:
            if item.must and item.clip_to is not None and len(item.text) > item.clip_to:
                clipped[item.order] = _clip(item.text, item.clip_to)
        text = _render_layout(layout, items, dropped, clipped)
    return text


def _render_layout(
    layout: _Layout, items: dict[str, list[_Item]], dropped: set[int], clipped: dict[int, str]
) -> str:
    blocks: list[str] = []
    pending_heading = ""
    for heading, style, keys in layout:
        if not keys:
            pending_heading = heading + "\n"
            continue
        lines: list[str] = []
        label: str | None = None
        number = 0
        for key in keys:
            for item in items.get(key, []):
                if item.order in dropped:
                    continue
                if item.label and item.label != label:
                    lines.extend(["", item.label] if lines else [item.label])
                label = item.label
                text = clipped.get(item.order, item.text)
                if item.plain:
                    lines.append(text)
                    continue
                number += 1
                marker = f"{number}. " if style == "1." else "- "
                lines.append(marker + text.replace("\n", "\n" + " " * len(marker)))
        blocks.append(f"{pending_heading}{heading}\n" + ("\n".join(lines) or "(none)"))
        pending_heading = ""
    return "\n\n".join(blocks)
