"""Issue 12 point 5: pi users' defaults (pi's session folder and default model, entry ids in
``context --format json``, id prefixes for ``--leaf``, prune's settings as options)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from cli_env import invoke, ok, session_file
from core_helpers import Chain, assistant, header, jsonl, user
from fakes.fake_llm import FakeLLMServer

pytestmark = pytest.mark.usefixtures("clean_cli")


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


# -- b. pi's defaultProvider / defaultModel -----------------------------------------------------


def _write_json(path: Path, data: dict[str, object]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_pis_default_model_is_the_default_and_config_names_its_file() -> None:
    home = Path.home()
    pi_user = _write_json(
        home / ".pi" / "agent" / "settings.json",
        {"defaultProvider": "anthropic", "defaultModel": "claude-sonnet-4-5", "theme": "dark"},
    )
    from contextree.settings.load import load_settings

    loaded = load_settings()
    assert loaded.settings.model == "anthropic:claude-sonnet-4-5"
    assert str(pi_user) in loaded.origins["model"]
    assert "defaultProvider" in loaded.origins["model"]
    assert loaded.warnings == []  # pi's own keys are not reported
    shown = "".join(ok("config").stdout.replace("│", "").split())
    assert "anthropic:claude-sonnet-4-5" in shown
    assert "(pi'sdefaultProvider,defaultModel)" in shown

    # A project's .pi/settings.json may not choose the model on its own (issue 15 item 3)...
    pi_project = _write_json(Path.cwd() / ".pi" / "settings.json", {"defaultModel": "claude-x"})
    loaded = load_settings()
    assert loaded.settings.model == "anthropic:claude-sonnet-4-5"
    assert "defaultProvider/defaultModel ignored" in "\n".join(loaded.warnings)
    # ...but with the user's trust it overrides pi's user file, key by key.
    loaded = load_settings(env={**os.environ, "CONTEXTREE_SECURITY_TRUST_PROJECT_SETTINGS": "true"})
    assert loaded.settings.model == "anthropic:claude-x"
    assert str(pi_user) in loaded.origins["model"] and str(pi_project) in loaded.origins["model"]


def test_contextree_settings_win_over_pis_default_model(monkeypatch: pytest.MonkeyPatch) -> None:
    from contextree.settings.load import load_settings

    _write_json(
        Path.home() / ".pi" / "agent" / "settings.json",
        {"defaultProvider": "openai", "defaultModel": "gpt-4o-mini"},
    )
    assert load_settings().settings.model == "openai:gpt-4o-mini"
    ours = Path.home() / ".config" / "contextree" / "settings.toml"
    ours.parent.mkdir(parents=True)
    ours.write_text('model = "ollama:llama3"\n', encoding="utf-8")
    assert load_settings().settings.model == "ollama:llama3"
    ours.write_text('model = ""\n', encoding="utf-8")  # explicitly none: the offline summarizer
    assert load_settings().settings.model is None
    ours.unlink()
    monkeypatch.setenv("CONTEXTREE_MODEL", "anthropic:claude-haiku-4-5")
    assert load_settings().settings.model == "anthropic:claude-haiku-4-5"
    assert load_settings(overrides={"model": "openai:gpt-4.1"}).settings.model == "openai:gpt-4.1"


@pytest.mark.parametrize(
    "pi_settings",
    [
        {"defaultProvider": "google", "defaultModel": "gemini-2.5-pro"},  # we cannot call it
        {"defaultProvider": "openai"},  # no model
        {"defaultModel": "gpt-4o"},  # no provider
        {"defaultProvider": "offline", "defaultModel": "x"},
    ],
)
def test_pis_default_model_we_cannot_use_is_ignored(pi_settings: dict[str, object]) -> None:
    from contextree.settings.load import load_settings

    _write_json(Path.home() / ".pi" / "agent" / "settings.json", pi_settings)
    loaded = load_settings()
    assert loaded.settings.model is None
    assert loaded.origins["model"] == "default"
    assert loaded.warnings == []


def test_pi_default_providers_are_the_ones_we_can_call() -> None:
    from contextree.llm.registry import PROVIDERS
    from contextree.settings.load import PI_DEFAULT_PROVIDERS

    # The providers' own compaction writes no chat replies: never a pi default provider.
    compaction_only = {"openai-compact", "anthropic-compact"}
    assert set(PI_DEFAULT_PROVIDERS) == set(PROVIDERS) - {"offline", "remote", *compaction_only}


# -- a. pi's session folder for this directory -----------------------------------------------


def test_pi_session_folder_encodes_the_cwd_as_pi_does() -> None:
    from contextree.session.paths import pi_sessions_dir, sessions_dir

    env = {"HOME": "/home/me", "CONTEXTREE_HOME": "/ct"}
    assert pi_sessions_dir(Path("/work/my:proj"), env) == Path(
        "/home/me/.pi/agent/sessions/--work-my-proj--"
    )
    assert sessions_dir(Path("/work/my:proj"), env).name == "--work-my-proj--"


def test_sessions_lists_ours_and_pis_for_this_directory() -> None:
    from contextree.session.paths import pi_sessions_dir, sessions_dir

    cwd = Path.cwd()
    ours = session_file(sessions_dir(cwd), "10-00-00", "ours old", 1_767_225_600)
    pis = session_file(pi_sessions_dir(cwd), "11-00-00", "from pi", 1_767_225_700)
    listed = json.loads(ok("sessions", "--format", "json").stdout)
    assert [item["path"] for item in listed] == [str(pis), str(ours)]  # newest first
    output = ok("sessions").stdout
    squashed = "".join(output.split())
    # Two folders: the title names both and each session shows its whole path.
    assert "".join(f"Sessions in {sessions_dir(cwd)} and {pi_sessions_dir(cwd)}:".split()) in (
        squashed
    )
    assert str(pis) in squashed and str(ours) in squashed


def test_sessions_with_only_pis_folder() -> None:
    from contextree.session.paths import pi_sessions_dir, pi_sessions_root

    pis = session_file(pi_sessions_dir(Path.cwd()), "11-00-00", "from pi", 1_767_225_700)
    assert [item["path"] for item in json.loads(ok("sessions", "-f", "json").stdout)] == [str(pis)]
    everything = json.loads(ok("sessions", "--all", "-f", "json").stdout)
    assert [item["path"] for item in everything] == [str(pis)]
    assert str(pi_sessions_root()) in "".join(ok("sessions", "--all").stdout.split())


def test_chat_continue_takes_the_newest_of_ours_and_pis(fake_llm: FakeLLMServer) -> None:
    from contextree.session.paths import latest_session, pi_sessions_dir, sessions_dir

    cwd = Path.cwd()
    ours = session_file(sessions_dir(cwd), "10-00-00", "ours", 1_767_225_600)
    assert latest_session(cwd) == ours
    pis = session_file(pi_sessions_dir(cwd), "11-00-00", "from pi", 1_767_225_700)
    assert latest_session(cwd) == pis

    fake_llm.enqueue_text("Continued.")
    url = fake_llm.url
    result = invoke("chat", "--model", "openai:gpt-x", "--base-url", url, "-c", "-p", "Next?")
    assert result.exit_code == 0, result.output
    sent = fake_llm.requests[0].body["messages"][1:]
    assert sent[0]["content"] == "from pi"
    assert b"Continued." in pis.read_bytes()
    assert b"Continued." not in ours.read_bytes()


# -- point 8: --help imports no more than it needs (its time is a benchmark row, not a test) ----


def test_help_does_not_import_rich_or_the_session_layer() -> None:
    import os
    import subprocess
    import sys

    import contextree

    src = str(Path(contextree.__file__).resolve().parent.parent)
    code = (
        "import sys, runpy\n"
        "sys.argv = ['contextree', '--help']\n"
        "try:\n"
        "    runpy.run_module('contextree', run_name='__main__')\n"
        "except SystemExit:\n"
        "    pass\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('rich', 'httpx', 'msgspec')"
        " or m.startswith('contextree.session'))\n"
        "print('HEAVY', heavy)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": src},
        check=True,
    )
    assert result.stdout.startswith("Usage: ")
    assert "HEAVY []" in result.stdout
