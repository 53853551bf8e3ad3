"""The offline summarizer's shortcuts (issue 27: `compact` at 100k) answer exactly what the
plain computations they replace answer: request grouping through a word index, patterns
searched only where their words are, specific values found shape by shape, lists kept once
with a set, and a summary request's strings redacted once each."""

from __future__ import annotations

import random
import re

import pytest

from contextree.compaction.offline import commands, preferences, prose, specifics
from contextree.compaction.offline.text import (
    _ABBREVIATIONS,
    LIST_MARKER,
    SENTENCE_SPLIT,
    Gated,
    GatedAlternatives,
    OnceList,
    add_grouped,
    add_once,
    first_text_line,
    may_hold,
    similar,
    split_sentences,
    union,
)
from contextree.compaction.summary_request import SummaryRequest, redacted
from contextree.security.redact import DEFAULT_REDACTOR

# What (?i) matches with an ASCII letter but lower() does not make one, and a few more.
_ODD = ["\u0130", "\u0131", "\u017f", "\u212a", "é", "–", "٣", "²", "\n", "  ", "'", ":", "/"]


def _grouped_by_scan(texts: list[str]) -> tuple[list[str], dict[str, int]]:
    """Grouping as it was: each text compared with every earlier kept one, in order."""
    items: list[str] = []
    counts: dict[str, int] = {}
    for text in texts:
        if not text:
            continue
        earlier = next((item for item in items if item == text or similar(item, text)), None)
        if earlier is None:
            items.append(text)
        else:
            counts[earlier] = counts.get(earlier, 1) + 1
    return items, counts


def test_request_grouping_matches_a_scan_of_every_earlier_request() -> None:
    rng = random.Random(7)
    vocabulary = [f"word{n}" for n in range(40)] + ["", "!!", "a", "ab", "Fix", "FIX"]
    for _ in range(60):
        bases = [
            " ".join(rng.choice(vocabulary) for _ in range(rng.randint(0, 25))) for _ in range(6)
        ]
        texts = []
        for _ in range(120):
            words = rng.choice(bases).split()
            for _ in range(rng.randint(0, 3)):
                if words and rng.random() < 0.5:
                    words.pop(rng.randrange(len(words)))
                else:
                    words.insert(rng.randint(0, len(words)), rng.choice(vocabulary))
            text = " ".join(words)
            texts.append(text.upper() if rng.random() < 0.2 else text)
        items: list[str] = []
        counts: dict[str, int] = {}
        for text in texts:
            add_grouped(items, counts, text)
        assert (items, counts) == _grouped_by_scan(texts)


def test_grouping_follows_a_list_changed_behind_its_back() -> None:
    items: list[str] = []
    counts: dict[str, int] = {}
    add_grouped(items, counts, "please run the whole test suite again")
    items[0] = "something else entirely different here"  # not an append: indexed anew
    add_grouped(items, counts, "please run the whole test suite again")
    assert items == [
        "something else entirely different here",
        "please run the whole test suite again",
    ]
    items.append("deploy the service to staging now")  # appended directly: indexed too
    add_grouped(items, counts, "deploy the service to staging now")
    assert counts == {"deploy the service to staging now": 2}


_SAYINGS = [
    "I'm not a beach person",
    "i am an evening person",
    "I'm useless before 10",
    "I'm actually red-green colorblind",
    "keep it short",
    "Text them, not email",
    "cash,\tnot",
    "I really don't want to",
]
"""Whole phrases some patterns need (random words seldom make them)."""


def _alternatives() -> dict[str, GatedAlternatives]:
    return {
        f"{module.__name__}.{name}": value
        for module in (prose, commands)
        for name, value in vars(module).items()
        if isinstance(value, GatedAlternatives)
    }


def _gates() -> dict[str, Gated]:
    gates = {
        f"{module.__name__}.{name}": value
        for module in (prose, commands)
        for name, value in vars(module).items()
        if isinstance(value, Gated)
    }
    for name, alternatives in _alternatives().items():
        gates.update({f"{name}.parts[{at}]": part for at, part in enumerate(alternatives.parts)})
    return gates


def _texts(name: str, words: tuple[str, ...], pattern: str, count: int = 3000) -> list[str]:
    """Random texts of the pattern's words, its gate's words and odd characters."""
    rng = random.Random(name)
    pieces = [*_ODD, *words, *_SAYINGS, "0", "12", "of", "step 3", "nothing here"]
    for word in re.findall(r"[A-Za-z' ]{2,}", pattern):
        pieces += [word, word.upper(), word.title(), word.replace("s", "\u017f")]
        pieces += [word.replace("i", "\u0131"), word.replace("I", "\u0130")]
    return [
        "".join(rng.choice(pieces) + rng.choice(["", " ", ". "]) for _ in range(rng.randint(0, 8)))
        for _ in range(count)
    ]


@pytest.mark.parametrize("name", sorted(_gates()))
def test_a_gated_pattern_finds_what_the_pattern_finds(name: str) -> None:
    gate = _gates()[name]
    found = 0
    for text in _texts(name, gate.words, gate.pattern.pattern):
        expected = gate.pattern.search(text)
        got = gate.search(text)
        assert (got is None) == (expected is None), text
        found += expected is not None
    assert found > 0  # the texts did reach the pattern


@pytest.mark.parametrize("name", sorted(_alternatives()))
def test_alternatives_answer_as_one_gated_pattern_of_them_all(name: str) -> None:
    alternatives = _alternatives()[name]
    flags = {part.pattern.flags for part in alternatives.parts}
    assert len(flags) == 1
    whole = Gated(
        re.compile("|".join(part.pattern.pattern for part in alternatives.parts), flags.pop()),
        alternatives.words,
    )
    words = tuple({word for part in alternatives.parts for word in part.words})
    found = 0
    for text in _texts(name, words + alternatives.words, whole.pattern.pattern, 6000):
        expected = whole.search(text) is not None
        assert alternatives.found(text) == expected, text
        found += expected
    assert found > 0


def test_a_gate_word_of_two_words_is_found_across_any_white_space() -> None:
    # The pattern's \s+ matches a tab, a line break, two spaces or a no-break space: its gate
    # word (", not") must let the line through, as it does one space (before,
    # "cash,<tab>not cheques" was not a preference).
    spaced = ("\t", "\n", "  ", "\xa0", "\u2003", " \r\n ")
    for line in ["cash, not cheques", *(f"cash,{space}not cheques" for space in spaced)]:
        assert any(part.pattern.search(line) for part in preferences.PREFERENCE_LINE.parts)
        assert preferences.PREFERENCE_LINE.found(line), line


def test_a_gate_added_later_is_asked_of_texts_already_scanned() -> None:
    text = "a sentence about zebras and quokkas"
    assert prose.STATUS.search(text) is None  # the text's answer is kept
    late = Gated(re.compile(r"(?i)\bquokkas?\b"), ("quokka",))
    assert late.search(text) is not None
    assert late.search(text.upper()) is not None
    assert late.search("zebras only") is None


_ALL_SHAPES = re.compile("|".join(f"(?:{shape.pattern})" for shape in specifics._SHAPES))


def test_specific_values_are_found_as_all_the_shapes_find_them() -> None:
    rng = random.Random(3)
    pieces = [
        *_ODD,
        "https://x.io/a",
        "api.example.com:8080",
        "v1.2.3",
        "2026-12-05",
        "12/5/26",
        "March 14",
        "src/app.py",
        "JIRA-123",
        "#42",
        "us-west-2",
        "41 ms",
        "`code`",
        '"quoted text"',
        "and Alice Smith",
        "PostgreSQL",
        "code 4417",
        "Pitch 17",
        "plain words",
        ".",
        "-",
        # What the shapes' gates look for (two digits in a row, a dotted tail, a separator,
        # a quote) alone or in parts: a gate must never skip a shape that matches.
        "db-01.internal.net",
        "a.b",
        ".c",
        "it's",
        "O'Neil",
        "a_b3",
        "file #7",
        "_",
        "#",
        "9",
        "12-01",
        "3/4",
        "1.5",
        "x/y",
    ]
    for _ in range(20000):
        text = " ".join(rng.choice(pieces) for _ in range(rng.randint(0, 5)))
        assert specifics.has_specifics(text) == (_ALL_SHAPES.search(text) is not None), text
        expected = sum(1 for shape in specifics._SHAPES if shape.search(text))
        assert specifics.specific_count(text) == expected, text


# The shapes as they were written before they began with the characters they look for.
_SHAPES_BEFORE = {
    2: r"\b\d+(?:\.\d+){1,3}\b",
    3: r"\b\d{4}-\d\d-\d\d\b|\b\d{1,2}/\d{1,2}/\d{2,4}\b",
    6: r"\b[A-Z]{2,}[-_]\d+\b|#\d{2,}\b",
}


@pytest.mark.parametrize("index", sorted(_SHAPES_BEFORE))
def test_a_shape_matches_where_it_matched_before(index: int) -> None:
    before = re.compile(_SHAPES_BEFORE[index])
    rng = random.Random(index)
    pieces = [*_ODD, "1", "12", "2026", "-", "/", ".", "#", "_", "A", "AB", "JIRA", "x", "٣", "²"]
    pieces += ["v1.2", "10.0.0.1", "2026-12-05", "12/5/26", "JIRA-123", "#42", "a1", "é"]
    for _ in range(30000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 8)))
        found, expected = specifics._SHAPES[index].search(text), before.search(text)
        assert (found and found.span()) == (expected and expected.span()), text


# Where a sentence ends, as the pattern said it before it was written to begin with the white
# space character every split begins at.
_SENTENCE_END = re.compile(
    r"(?<=[.!?])"
    + "".join(rf"(?<!\b{re.escape(word)}\.)" for word in _ABBREVIATIONS)
    + r"(?<!\b[A-Z]\.)(?<!\.\.)(?!(?<=\b[Nn]o\.)\s+\d)\s+(?=\S)|\n+"
)


def test_sentences_end_where_they_ended_before() -> None:
    rng = random.Random(5)
    pieces = [
        *_ODD,
        *(f"{word}." for word in _ABBREVIATIONS[:6]),
        ".", "!", "?", "..", "...", " ", "  ", "\t", "\n", "\n\n", "\r\n", "\u00a0", "\u2003",
        "No.", "no.", " 4", "5", "A.", "D. Hollis", "word", "x", "- item", "1. step", "2)",
        "```code```", "•",
    ]  # fmt: skip
    for _ in range(30000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))
        assert SENTENCE_SPLIT.split(text) == _SENTENCE_END.split(text), repr(text)
        split_sentences.cache_clear()
        expected = [
            LIST_MARKER.sub("", raw.strip()).strip()
            for raw in _SENTENCE_END.split(re.sub(r"```.*?(?:```|\Z)", "\n", text, flags=re.S))
        ]
        assert split_sentences(text) == tuple(s for s in expected if len(s) >= 8), repr(text)


def test_paths_are_found_line_by_line_as_in_the_whole_text() -> None:
    rng = random.Random(11)
    pieces = [
        *_ODD,
        "src/app.py", "~/x/y.md", "../a.ts", "/etc/hosts.conf", "`main.py`", "`a`", "`",
        "docs/", "a/b", "x.y", "name.ext", "\n", "\n\n", " ", "\t", "@", ":", "-", ".",
    ]  # fmt: skip
    for _ in range(20000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))
        found = [(m.span(), m.groups()) for m in prose.paths_in(text)]
        assert found == [(m.span(), m.groups()) for m in prose.PATH.finditer(text)], repr(text)


def test_the_first_line_is_the_first_of_the_split_lines() -> None:
    rng = random.Random(13)
    pieces = [
        *_ODD, "a", "bc d", " ", "\t", "\n", "\r", "\r\n", "\v", "\f", "\x1c", "\x1d", "\x1e",
        "\x1f", "\x85", "\u2028", "\u2029", "\u00a0", "\u3000", "\u200b",
    ]  # fmt: skip
    for _ in range(30000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 8)))
        expected = next((line.strip() for line in text.splitlines() if line.strip()), "")
        assert first_text_line(text) == expected, repr(text)


def test_command_outputs_read_as_before_with_folded_letters() -> None:
    # "ı" and "ſ" match "i" and "s" case-insensitively, though lower() keeps them.
    assert may_hold("Command \u0131s done", "exit")
    assert not may_hold("Command is done", "exit")
    assert commands.bash_outcome("make", "boom\nCommand ex\u0131ted with code 2") == (
        "failed",
        2,
        "boom",
    )
    assert commands.bash_outcome("make", "all good") == ("ok", None, None)


def test_kept_once_lists_and_union_keep_the_first_of_each() -> None:
    kept = OnceList(["a"])
    for item in ["b", "a", "", "c", "b"]:
        kept.add(item)
    by_scan: list[str] = ["a"]
    for item in ["b", "a", "", "c", "b"]:
        add_once(by_scan, item)
    assert kept.items == by_scan == ["a", "b", "c"]
    assert union(["x", "y"], ["y", "", "z", "x"]) == ["x", "y", "z"]


def test_a_request_redacts_like_each_message_alone() -> None:
    secret = "sk-proj-abcdefghijklmnopqrstuvwx"
    messages = [
        {"role": "user", "content": f"my key is {secret}", "timestamp": 1},
        {"role": "user", "content": [{"type": "text", "text": f"again {secret}"}], "timestamp": 2},
        {"role": "user", "content": f"my key is {secret}", "timestamp": 3},
    ]
    request = SummaryRequest(tuple(messages), "initial", 100)
    alone = [redacted(message, DEFAULT_REDACTOR) for message in messages]
    assert request.redacted_messages() == alone
    assert secret not in repr(alone)


def test_redacted_copies_every_kind_of_value() -> None:
    secret = "sk-proj-abcdefghijklmnopqrstuvwx"
    value = {
        "text": secret,
        "again": secret,
        "numbers": [1, 2.5, True, None, {"n": 0, "flag": False, "none": None}],
        "nested": {"list": [secret, {"deep": f"x {secret}"}], "plain": "nothing here"},
    }
    copy = redacted(value, DEFAULT_REDACTOR)
    assert secret not in repr(copy)
    assert copy["numbers"] == [1, 2.5, True, None, {"n": 0, "flag": False, "none": None}]
    assert copy["text"] == copy["again"] == copy["nested"]["list"][0] != secret
    assert copy["nested"]["plain"] == "nothing here"
    assert copy is not value and copy["numbers"][4] is not value["numbers"][4]


def test_the_collector_waits_while_a_summary_is_read_and_resumes_after(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import asyncio
    import gc

    from contextree.compaction.offline.summarizer import OfflineSummarizer

    seen: list[bool] = []
    real = OfflineSummarizer.summarize_messages

    def watched(self: OfflineSummarizer, *args: object, **kwargs: object) -> str:
        seen.append(gc.isenabled())
        if len(seen) == 2:
            raise RuntimeError("reading failed")
        return real(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(OfflineSummarizer, "summarize_messages", watched)
    message = {"role": "user", "content": "Please keep the API stable.", "timestamp": 1}
    request = SummaryRequest((message,), "initial", 500)  # type: ignore[arg-type]
    assert gc.isenabled()
    reply = asyncio.run(OfflineSummarizer().write_summary(request))
    assert "API stable" in reply.text
    assert seen == [False] and gc.isenabled()
    with pytest.raises(RuntimeError, match="reading failed"):
        asyncio.run(OfflineSummarizer().write_summary(request))
    assert gc.isenabled()  # resumed after a failure too
