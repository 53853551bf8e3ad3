"""A secret-sounding word just before a JSON pair (``The secret: "token": "..."``) used to make
``assigned_secret`` take the pair's key for the value: the key name was blanked and the secret
itself passed through. A secret's name followed by ``:``, quoted or not, is a key, not a value;
the rule then matches at that key, and its value is redacted."""

from __future__ import annotations

import pytest

from contextree.security import DEFAULT_REDACTOR, Redactor

# Assembled, so that no scanner mistakes this file for a leak.
VALUE = "q8w7e6r5" + "t4y3u2i1o0p9"


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        (f'The secret: "token": "{VALUE}"', 'The secret: "token": '),
        (f'password: "secret": "{VALUE}"', 'password: "secret": '),
        (f'apikey: "api_key": "{VALUE}"', 'apikey: "api_key": '),
        (f'The secret: "token":"{VALUE}"', 'The secret: "token":'),
        (f"the token: 'password': '{VALUE}'", "the token: 'password': "),
        (f'secret = "access_key": "{VALUE}"', 'secret = "access_key": '),
        (f'Here is the token: {{"api_key": "{VALUE}", "user": "bob"}}', '"api_key": '),
        (f"The secret: token: {VALUE}", "The secret: token: "),
        (f'DB_PASS: "password": "{VALUE}"', '"password": '),
    ],
)
def test_the_value_is_redacted_and_the_key_name_kept(text: str, kept: str) -> None:
    redacted = DEFAULT_REDACTOR.redact(text)
    assert VALUE not in redacted and VALUE[3:-3] not in redacted, redacted
    assert kept in redacted, redacted
    assert "[REDACTED:" in redacted


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            f'The secret: "token": "{VALUE}"',
            'The secret: "token": "[REDACTED:assigned_secret]"',
        ),
        (
            f'password: "secret": "{VALUE}"',
            'password: "secret": "[REDACTED:assigned_secret]"',
        ),
        (
            f'apikey: "api_key": "{VALUE}"',
            'apikey: "api_key": "[REDACTED:assigned_secret]"',
        ),
    ],
)
def test_the_reported_cases_exactly(text: str, expected: str) -> None:
    assert DEFAULT_REDACTOR.redact(text) == expected
    # A text holding a character (?i) folds onto ASCII is redacted by full scans: the same.
    assert Redactor().redact("\u017f " + text) == "\u017f " + expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('password: "hunter2-Correct"', 'password: "[REDACTED:assigned_secret]"'),
        ('{"token": "abc:def-123"}', '{"token": "[REDACTED:assigned_secret]"}'),
        ("api_key=abc:def-1234", "api_key=[REDACTED:assigned_secret]"),
        ("secret: hunter2-Correct", "secret: [REDACTED:assigned_secret]"),
        ("token=http://x.test/a:b", "token=[REDACTED:assigned_secret]"),
        ("password=hunter2-Correct: done", "password=[REDACTED:assigned_secret] done"),
        ("DB_PASS='hunter2': done", "DB_PASS='[REDACTED:assigned_password]': done"),
    ],
)
def test_values_holding_or_near_a_colon_are_still_redacted(text: str, expected: str) -> None:
    assert DEFAULT_REDACTOR.redact(text) == expected
