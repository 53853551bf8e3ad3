"""Issue 24 point 6: option values say what they do. A negative ``--keep-recent`` other than -1
is a usage error (exit 2); -1 means the default, as for every integer setting; a keep budget
larger than the context says that everything would be kept; ``prune`` says why nothing is
pruned, which is not "below the minimum" when the minimum is 0."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from cli_env import invoke, ok
from contextree.compaction.prune import decide_prune
from contextree.compaction.prune_decider import PruneDecider
from contextree.settings.load import load_settings
from contextree.settings.schema import PruneSettings
from core_helpers import Chain, assistant, chars, header, jsonl, tool_call, tool_result, user

pytestmark = pytest.mark.usefixtures("clean_cli")

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "todo-api-session.jsonl"


def _example(tmp_path: Path) -> Path:
    return Path(shutil.copyfile(EXAMPLE, tmp_path / "s.jsonl"))


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_a_negative_keep_recent_is_a_usage_error(tmp_path: Path) -> None:
    result = invoke("compact", "--dry-run", "--keep-recent=-5", _example(tmp_path))
    assert result.exit_code == 2
    assert len(result.output.strip().splitlines()) == 1
    assert "--keep-recent" in result.output


def test_minus_one_means_the_default(tmp_path: Path) -> None:
    path = _example(tmp_path)
    default = ok("compact", "--dry-run", path).stdout
    assert ok("compact", "--dry-run", "--keep-recent=-1", path).stdout == default
    loaded = load_settings(overrides={"compaction.keepRecentTokens": -1, "retry.maxRetries": "-1"})
    assert loaded.settings.compaction.keep_recent_tokens == 20000
    assert loaded.settings.retry.max_retries == 3
    assert loaded.origins["compaction.keepRecentTokens"] == "default (-1 from command line)"


def test_a_bad_value_from_the_environment_is_not_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CONTEXTREE_COMPACTION_KEEP_RECENT_TOKENS", "-5")
    result = invoke("compact", "--dry-run", _example(tmp_path))
    assert result.exit_code == 1
    assert "(or -1 for the default), found -5" in result.output


def test_a_keep_budget_over_the_context_says_everything_is_kept(tmp_path: Path) -> None:
    path = _example(tmp_path)
    for args in (["--dry-run"], []):
        said = _flat(ok("compact", *args, "--keep-recent", "999999", path).stdout)
        assert said.startswith("Nothing to compact: with a keep budget of ")
        assert "every message in the context would be kept verbatim." in said
        assert "too small" not in said
    assert path.read_bytes() == EXAMPLE.read_bytes()


def _tool_session(path: Path, sizes: list[int]) -> Path:
    chain = Chain()
    chain.msg(user("go"))
    for n, size in enumerate(sizes):
        chain.msg(assistant("", calls=[tool_call(f"c{n}")]))
        chain.msg(tool_result(f"c{n}", chars(size)))
    chain.msg(assistant("done"))
    path.write_bytes(jsonl(header(), *chain.entries))
    return path


def test_prune_says_why_nothing_is_pruned(tmp_path: Path) -> None:
    path = _tool_session(tmp_path / "t.jsonl", [100, 100, 100])
    none_outside = ok("prune", "--dry-run", "--minimum-savings", "0", path).stdout
    assert "below the minimum" not in none_outside
    assert "no tool result outside the protected window" in _flat(none_outside)
    small = ok("prune", "--dry-run", "--protect-tokens", "100", "--minimum-savings", "500", path)
    assert "pruning would save ~" in _flat(small.stdout)
    assert "below the minimum of 500" in _flat(small.stdout)
    pruned = ok("prune", "--dry-run", "--protect-tokens", "100", "--minimum-savings", "0", path)
    assert _flat(pruned.stdout).startswith("would prune 2 tool result(s)")


@pytest.mark.parametrize("minimum", [0, 500])
def test_the_decider_gives_the_same_reason(tmp_path: Path, minimum: int) -> None:
    chain = Chain()
    chain.msg(user("go"))
    for n in range(3):
        chain.msg(assistant("", calls=[tool_call(f"c{n}")]))
        chain.msg(tool_result(f"c{n}", chars(100)))
    for protect in (100, 10_000):
        settings = PruneSettings(protect_tokens=protect, minimum_savings=minimum)
        # One instant for both: the cache's age is part of the decision.
        now = 1_700_000_000_000
        assert PruneDecider().decide(chain.entries, settings, at_ms=now) == decide_prune(
            chain.entries, settings, at_ms=now
        )
