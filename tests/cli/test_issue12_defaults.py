"""Issue 12 point 5: pi users' defaults (pi's session folder and default model, entry ids in
``context --format json``, id prefixes for ``--leaf``, prune's settings as options)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from cli_env import clean_cli_env, invoke, ok, reset_consoles
from core_helpers import Chain, assistant, header, jsonl, user


@pytest.fixture(autouse=True)
def clean_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    clean_cli_env(tmp_path, monkeypatch)
    yield
    reset_consoles()


def small_session(path: Path) -> Chain:
    chain = Chain("ab")
    chain.msg(user("first question"))
    chain.msg(assistant("first answer"))
    chain.msg(user("second question"))
    chain.msg(assistant("second answer"))
    path.write_bytes(jsonl(header(), *chain.entries))
    return chain


# -- c. context --format json names each message's entry ------------------------------------


def test_json_context_gives_each_message_its_entry_id(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    chain = small_session(path)
    payload = json.loads(ok("context", path, "--format", "json").stdout)
    assert [m["entryId"] for m in payload["messages"]] == chain.ids()
    assert payload["messages"][0]["role"] == "user"
    assert set(payload) == {"thinkingLevel", "model", "messages"}


# -- d. context --leaf takes a unique prefix -------------------------------------------------


def test_context_leaf_accepts_a_unique_prefix(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    small_session(path)  # ids ab001 .. ab004
    full = json.loads(ok("context", path, "--leaf", "ab002", "-f", "json").stdout)
    assert [m["entryId"] for m in full["messages"]] == ["ab001", "ab002"]
    path.write_bytes(path.read_bytes().replace(b'"ab002"', b'"cd002"'))
    by_prefix = json.loads(ok("context", path, "--leaf", "cd", "-f", "json").stdout)
    assert [m["entryId"] for m in by_prefix["messages"]] == ["ab001", "cd002"]


def test_context_leaf_prefix_errors_are_one_line(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    small_session(path)
    result = invoke("context", path, "--leaf", "ab")
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith("error: ")
    assert 'prefix "ab" matches 4 entries' in result.stderr
    missing = invoke("context", path, "--leaf", "zz")
    assert missing.exit_code == 1 and missing.stderr.count("\n") == 1


# -- e. prune's settings as options -----------------------------------------------------------


def _would_prune(result_text: str) -> int:
    words = result_text.split()
    return int(words[2]) if words[:2] == ["would", "prune"] else 0


def test_prune_options_set_the_pruning_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    from pi_fixtures import pi_fixture

    path = tmp_path / "s.jsonl"
    shutil.copyfile(pi_fixture("before-compaction.jsonl"), path)
    by_options = ok(
        "prune", path, "--dry-run", "--protect-tokens", "2000", "--minimum-savings", "1000"
    ).stdout
    assert _would_prune(by_options) > 0
    monkeypatch.setenv("CONTEXTREE_PRUNING_PROTECT_TOKENS", "2000")
    monkeypatch.setenv("CONTEXTREE_PRUNING_MINIMUM_SAVINGS", "1000")
    assert ok("prune", path, "--dry-run").stdout == by_options  # the same as the settings
    # An option wins over the environment (as compact's do).
    assert ok("prune", path, "--dry-run", "--minimum-savings", "10000000").stdout.startswith(
        "Nothing to prune"
    )
    none_protected = _would_prune(ok("prune", path, "--dry-run", "--protected-tools", "").stdout)
    all_protected = ok("prune", path, "--dry-run", "--protected-tools", "read,bash,skill,edit")
    assert none_protected >= _would_prune(by_options) >= _would_prune(all_protected.stdout)
    assert none_protected > _would_prune(all_protected.stdout)
    assert path.read_bytes() == pi_fixture("before-compaction.jsonl").read_bytes()
    assert invoke("prune", path, "--protect-tokens", "-5").exit_code == 2
