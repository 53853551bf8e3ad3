"""Text helpers the offline summarizer shares: sentences, clipping, ordered lists, token counts."""

from __future__ import annotations

import functools
import math
import re
import threading
from collections.abc import Iterable
from typing import ClassVar, Final

import ahocorasick_rs

from contextree.compaction.offline.lazy_pattern import LazyPattern
from contextree.tokens.estimate import utf16_len


def words_of(text: str) -> frozenset[str]:
    return frozenset(text.split())


FENCE = LazyPattern(r"```.*?(?:```|\Z)", re.S)
_ABBREVIATIONS: Final = ("est", "approx", "incl", "inc", "excl", "etc", "vs", "e.g", "i.e",
                         "mr", "mrs", "ms", "dr", "st", "tel", "ref", "ca", "Est", "Approx",
                         "Incl", "Inc", "Excl", "Mr", "Mrs", "Ms", "Dr", "St", "Tel", "Ref")
"""Words a period follows without ending the sentence ("BACKORDER - est. 19/06", "Mr. Lowe")."""
SENTENCE_SPLIT: Final = LazyPattern(
    # Every split begins at a white space character, which the pattern takes first: the
    # engine then skips to the next one in C instead of trying the pattern at every
    # character (half the time over a long conversation). The look-behinds that follow look
    # back past that character: the end mark before it, tested first so that the 31
    # look-behinds after it run only after a period (17x faster than in the other order).
    r"\s(?:(?<=[.!?]\s)"
    + "".join(rf"(?<!\b{re.escape(word)}\.\s)" for word in _ABBREVIATIONS)
    # An initial ("D. Hollis", "Dr S. Haddad") does not end a sentence either, nor do dot
    # leaders ("Labour (5.5 hrs) ........ £181.50") or an ellipsis.
    # "no." before a number is the word for number ("club no. 4417").
    + r"(?<!\b[A-Z]\.\s)(?<!\.\.\s)(?!(?<=\b[Nn]o\.\s)\s*\d)\s*(?=\S)"
    # Or a run of newlines, wherever it is.
    + r"|(?<=\n)\n*)"
)
"""Where a sentence ends: :func:`split_sentences` and the cutting of long lines share it."""
LIST_MARKER = LazyPattern(r"^\s*(?:[-*•]|\d+[.)])\s+")
_MARKER_STARTS: Final = "-*•"
"""What a list marker begins with after white space, other than a digit (``\\d``: what
``str.isdecimal`` says)."""
_FOCUS_WORD = LazyPattern(r"[a-z0-9_./-]{4,}")
_STOPWORDS: Final = words_of(
    "the and for with that this from into about keep focus more less only also please "
    "should must what when where which their there them they have been were will would "
    "could make sure summary summarize context details important especially"
)


@functools.lru_cache(maxsize=64)
def split_sentences(text: str) -> tuple[str, ...]:
    # Cached (a few recent texts): a message is split by several readers in turn.
    found: list[str] = []
    for raw in SENTENCE_SPLIT.split(FENCE.sub("\n", text)):
        sentence = raw.strip()
        # A list marker begins with one of these or a digit: other sentences are not
        # searched for one (a call each was a fifth of the time).
        if sentence[:1] in _MARKER_STARTS or sentence[:1].isdecimal():
            sentence = LIST_MARKER.sub("", sentence).strip()
        if len(sentence) >= 8:
            found.append(sentence)
    return tuple(found)


_FOLDS_ONTO_ASCII: Final = ("\u0130", "\u0131", "\u017f")
"""What (?i) matches with an ASCII letter but lower() does not make one (see redact.py)."""


class Gated:
    """A pattern searched only in a text that holds one of ``words`` (lower case) or, with
    ``digit``, a digit: each match of the pattern holds one, so the answer is the pattern's.
    The sentence patterns are case-insensitive alternations that the regex engine tries at
    every position; finding none of their words first is ten times cheaper.

    A pattern given as a string (with ``flags``) is compiled the first time a text holds one
    of its words: many are long alternations that a session may never let through, and
    compiling them all was a tenth of ``compact``'s start-up."""

    __slots__ = ("_bit", "_lazy", "digit", "words")

    def __init__(
        self,
        pattern: re.Pattern[str] | str,
        words: tuple[str, ...],
        *,
        digit: bool = False,
        flags: int = 0,
    ):
        self._lazy = LazyPattern(pattern, flags) if isinstance(pattern, str) else pattern
        self.words = words
        self.digit = digit
        self._bit = _GATES.add(words, digit=digit)

    @property
    def pattern(self) -> re.Pattern[str]:
        """The pattern, compiled."""
        lazy = self._lazy
        return lazy if isinstance(lazy, re.Pattern) else lazy.compiled()

    def search(self, text: str) -> re.Match[str] | None:
        """``pattern.search(text)``."""
        # The kept answer looked up here, not in a call: a sentence is asked about by five to
        # ten patterns in turn, and the call was a third of the time of each of the others.
        held = _GATES.kept.get(text)
        if held is None:
            held = _GATES.open_in(text)
        if not held & self._bit:
            return None
        return self._lazy.search(text)


class GatedAlternatives:
    """Whether a text matches the alternation of ``parts``, as a :class:`Gated` of it with
    ``words`` answers: each part is searched only where its own words are, so a text that
    holds a word of one part ("use") is not searched for the other parts, and the costly
    ones ("I'm not a morning person", "keep it short") are searched only where their words
    are."""

    __slots__ = ("_bit", "parts", "words")

    def __init__(self, parts: tuple[Gated, ...], words: tuple[str, ...]) -> None:
        self.parts = parts
        self.words = words
        self._bit = _GATES.add(words, digit=False)

    def found(self, text: str) -> bool:
        """``Gated(alternation of the parts, words).search(text) is not None``."""
        open_in = _GATES.open_in(text)
        if not open_in & self._bit:
            return False
        # (A text matches an alternation where it matches one of its branches.)
        return any(
            open_in & part._bit and part._lazy.search(text) is not None
            for part in self.parts
        )


_DIGIT: Final = LazyPattern(r"\d")


class _Gates:
    """The words of every :class:`Gated` pattern in one automaton: a text is lowered and
    scanned once for all of them, and which patterns it may match is kept for the next ones
    that ask (a sentence is tested by five to ten patterns in turn: a pass of each one's own
    words over the sentence was half the time of the searches)."""

    _CACHED: ClassVar[int] = 4096
    """Texts whose answer is kept: the sentences of the messages read lately."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._words: dict[str, int] = {}  # a word -> the bit of each pattern that has it
        self._digit = 0  # the bits of the patterns that a digit lets through
        self._count = 0
        self._finder: tuple[ahocorasick_rs.AhoCorasick, tuple[int, ...]] | None = None
        self.kept: dict[str, int] = {}
        """The answers of :meth:`open_in` kept, by text (replaced whole when full)."""

    def add(self, words: tuple[str, ...], *, digit: bool) -> int:
        """The bit of a new pattern with these words."""
        with self._lock:
            bit = 1 << self._count
            self._count += 1
            for word in words:
                self._words[word] = self._words.get(word, 0) | bit
            if digit:
                self._digit |= bit
            self._finder = None
            self.kept = {}
            return bit

    def open_in(self, text: str) -> int:
        """The bits of the patterns that ``text`` holds a word of (or a digit, for those
        that ask): the others cannot match it."""
        found = self.kept.get(text)
        if found is None:
            found = self._scan(text)
            if len(self.kept) >= self._CACHED:
                self.kept = {}
            self.kept[text] = found
        return found

    def _scan(self, text: str) -> int:
        if not text.isascii() and any(c in text for c in _FOLDS_ONTO_ASCII):
            return (1 << self._count) - 1  # lower() does not show all that (?i) matches
        finder = self._finder
        if finder is None:
            with self._lock:
                words = list(self._words)
                finder = self._finder = (
                    ahocorasick_rs.AhoCorasick(
                        words, implementation=ahocorasick_rs.Implementation.DFA
                    ),
                    tuple(self._words[word] for word in words),
                )
        automaton, bits_of = finder
        found = self._digit if self._digit and _DIGIT.search(text) else 0
        # Overlapping: every word found, not only the first of those that overlap ("don",
        # "don't").
        lowered = text.lower()
        # (Two C checks before the search: an ASCII sentence that prints has no tab or line
        # break, and a regex tried at every position was a third of the time of this.)
        if (
            not lowered.isascii()
            or "  " in lowered
            or (not lowered.isprintable() and _SPACING.search(lowered))
        ):
            # A word of two ("instead of", ", not") is matched by a pattern's \s+ too: a tab,
            # a line break, two spaces or a no-break space between them is one space to the
            # gate (only which words are in the text matters, not where).
            lowered = " ".join(lowered.split())
        for index, _, _ in automaton.find_matches_as_indexes(lowered, overlapping=True):
            found |= bits_of[index]
        return found


_SPACING: Final = LazyPattern(r"[\t\n\r\f\v]| {2}")
_GATES: Final = _Gates()


def may_hold(text: str, word: str) -> bool:
    """Whether a case-insensitive match of ``word`` (lower case ASCII) can be in ``text``: a
    whole output is looked at once before its lines are searched one by one."""
    if not text.isascii() and any(c in text for c in _FOLDS_ONTO_ASCII):
        return True
    return word in _lowered(text)


@functools.lru_cache(maxsize=4)
def _lowered(text: str) -> str:
    """``text.lower()``, kept for the next few questions: a command's output is asked about
    "exit", then "command", then "exit" again as its outcome and report are read."""
    return text.lower()


def may_hold_any(text: str, words: tuple[str, ...]) -> bool:
    """Whether a case-insensitive match of one of ``words`` (lower case ASCII) can be in
    ``text`` (see :func:`may_hold`): the text is lowered once for all of them."""
    if not text.isascii() and any(c in text for c in _FOLDS_ONTO_ASCII):
        return True
    return mentions(text, words)


def focus_words_of(focus: str | None) -> tuple[str, ...]:
    if not focus:
        return ()
    words: dict[str, None] = {}
    for word in _FOCUS_WORD.findall(focus.lower()):
        if word not in _STOPWORDS:
            words.setdefault(word, None)
    return tuple(words)


def mentions(text: str, words: tuple[str, ...]) -> bool:
    lowered = text.lower()
    return any(word in lowered for word in words)


_NOT_SPACE: Final = LazyPattern(r"\S")
_LINE_BREAK: Final = LazyPattern("[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]")
"""Where ``str.splitlines`` breaks a line ("\\r\\n" breaks where its "\\r" is)."""


def first_text_line(text: str) -> str:
    """``text``'s first line that is not blank, stripped (``""`` when there is none):
    ``next((line.strip() for line in text.splitlines() if line.strip()), "")`` without
    splitting the rest of the text (a tool's output of thousands of lines is read for its
    first line). Every line break is white space, so that line holds the first character
    that is not."""
    start = _NOT_SPACE.search(text)
    if start is None:
        return ""
    end = _LINE_BREAK.search(text, start.start())
    return text[start.start() : end.start() if end is not None else len(text)].rstrip()


def one_line(text: str) -> str:
    return " ".join(text.split())


def clip(text: str, limit: int) -> str:
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


def add_once(items: list[str], item: str) -> None:
    if item and item not in items:
        items.append(item)


class OnceList:
    """Appends to ``items`` what it does not hold yet, as :func:`add_once` does, but answers
    that from a set: a scan of the list per item was quadratic over a long history. Only for
    a list that nothing else appends to meanwhile."""

    __slots__ = ("items", "seen")

    def __init__(self, items: list[str]) -> None:
        self.items = items
        self.seen = set(items)

    def add(self, item: str) -> None:
        if item and item not in self.seen:
            self.seen.add(item)
            self.items.append(item)


def union(*lists: Iterable[str]) -> list[str]:
    merged = OnceList([])
    for items in lists:
        for item in items:
            merged.add(item)
    return merged.items


def plural(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def estimate_tokens(text: str) -> int:
    return math.ceil(utf16_len(text) / 4)


def fit_text(text: str, budget_tokens: int) -> str:
    """``text`` within ``budget_tokens`` (chars/4): whole lines from the top while they fit,
    then as much of the next line as fits, marked as cut."""
    limit = max(budget_tokens, 0) * 4
    if utf16_len(text) <= limit:
        return text
    kept: list[str] = []
    used = 0
    marker = " […]"
    for line in text.splitlines():
        size = utf16_len(line) + (1 if kept else 0)
        if used + size > limit:
            room = limit - used - (1 if kept else 0) - len(marker)
            if room > 20:
                kept.append(line[:room].rstrip() + marker)
            break
        kept.append(line)
        used += size
    result = "\n".join(kept).rstrip()
    # A line of astral characters counts two units each: trim until it fits.
    while utf16_len(result) > limit:
        result = result[:-1]
    return result


_SIMILAR_WORD = LazyPattern(r"[a-z0-9_./`-]{3,}")


@functools.lru_cache(maxsize=8192)
def _word_set(text: str) -> frozenset[str]:
    # Cached: grouping compares each new request with every earlier one.
    return frozenset(_SIMILAR_WORD.findall(text.lower()))


@functools.lru_cache(maxsize=8192)
def _word_bits(text: str) -> int:
    """One bit of 64 for each word of :func:`_word_set` (by the word's hash, so two words
    may share one): a word whose bit another set lacks is not in that set (see
    :meth:`_GroupIndex.near_duplicate`). Cached: a request is looked up, then indexed."""
    bits = 0
    for word in _word_set(text):
        bits |= 1 << (hash(word) & 63)
    return bits


def similar(a: str, b: str, threshold: float = 0.85) -> bool:
    """Whether two lines say nearly the same (word sets overlap by ``threshold``, Jaccard)."""
    left, right = _word_set(a), _word_set(b)
    if not left or not right:
        return a.strip().lower() == b.strip().lower()
    small, large = sorted((len(left), len(right)))
    if small < threshold * large:
        return False  # the overlap cannot reach the threshold
    return len(left & right) / len(left | right) >= threshold


def add_grouped(items: list[str], counts: dict[str, int], item: str, times: int = 1) -> None:
    """Add ``item``, or count it against an earlier near-duplicate (kept in its first words)."""
    if not item:
        return
    earlier = _GroupIndex.of(items).near_duplicate(item)
    if earlier is not None:
        counts[earlier] = counts.get(earlier, 1) + times
        return
    items.append(item)
    if times > 1:
        counts[item] = times


class _GroupIndex:
    """Which earlier items share words with a new one, so that grouping a request compares it
    only with those instead of every earlier request (the scan was O(n^2): 1.1 s of compacting
    a 100k-entry session).

    The answer is the same as comparing with every item in order: two non-empty word sets that
    pass :func:`similar` share at least 84% of the smaller one, so any ``n - overlap + 1`` of
    the new item's ``n`` words (the rarest are taken) include a shared one; of the items found
    through them, the first that passes the test is returned. An item with no words matches
    only one that lowercases and strips to the same text, which has no words either.
    """

    _cache: ClassVar[dict[int, _GroupIndex]] = {}
    _CACHED: ClassVar[int] = 4
    _lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self, items: list[str]) -> None:
        self.items = items  # held, so that its id names this list while cached
        self.seen: list[str] = []
        self.words: list[frozenset[str]] = []
        self.sizes: list[int] = []
        self.bits: list[int] = []
        self.postings: dict[str, list[int]] = {}
        self.plain: dict[str, str] = {}

    @classmethod
    def of(cls, items: list[str]) -> _GroupIndex:
        """The index of ``items``, brought up to date with what was appended since."""
        with cls._lock:  # summaries may be written in several threads (contextree serve)
            index = cls._cache.get(id(items))
            if index is None or index.seen != items[: len(index.seen)]:
                # New, or changed other than by appending: indexed from the start.
                index = cls(items)
                cls._cache.pop(id(items), None)
                while len(cls._cache) >= cls._CACHED:
                    del cls._cache[next(iter(cls._cache))]
                cls._cache[id(items)] = index
        for item in items[len(index.seen) :]:
            index._add(item)
        return index

    def _add(self, item: str) -> None:
        position = len(self.seen)
        words = _word_set(item)
        self.seen.append(item)
        self.words.append(words)
        self.sizes.append(len(words))
        self.bits.append(_word_bits(item))
        for word in words:
            self.postings.setdefault(word, []).append(position)
        if not words:
            self.plain.setdefault(item.strip().lower(), item)

    def near_duplicate(self, item: str) -> str | None:
        """The first item that is ``item`` or :func:`similar` to it."""
        mine = _word_set(item)
        if not mine:
            return self.plain.get(item.strip().lower())
        overlap = max(1, len(mine) * 84 // 100)
        postings = self.postings
        rarest = sorted(mine, key=lambda word: len(postings.get(word, ())))
        found: set[int] = set()
        for word in rarest[: len(mine) - overlap + 1]:
            found.update(postings.get(word, ()))
        # similar()'s test for two non-empty word sets, the same float arithmetic (the union's
        # size counted, not built), in the loop: a call per item compared was a third of the
        # time. A size too far off rules an item out before its words are compared, and so
        # do the words' bits: each bit of ours the other item lacks stands for at least one
        # word of ours it lacks, so it shares at most our size less those, and a similar item
        # shares at least ``overlap`` (a test of two numbers instead of two sets: most items
        # found through one rare word share few others).
        size = len(mine)
        sizes, words, bits = self.sizes, self.words, self.bits
        ours = _word_bits(item)
        for position in sorted(found):
            other = sizes[position]
            if (other < 0.85 * size) if other < size else (size < 0.85 * other):
                continue
            if size - (ours & ~bits[position]).bit_count() < overlap:
                continue
            shared = len(mine & words[position])
            if shared / (size + other - shared) >= 0.85:
                return self.seen[position]
        return None
