"""A bare Hugging Face token (``hf_`` and 30 or more letters and digits) is redacted wherever
it appears, not only when assigned to a variable whose name says ``token``."""

from __future__ import annotations

import re

import pytest

from contextree.security import DEFAULT_REDACTOR
from contextree.security.redact import BUILTIN_PATTERNS

# Assembled, so that no scanner mistakes this file for a leak.
HF = "hf_" + "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
HF_LETTERS = "hf_" + "qWeRtYuIoPaSdFgHjKlZxCvBnMqWeRtYuI"  # the usual 34 letters


@pytest.mark.parametrize(
    "text",
    [
        HF,
        f"my token is {HF}, keep it safe",
        f"huggingface-cli login --token {HF}",
        f"HF_TOKEN={HF}",
        f'{{"headers": {{"Authorization": "Bearer {HF}"}}}}',
        f"from_pretrained('x', token='{HF}')",
        f"login({HF_LETTERS})",
        f"(`{HF_LETTERS}`)",
        f"key:\n{HF}\n",
        # The reviewer's sample: "remember it exactly: hf_..." in a user message.
        "remember it exactly: hf_abcdefghijklmnopqrstuvwxyzABCDEFGH",
    ],
)
def test_a_bare_hugging_face_token_is_redacted(text: str) -> None:
    redacted = DEFAULT_REDACTOR.redact(text)
    found = re.search(r"hf_[A-Za-z0-9]+", text)
    assert found is not None
    secret = found.group()
    assert secret not in redacted and secret[3:-3] not in redacted, redacted
    assert "[REDACTED:" in redacted


def test_it_is_named_for_what_it_is() -> None:
    assert DEFAULT_REDACTOR.redact(f"token is {HF} here") == (
        "token is [REDACTED:huggingface_token] here"
    )
    assert "huggingface_token" in dict(BUILTIN_PATTERNS)


@pytest.mark.parametrize(
    "text",
    [
        "hf_hub_download(repo_id='gpt2', filename='config.json')",
        "import hf_transfer; HF_HUB_ENABLE_HF_TRANSFER=1",
        "hf_abcdefghijklmnopqrstuvwxyzabcdefgh",  # all lower case: an identifier, not a key
        "hf_0123456789abcdef0123456789abcdef01",  # a hex digest
        "hf_ShortToken123",
        "my_hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789_x",  # part of a longer name
    ],
)
def test_look_alikes_are_left_alone(text: str) -> None:
    assert DEFAULT_REDACTOR.redact(text) == text
