"""How a user says a preference: of style, format, language or units, a way of working said of
oneself, a taste said plainly or as a complaint, a few words against their alternative."""

from __future__ import annotations

import re

from contextree.compaction.offline.lazy_pattern import LazyPattern
from contextree.compaction.offline.text import Gated, GatedAlternatives

__all__ = ["FIRM_PREFERENCE", "PREFERENCE_LINE"]

# fmt: off
PREFERENCE_LINE = GatedAlternatives(
    tuple(
        Gated(pattern, words, flags=re.IGNORECASE)
        for pattern, words in (
            # Each part with the words that every match of it holds: a line is searched for
            # the parts whose words it has (the whole alternation was searched in every line
            # with one of the words: 30 ms of compacting a 100k-entry session).
            (
                r"\b(?:I|we)\s+(?:prefer|want|would like|'d like|would rather|'d rather)\b",
                ("prefer", "want", "like", "rather"),
            ),
            (
                r"^(?:please\s+)?(?:use|keep|prefer|stick to|stick with)\b",
                ("use", "keep", "prefer", "stick"),
            ),
            (
                r"\b(?:you|we)\s+should\b|\binstead of\b|\brather than\b",
                ("should", "instead of", "rather than"),
            ),
            # A preference of style, format, language or units, however it is worded ("wants
            # metric units", "prefers terse answers"): the subject names what it is about.
            (
                r"\b(?:prefers?|preferred|wants|likes|dislikes|hates)\b",
                ("prefer", "want", "like", "hate"),
            ),
            # A way of working said of oneself: "my brain works better like that", "easier for
            # me on the phone", "I'm not a morning person", "I find it easier in one list".
            (
                r"\b(?:works?|reads?|goes) better (?:for me|like that|that way)\b"
                r"|\beasier (?:for me|on me)\b|\bI find (?:it |that )?(?:easier|harder)\b",
                ("better", "easier", "harder"),
            ),
            (
                r"\bI(?:'m| am) (?:not |really not |just not )?(?:a|an) [\w-]+ person\b"
                # "i'm useless before 10", "I'm actually red-green colorblind myself".
                r"|\bI(?:'m| am) (?:\w+ )?(?:useless|hopeless|rubbish|terrible|awful|no good) "
                r"(?:before|after|at|with|on|in)\b|\bI(?:'m| am) (?:\w+ )?(?:red-green )?"
                r"colou?r-?blind\b",
                ("person", "useless", "hopeless", "rubbish", "terrible", "awful", "no good",
                 "blind"),
            ),
            # "I like my chapters ending on a punch", "I hate giant spreadsheets", "I'd lean
            # toward something quieter", "i really don't want to get audited".
            (
                r"\bI (?:really |just |do )?(?:like|love|hate|can['\u2019]?t stand) (?:my|our|"
                r"it when|it if|them to|when|having|getting|giant|big|long|small|short|lots|too)\b"
                # "i hate texting people who didn't ask", "I loathe ringing round": a way of
                # working the speaker avoids.
                r"|\bI (?:really |just |honestly )?(?:hate|loathe|detest|can['\u2019]?t stand) "
                r"(?!(?:every|any|no|some)thing\b|asking\b|being\b|having\b|bothering\b)\w+ing\b"
                # Not "can't stand up the cluster", "cannot stand by this estimate".
                r"|\bI (?:really |just |honestly )?(?:can['\u2019]?t|cannot) (?:stand|bear)\b"
                r"(?!\s+(?:up|by|in|down|on|out|for|to)\b)"
                r"|\bI(?:'d| would) lean (?:towards?|to)\b"
                r"|\b(?:I|we) (?:really |just |honestly )?(?:don['\u2019]?t|do not) want (?:a|an|"
                r"any|anything|to|them|him|her|it|the)\b",
                ("like", "love", "hate", "stand", "bear", "lean", "want", "loathe", "detest"),
            ),
            # A taste said as a complaint: "im not a fan of group chats", "honestly im sick of
            # long emails", "i cant be doing with zoom", "it drives me mad when they cc
            # everyone", "none of this app nonsense", "i really dislike the new logo".
            (
                r"\b(?:not|never) (?:a |much of a |the biggest )?fan of\b"
                r"|\b(?:i|we)(?:['\u2019]m|m|['\u2019]re| am| are)? (?:so |really |just |honestly "
                r"|a bit |getting )?(?:(?:sick|tired|fed up) of|fed up with)\b"
                r"|\bcan['\u2019]?t be doing with\b"
                r"|\bdrives? me (?:mad|nuts|crazy|insane|up the wall|round the bend|bananas)\b"
                r"|\bnone of (?:this|that|those|your|the) (?:[\w-]+ ){0,3}(?:nonsense|rubbish|faff|"
                r"malarkey|palaver)\b"
                r"|\bI (?:really |just |honestly )?(?:dislike|detest|loathe)\b"
                r"|\bmakes? me (?:cringe|wince)\b",
                ("fan of", "sick", "tired", "fed up", "doing with", "drive", "none of",
                 "dislike", "detest", "loathe", "cringe", "wince"),
            ),
            # "keep it short", "keep it simple", "bullet points pls".
            (
                r"\bkeep (?:it|them|things|replies|messages|emails) (?:short|brief|simple|casual|"
                r"informal|formal|friendly|light|tight|plain|concise|clean|jolly|cheerful|chatty|"
                r"warm|upbeat|professional|polite|neutral|relaxed|fun|snappy|low-key)\b"
                r"|\bbullet points? (?:pls|please)\b",
                ("keep", "bullet"),
            ),
            # "Text them, not email", "local times pls, not UK time", "friendly, not like it
            # came from the council": a few words and what they are instead of (not "tried it,
            # not much luck").
            (
                r"(?:^|[.!?;:,]\s+|\s[-\u2013\u2014]\s+)(?:[\w'\u2019-]+\s+){0,3}[\w'\u2019-]+"
                r"(?:\s+(?:pls|please))?,\s+not\s+(?!(?:much|really|sure|yet|bad|great|quite|so|"
                r"too|that|very|a\s+lot|at\s+all|even|exactly|entirely|a\s+problem|"
                r"a\s+big\s+deal|an\s+issue|worth|bad)\b)",
                ("not",),
            ),
            (
                r"\b(?:style|format(?:ting)?|tone|wording|spelling|units?|language|voice|register|"
                r"answers?|replies|responses?|headings?|emojis?|em[- ]?dash(?:es)?|bullets?|"
                r"prose|paragraphs?)\b.*\b(?:no|not|only|always|never|please|keep|use|without|"
                r"instead)\b",
                ("style", "format", "tone", "wording", "spelling", "unit", "language", "voice",
                 "register", "answer", "replies", "response", "heading", "emoji", "dash",
                 "bullet", "prose", "paragraph"),
            ),
        )
    ),
    # The words of the whole, as it was one pattern: a line with none of them is not a
    # preference even where a part would match it (", not" after a tab).
    ("prefer", "want", "would", "'d ", "use", "keep", "stick", "should", "instead of",
     "rather than", "like", "hate", "style", "format", "tone", "wording", "spelling", "unit",
     "language", "voice", "register", "answer", "replies", "response", "heading", "emoji", "dash",
     "bullet", "prose", "paragraph", "better", "easier", "harder", "person", "useless",
     "hopeless", "rubbish", "terrible", "awful", "no good", "blind", "love", "stand", "bear",
     "lean", "loathe", "detest", "fan of", "sick", "tired", "fed up", "doing with", "drive",
     "none of", "dislike", "cringe", "wince", ", not"),
)
# fmt: on
"""A user's line that states a preference: :meth:`~GatedAlternatives.found` answers."""

FIRM_PREFERENCE = LazyPattern(
    r"(?i)^(?!.*\b(?:lean|leaning|ideally|maybe|perhaps|if possible|probably|i guess)\b)"
    r".*(?:, not\b|, no\b|\binstead of\b|\brather than\b)"
)
"""A preference said against its alternative ("metric, not imperial"): kept as a rule,
unless hedged ("I'd lean toward something quieter, not right in the centre")."""
