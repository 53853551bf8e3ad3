"""The rules tried only where their matches can begin (``_ANCHORS``) redact exactly what a
scan of the whole text redacts: same output for texts full of near-misses, mixed case, Unicode
dashes, look-behind cases and the characters (?i) folds onto ASCII letters."""

from __future__ import annotations

import copy
import dataclasses

from hypothesis import given, settings
from hypothesis import strategies as st

from contextree.security.redact import Redactor

_PIECES = [
    "password=hunter2!x ", "PASSWD: 's3cr3t-value' ", "api_key = abcd1234efgh ", "Api-Key:",
    "token", "TOKEN=", "db_pass=swordfish ", "DB_PASS = 'x y z' ", "pwd=/home ", "Pwd=letmein1 ",
    "access_key: AKIAABCDEFGHIJKLMNOP ", "account-key=", "private_key=\"k\" ", "credentials:",
    "secret", "secrets_file = ./x ", "passport=123456 ", "bypass=on ", "xpassword=abc12345 ",
    "password = 3.14 ", "passwd=[REDACTED:x] ", "ſecret=abcdefgh ", "\u212aey=abcdefgh ",
    "\u0130token=abcdefgh ", "sk\u2010proj-abcdefghijklmnopqrst ", "é", "…", "\n", " ", "=",
    ":", "'", '"', "_", ".", "-",
]


def _scanning(redactor: Redactor) -> Redactor:
    """The same rules, each scanning the whole text."""
    plain = copy.copy(redactor)
    plain._rules = tuple(dataclasses.replace(rule, anchors=()) for rule in redactor._rules)
    return plain


REDACTOR = Redactor()
SCANNING = _scanning(REDACTOR)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=14))
def test_anchored_rules_redact_what_a_full_scan_redacts(pieces: list[str]) -> None:
    text = "".join(pieces)
    assert REDACTOR.redact(text) == SCANNING.redact(text)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=60))
def test_any_text(text: str) -> None:
    assert REDACTOR.redact(text) == SCANNING.redact(text)


def test_the_rules_with_anchors_still_redact() -> None:
    text = "DB_PASS=swordfish and Api-Key: abcd1234efgh"
    assert REDACTOR.redact(text) == (
        "DB_PASS=[REDACTED:assigned_password] and Api-Key: [REDACTED:assigned_secret]"
    )
