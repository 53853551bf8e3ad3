"""Reading a serialized conversation (pi-behaviour.md §7.1) into a digest.

The parts are walked in order: the user's requests and constraints, the assistant's decisions
and last words, tool calls with their results (files read and changed, commands and their exit
codes, errors) and a question the user has not answered yet. Summaries embedded in the
conversation (from an earlier compaction) are read back and merged first.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from contextree.compaction.offline.answers import answers_question, offers_choice
from contextree.compaction.offline.code_writes import (
    CODE_ARGUMENTS,
    code_written_paths,
    interpreter_code,
)
from contextree.compaction.offline.commands import (
    ERROR_LINE,
    bash_outcome,
    command_text,
    error_lines,
    failure_line,
    inspection_name,
    result_line,
    written_paths,
)
from contextree.compaction.offline.condense import condensed
from contextree.compaction.offline.developer import SYSTEM_MARK
from contextree.compaction.offline.digest import (
    ERROR_CHARS,
    REQUEST_CHARS,
    RESPOND,
    SENTENCE_CHARS,
    WAITING,
    Command,
    Digest,
    FileChange,
)
from contextree.compaction.offline.lazy_pattern import LazyPattern
from contextree.compaction.offline.parts import (
    Conversation,
    Part,
    ToolCall,
    call_command,
    call_path,
    parse_tool_calls,
    parts_of,
)
from contextree.compaction.offline.preferences import FIRM_PREFERENCE, PREFERENCE_LINE
from contextree.compaction.offline.previous import digest_summary, merge_digest
from contextree.compaction.offline.prose import (
    DONE_WORDS,
    FILE_EXTENSIONS,
    PATH,
    PROSE_ERROR,
    RULE_START,
    STATUS,
    TODO_STATEMENT,
    decision_in,
    listed_rules,
    noted_fact,
    paths_in,
    pending_question_in,
    planned_steps,
    questions_in,
    reports_done,
    says_the_goal,
    states_fact,
    states_rule,
)
from contextree.compaction.offline.references import add_references, latest_references
from contextree.compaction.offline.specifics import has_specifics
from contextree.compaction.offline.text import (
    FENCE,
    OnceList,
    add_grouped,
    add_once,
    clip,
    first_text_line,
    focus_words_of,
    may_hold_any,
    mentions,
    one_line,
    similar,
    split_sentences,
)
from contextree.compaction.offline.tool_results import (
    READ_ONLY_TOOLS,
    call_note,
    saved_paths,
    tool_failed,
)
from contextree.compaction.offline.user_lines import USER_MARK, decides, user_todo
from contextree.compaction.offline.user_text import PASTED, prose_lines, typed_items
from contextree.compaction.offline.waiting_results import WaitingResults
from contextree.compaction.offline.written import (
    WRITTEN_COUNTED_CHARS,
    written_by,
    written_text,
)

_BASH_EXECUTION = LazyPattern(r"Ran `(?P<cmd>.*?)`\n", re.S)
_EMBEDDED_SUMMARY = LazyPattern(
    r"(?P<intro>[^<]{0,800}?)<summary>\n(?P<body>.*?)\n?</summary>\s*\Z", re.S
)
_SLASH_COMMAND = LazyPattern(r"/[\w:.-]+")
_GOAL_CHARS: Final = 600
_STATE_CHARS: Final = 400
_USER_SCAN_CHARS: Final = 4000
_FILE_TOOLS: Final = {"read": "read", "write": "write", "edit": "edit"}
_USER_LINE_CHARS: Final = 300
_CHANGE_VERBS: Final = (
    *("updated", "edited", "changed", "modified", "fixed", "rewrote", "rewritten", "created"),
    *("added", "wrote", "written", "refactored", "renamed", "deleted", "removed", "extended"),
    *("adjusted", "touched"),
)
_CHANGED_IN_PROSE = LazyPattern(
    r"(?i)\b(?:I(?:'ve| have)?\s+(?:also\s+|now\s+|just\s+)?)(?:"
    + "|".join(_CHANGE_VERBS)
    + r")\s+(?:the\s+|a\s+|an\s+)?(?:file\s+|docs?\s+|tests?\s+in\s+)?"
)
_TODO_CHARS: Final = 300
_BOLD: Final = LazyPattern(r"(\*\*|__)(.+?)\1")
_NOTED_PER_MESSAGE: Final = 4
"""Specific statements kept from one assistant message: a long report names many things."""
_MIN_REQUEST_WORDS: Final = 3


_FINISHED = LazyPattern(
    r"(?i)^(?:done|finished|all set|that's it)\b|\b(?:is|are) (?:in|done|finished|merged|"
    r"shipped|live|working)\b|\b(?:now works|works now|landed)\b"
)


def _reports_finished(text: str) -> bool:
    """Whether the assistant's last message says the work is finished, with no TODO left."""
    prose = FENCE.sub("\n", text)
    if TODO_STATEMENT.search(prose):
        return False
    sentences = split_sentences(prose)
    return any(_FINISHED.search(sentence) for sentence in sentences[:3])


def digest_conversation(
    text: str | Conversation, *, focus: str | None, earlier: str | Conversation = ""
) -> Digest:
    """The digest of ``earlier`` and ``text`` read as one conversation; its ``user_chars``
    counts ``text``'s user messages only (the budget makes room for the new ones)."""
    reader = _ConversationReader(focus)
    for part in parts_of(earlier):
        reader.feed(part)
    earlier_chars = reader.digest.user_chars
    for part in parts_of(text):
        reader.feed(part)
    reader.digest.user_chars -= earlier_chars
    return reader.finish()


class _ConversationReader:
    """Walks the parts of one serialized conversation and fills a :class:`Digest`."""

    def __init__(self, focus: str | None) -> None:
        self.digest = Digest(focus=focus)
        # The longest lists of a digest; only this reader appends to them while it reads.
        self.noted = OnceList(self.digest.noted)
        self.facts = OnceList(self.digest.facts)
        self.done_notes = OnceList(self.digest.done_notes)
        self.focus_words = focus_words_of(focus)
        self.pending: list[tuple[ToolCall, str]] = []
        self.last_calls: list[ToolCall] = []
        self.last_role = ""
        self.last_text = ""
        self.latest_request = ""
        self.question_open = False
        self.embedded: list[str] = []
        self.asked: list[str] = []
        self.seq = 0
        # Results of service tools whose facts wait for what the assistant says of them.
        self.unread = WaitingResults()
        # What the assistant said as it made the latest calls ("Let me check Priya's HR
        # profile for her Thursday arrangement").
        self.calling_text = ""

    def feed(self, part: Part) -> None:
        self.digest.active = True
        if part.role != "thinking":
            add_references(self.digest.references, part.text)
        match part.role:
            case "user":
                self._user(part.text.strip())
            case "assistant":
                self._assistant(part.text.strip())
            case "calls":
                self._calls(part)
            case "result":
                self._result(part.text)
            case _:
                pass  # thinking: the visible text and the tool calls carry what matters

    def _user(self, text: str) -> None:
        self._read_results()
        if not text:
            return
        if text.startswith(SYSTEM_MARK.rstrip()):
            self._system(text[len(SYSTEM_MARK.rstrip()) :].strip())
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
        request = one_line(text)
        scanned = text[:_USER_SCAN_CHARS]
        rules, rules_at = listed_rules(scanned)
        if not d.goal:
            # The goal is what the user asks for; a list of rules after it is kept whole
            # under Constraints instead of cut into the goal's length.
            d.goal = clip(one_line(text[:rules_at]) if rules_at else request, _GOAL_CHARS)
        elif len(request.split()) >= _MIN_REQUEST_WORDS and not similar(request, d.goal):
            # Near-duplicates ("run the tests again") are counted, not listed again.
            add_grouped(d.requests, d.request_counts, self._clip(request, REQUEST_CHARS))
        self.latest_request = request
        self.last_role = "user"
        self.question_open = False
        answered = [question for question in self.asked if answers_question(text, question)]
        # The reply to an offer of options ("Hire or Gary?", "Which would you prefer?") is the
        # user's choice, whatever its words: a decision, like a line that says "go with".
        self._statements(text, rules, choosing=any(map(offers_choice, answered)))
        self._user_status(scanned)
        self._answered(text, answered)
        self._notice(scanned)

    def _goal_statement(self, line: str, sentences: Sequence[str], whole: str) -> bool:
        """Note a user's later line that says what the work is for ("fyi the whole point of
        this is ...") with the goal; ``True`` when it is noted so (not a fact besides). A line
        that also states a rule is left to the rules; the first message is the goal itself (a
        goal sentence in it that a shortened goal line would cut is kept by the goal's short
        form, see items.py)."""
        if line in self.digest.goal or not says_the_goal(sentences):
            return False
        add_once(self.digest.goal_notes, whole)
        return True

    def _system(self, text: str) -> None:
        """A system/developer message: its rules and facts count as the user's; it asks for
        nothing and answers nothing."""
        if text:
            self._statements(text, listed_rules(text[:_USER_SCAN_CHARS])[0], user=False)
            self._notice(text[:_USER_SCAN_CHARS])

    def _statements(
        self,
        text: str,
        rules: list[tuple[str, bool]],
        *,
        user: bool = True,
        choosing: bool = False,
    ) -> None:
        """The rules, preferences, decisions, errors and facts a user's message states
        (``choosing``: it answers an offer of options, so its first line is a decision)."""
        d = self.digest
        d.user_chars += len(text)
        scanned = text[:_USER_SCAN_CHARS]
        for item, preference in rules:
            kept = self._clip(item, _USER_LINE_CHARS, rule=not preference)
            add_once(d.preferences if preference else d.constraints, kept)
        listed = {item for item, _ in rules}
        for line in prose_lines(scanned):
            if line in listed:
                continue
            # The user's whole line, verbatim: a sentence alone ("That has to keep working.")
            # loses what "that" is.
            whole = self._clip(line, _USER_LINE_CHARS)
            sentences = split_sentences(line)
            if line.endswith(":") or (ERROR_LINE.search(line) and not RULE_START.match(line)):
                continue  # introduces something pasted, or quotes an error message
            if user and self._goal_statement(line, sentences, whole):
                continue
            answering = user and choosing and not line.endswith("?")
            choosing = choosing and not answering
            # What the user will do themselves, or asks to be reminded of, is open work: listed
            # with the TODOs (the line stays a statement too).
            todo = user_todo(line, sentences) if user else None
            if todo:
                add_once(d.todos, clip(todo, _TODO_CHARS))
            if decides(line, user=user, answering=answering, min_words=_MIN_REQUEST_WORDS):
                # The user's own choice (or correction) is kept whole, in their words, as a
                # decision.
                add_once(d.decisions, f"{USER_MARK}{whole}")
                continue
            # A question ("why don't we ...?") asks, it does not set a rule.
            if states_rule(sentences):
                add_once(d.constraints, self._clip(line, _USER_LINE_CHARS, rule=True))
            elif PREFERENCE_LINE.found(line):
                firm = FIRM_PREFERENCE.search(line) is not None
                add_once(d.constraints if firm else d.preferences, whole)
        for error in error_lines(FENCE.sub("", scanned), strict=True):
            add_once(d.errors, error)
        self._user_facts(text)

    def _user_facts(self, text: str) -> None:
        """The user's statements, verbatim: the whole message when it is short, otherwise each
        sentence that names something or states something plainly (issue 25 item 1)."""
        d = self.digest
        shown = [*d.constraints, *d.preferences, *d.decisions]

        def add(statement: str) -> None:
            if not any(statement in line for line in shown):
                self.facts.add(statement)

        whole = one_line(FENCE.sub(" ", text))
        # A short message is kept whole, unless it asks something (a question is a request).
        short = len(whole) <= _USER_LINE_CHARS and "?" not in whole
        # A plain statement (no value) is a fact when it states something; an instruction
        # without a value stays among the requests.
        if short and not PASTED.match(whole) and states_fact(whole):
            add(whole)
            return
        # A long message, or one that asks or instructs, states things besides ("book the one
        # by the sea. my sister gets seasick though"): its sentences that name something or
        # say something plainly are kept. (Until 2026-12-07 a long message kept only those
        # that name a value, and "he can't do stairs since the op" said in passing in a long
        # message was lost: held-out 689 -> 694 of 764 at the full budget.)
        items = typed_items(text[:_USER_SCAN_CHARS])
        for line in prose_lines(text[:_USER_SCAN_CHARS]):
            if line in items:
                # An item of a list the user typed ("- scan the textures at the library")
                # is a thing they named, one by one, whatever its words.
                add(self._clip(line, _USER_LINE_CHARS))
                continue
            for sentence in split_sentences(line):
                if sentence.endswith("?"):
                    # A value said inside a question is said all the same ("does the plan
                    # cope with him being in lisbon for work 11-15 august?"); items.py ranks
                    # it below the statements by its "?", which a cut would lose.
                    if has_specifics(sentence) and len(sentence) <= _USER_LINE_CHARS:
                        add(sentence)
                    continue
                if sentence.endswith(":"):
                    continue
                if states_fact(sentence):
                    add(self._clip(sentence, _USER_LINE_CHARS))

    def _clip(self, text: str, limit: int, *, rule: bool = False) -> str:
        # What the custom instructions ask about is kept whole (issue 25 item 6). A rule
        # longer than ``limit`` keeps its sentences that set the rule and name values, not
        # just its head: a policy's numbered item ends with the sentence that matters as often
        # as it starts with it ("Privacy: names ... are not put in emails. ... Do not confirm
        # or deny ..."). Other lines keep their head, where a request or a choice says what
        # it is about.
        if self.focus_words and mentions(text, self.focus_words):
            return text
        return condensed(text, limit) if rule else clip(text, limit)

    def _user_status(self, text: str) -> None:
        # The user's own account of where the work stands is the latest status too; their
        # words also stay among the facts or requests.
        status = [
            sentence
            for line in prose_lines(text)
            for sentence in split_sentences(line)
            if STATUS.search(sentence) and not sentence.endswith("?")
        ]
        if status:
            self.digest.status = clip(" ".join(status), _STATE_CHARS)

    def _answered(self, text: str, answered: list[str]) -> None:
        # A question the user's next message does not take up stays open (issue 25 item 2).
        d = self.digest
        d.user_said.append(clip(one_line(text), _USER_SCAN_CHARS))
        for question in self.asked:
            if question not in answered:
                add_once(d.open_questions, clip(question, _USER_LINE_CHARS))
        self.asked = []

    def _user_bash(self, command: str, output: str) -> None:
        # "Ran `cmd`" is the user's own "!cmd" (a bashExecution message, §3.2).
        self._start_command(command)
        self._finish_command(command, output)

    def _start_command(self, command: str) -> None:
        inspection = inspection_name(command)
        if inspection:
            inspections = self.digest.inspections
            inspections[inspection] = inspections.get(inspection, 0) + 1
        else:
            self._command(command).runs += 1

    def _finish_command(self, command: str, output: str) -> None:
        status, exit_code, error = bash_outcome(command, output)
        if error:
            add_once(self.digest.errors, error)
        if status != "failed":
            # Code the command gave an interpreter (``python - <<EOF``) may have saved files.
            for written in code_written_paths(interpreter_code(command)):
                self._written(written, "bash")
        result = result_line(output, counts_only=status == "failed")
        if inspection_name(command):
            if result:
                # What a read-only command printed, when short and specific, is a fact learned.
                self.noted.add(f"`{command_text(command)}` printed: {result}")
            return
        self.seq += 1
        record = self._command(command)
        record.finish(status, exit_code, error, result)
        record.seq = self.seq

    def _assistant(self, text: str) -> None:
        if not text:
            return
        self._read_results(text)
        self.last_text = text
        self.last_role = "assistant"
        tail = pending_question_in(text)
        self.question_open = tail is not None
        self.asked = questions_in(tail)
        d = self.digest
        status: list[str] = []
        noted = 0
        for sentence in split_sentences(FENCE.sub("\n", text)):
            decision = decision_in(sentence)
            if decision:
                add_once(d.decisions, decision)
            elif STATUS.search(sentence) and not sentence.endswith("?"):
                status.append(sentence)
            elif PROSE_ERROR.search(sentence) and not DONE_WORDS.search(sentence):
                # What the assistant said about an error: kept as said, not claimed still open
                # (a later fix may not name it).
                self.noted.add(clip(sentence, ERROR_CHARS))
            elif (
                noted < _NOTED_PER_MESSAGE
                and noted_fact(sentence)
                and not TODO_STATEMENT.search(sentence)
            ):
                self.noted.add(clip(sentence, SENTENCE_CHARS))
                noted += 1
        if status:
            # The latest statement of where the work stands replaces the earlier one.
            d.status = clip(" ".join(status), _STATE_CHARS)
        self._todos(text)
        self._changed_in_prose(text)
        self._notice(text)

    def _todos(self, text: str) -> None:
        d = self.digest
        prose = FENCE.sub("\n", text)
        for line in prose.splitlines():
            stripped = line.strip()
            if stripped and TODO_STATEMENT.search(stripped):
                # The sentences that say what is left, not the whole paragraph around them
                # ("Booked! ... total $4,184. Seats aren't assigned yet.").
                sentences = split_sentences(stripped)
                held = [s for s in sentences if TODO_STATEMENT.search(s)]
                todo = " ".join(held) if len(sentences) > 1 and held else stripped
                # "- **Deposits:** 4 families haven't paid yet": the label without its marks
                # (stripping the leading ones alone left "Deposits:** ...").
                plain = _BOLD.sub(r"\2", todo).lstrip("-* ").strip()
                add_once(d.todos, clip(plain, _TODO_CHARS))
        # A later message that reports one done closes it; earlier summaries' TODOs are
        # closed the same way when the digests are merged.
        d.todos = [todo for todo in d.todos if not reports_done(prose, todo)]
        for sentence in split_sentences(prose):
            if DONE_WORDS.search(sentence) and not TODO_STATEMENT.search(sentence):
                d.done_reports.append(clip(sentence, _TODO_CHARS))

    def _changed_in_prose(self, text: str) -> None:
        # "I updated `docs/api.md`": a file changed without a write/edit call (a shell
        # command, an earlier session, another tool).
        prose = FENCE.sub("", text)
        # Every match names one of the verbs: a message with none is not searched (at every
        # character, for the "I" the pattern begins with).
        if not may_hold_any(prose, _CHANGE_VERBS):
            return
        for match in _CHANGED_IN_PROSE.finditer(prose):
            path = PATH.match(prose, match.end()) or PATH.match(prose, match.end() + 1)
            if path:
                name = path.group(1) or path.group(0)
                change = self.digest.edits.setdefault(name, FileChange())
                if not change.ops:
                    change.ops["said"] = 1

    def _calls(self, part: Part) -> None:
        calls = list(part.calls) if part.calls is not None else parse_tool_calls(part.text)
        if not calls:
            return
        d = self.digest
        self.calling_text = self.last_text if self.last_role == "assistant" else ""
        self.pending = []
        self.last_calls = calls
        self.last_role = "calls"
        self.question_open = False
        for call in calls:
            kind = _FILE_TOOLS.get(call.name, "")
            path = call_path(call)
            command = call_command(call) if call.name == "bash" else ""
            if kind == "read" and path:
                d.reads.setdefault(path, None)
            elif kind in ("write", "edit") and path:
                change = d.edits.setdefault(path, FileChange())
                change.ops[kind] = change.ops.get(kind, 0) + 1
            elif command:
                self._start_command(command)
                for written in written_paths(command):
                    self._written(written, "bash")
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
        first_line = first_text_line(text)
        if kind == "bash":
            self._finish_command(call_command(call), text)
            return
        failed = bool(ERROR_LINE.search(first_line)) and not first_line.startswith("Successfully")
        if kind == "other":
            self._other_result(call, text, first_line, failed)
            return
        if kind == "read":
            # A file's content may well contain "Error"; only a short answer is a failure.
            failed = failed and len(text) < 500
        if kind in ("write", "edit"):
            change = self.digest.edits[call_path(call)]
            change.failed_last = failed
            if failed:
                change.failures += 1
                change.error = clip(first_line, ERROR_CHARS)
        if failed:
            add_once(self.digest.errors, clip(first_line, ERROR_CHARS))

    def _other_result(self, call: ToolCall, text: str, first_line: str, failed: bool) -> None:
        """A result of a tool that is neither a file tool nor the shell: a failure in its
        first line is an error; otherwise the call is work done and what it returned, when
        specific, a fact learned."""
        d = self.digest
        # A listing or a search may well say "timeout" or "invalid" (what was searched for):
        # only an error as a shell prints it counts there.
        listing = call.name in READ_ONLY_TOOLS
        failed = failed or (not listing and tool_failed(first_line))
        if failed:
            add_once(d.errors, clip(failure_line(text, first_line), ERROR_CHARS))
        if listing:
            return  # asked again when needed
        if failed:
            # What the failure report goes on to say (where, since when) is kept as read.
            stripped = text.strip()
            rest = stripped.split("\n", 1)[1] if "\n" in stripped else ""
        else:
            written = written_text(call)
            if written:
                # What the document now says, as a note of its own (the call's note would
                # repeat it, clipped).
                label = written_by(call)
                self.unread.add(call.name, written, self.calling_text, label)
                # The budget counts a document the user had written as it counts their own
                # words, with the note's label (up to a short document's length): noted, the
                # new words otherwise displaced as many other notes as they added (dev +9 at
                # the full budget).
                d.user_chars += min(len(label) + len(written), WRITTEN_COUNTED_CHARS)
            else:
                self.done_notes.add(call_note(call))
            for path in saved_paths(call):
                d.saved.setdefault(path, call.name)
            rest = text
            # Code the tool ran may have saved files (``df.to_csv('out.csv')``); only an
            # argument that holds code to run (an email's body may quote code).
            for key, value in call.args.items():
                if key in CODE_ARGUMENTS and isinstance(value, str):
                    for written in code_written_paths(value):
                        self._written(written, call.name)
        self.unread.add(call.name, rest, self.calling_text)

    def _read_results(self, echo: str = "") -> None:
        """Note the facts of the results waiting for the assistant's words (``echo``)."""
        for fact in self.unread.read(echo):
            self.noted.add(fact.text)
            if fact.spoken:
                self.digest.spoken.setdefault(fact.text)

    def _written(self, path: str, how: str) -> None:
        change = self.digest.edits.setdefault(path, FileChange())
        change.ops[how] = change.ops.get(how, 0) + 1

    def _command(self, command: str) -> Command:
        key = command_text(command)
        return self.digest.commands.setdefault(key, Command(key))

    def _notice(self, text: str) -> None:
        d = self.digest
        # Every path has a slash or backticks: the scan is skipped for text with neither.
        found = paths_in(FENCE.sub("", text)) if "/" in text or "`" in text else ()
        for match in found:
            bare = match.group(1)
            # A bare `name.ext` in backticks is a file only with a file's extension, not
            # `TodoCreate.title` or `os.environ`.
            if bare is None or bare.rsplit(".", 1)[1].lower() in FILE_EXTENSIONS:
                d.mentioned.setdefault(bare or match.group(0), None)
        if self.focus_words:
            for sentence in split_sentences(text):
                if mentions(sentence, self.focus_words):
                    add_once(d.focus_notes, clip(sentence, SENTENCE_CHARS))

    def finish(self) -> Digest:
        self._read_results()
        d = self.digest
        latest = clip(self.latest_request, REQUEST_CHARS)
        if self.question_open:
            d.pending_question = pending_question_in(self.last_text)
        else:
            for question in self.asked:
                add_once(d.open_questions, clip(question, _USER_LINE_CHARS))
        if self.last_text:
            d.last_state = clip(one_line(self.last_text), _STATE_CHARS)
        if self.last_role != "result":
            d.last_output = None
        elif d.last_output is not None:
            d.last_output = clip(one_line(d.last_output), 300)
        # Whether the latest request is finished is read from the assistant's last words
        # ("Sorting is in.", "Done: ..."); otherwise it stays in progress until the user moves
        # on to another one (see merge_digest).
        # A question may follow the report ("Sorting is in. ... Should I add it?").
        finished = self.last_role == "assistant" and _reports_finished(self.last_text)
        d.finished = bool(latest) and finished
        if latest and finished:
            d.done_notes.append(f"{latest} (reported done)")
        elif latest:
            d.in_progress.append(latest)
        if d.pending_question:
            d.in_progress.append(WAITING)
            d.next_steps.append("Wait for the user's answer to the pending question.")
        elif self.last_role == "user" and latest:
            d.next_steps.append(f"{RESPOND}{latest}")
        elif self.last_role in ("calls", "result"):
            d.last_action = "; ".join(call.describe() for call in self.last_calls[:3])
            d.next_steps.append("Check the result of the last action, then continue the work.")
        elif self.last_role == "assistant":
            for step in planned_steps(self.last_text):
                add_once(d.next_steps, step)
            if not d.next_steps and latest and not finished:
                d.next_steps.append(
                    "Check whether the latest request is complete and finish it if not."
                )
        d.focus_notes = d.focus_notes[-12:]
        d.references = latest_references(d.references)
        merged = Digest()
        for body in self.embedded:
            merged = merge_digest(merged, digest_summary(body))
        if not self.embedded:
            return d
        whole = merge_digest(merged, d)
        whole.user_chars = d.user_chars  # the budget counts this conversation's user words
        return whole
