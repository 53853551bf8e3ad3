"""The cost report of the dry runs: requests, cache reads and writes, money (issue 30)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cli_env import invoke, ok
from contextree.compaction.cost import project_costs
from contextree.compaction.cost_report import prune_cost, session_model
from contextree.compaction.prune import decide_prune
from contextree.errors import SettingsError
from contextree.session import SessionTree
from contextree.settings import PruneSettings, Settings, load_settings
from contextree.settings.prices import DEFAULT_PRICES, ModelPrice, find_price, parse_prices
from core_helpers import Chain, assistant, chars, tool_call, tool_result, user

SONNET = ModelPrice(3, 15, 0.3, 3.75)
NOW = 1_800_000_000_000


def _report(cached: int, turns: int = 3, **overrides: object):  # type: ignore[no-untyped-def]
    figures: dict[str, object] = {
        "context_tokens": 100_000,
        "after_tokens": 30_000,
        "unchanged_tokens": 0,
        "cached_tokens": cached,
        "growth": 1_000,
        "turns": turns,
        "model": "anthropic:claude-sonnet-4-5",
        "price": SONNET,
    }
    figures.update(overrides)
    return project_costs(**figures)  # type: ignore[arg-type]


def test_a_warm_cache_reads_the_prefix_and_writes_what_is_new() -> None:
    report = _report(cached=100_000)
    # Without: 100k read; then 100k read + 1k written; then 101k read + 1k written.
    assert (report.before.input_tokens, report.before.cache_read_tokens) == (303_000, 301_000)
    assert report.before.cache_write_tokens == 2_000
    assert report.before.money == pytest.approx((301_000 * 0.3 + 2_000 * 3.75) / 1e6)
    # With a compaction: nothing of the prefix stays; 30k written, then 30k and 31k read.
    assert (report.after.input_tokens, report.after.cache_read_tokens) == (93_000, 61_000)
    assert report.after.cache_write_tokens == 32_000
    assert report.after.money == pytest.approx((61_000 * 0.3 + 32_000 * 3.75) / 1e6)
    assert report.break_even_turn is None  # the rewrite is not earned back in 3 requests


def test_the_break_even_request_counts_the_cache_rewrite() -> None:
    # 82,500 micro-dollars behind after the first request, 21,000 saved by each later one.
    assert _report(cached=100_000, turns=10).break_even_turn == 5
    # An expired cache is written again either way: the smaller context wins at once.
    assert _report(cached=0).break_even_turn == 1


def test_a_prune_keeps_the_cached_prefix_before_the_first_pruned_output() -> None:
    report = _report(cached=100_000, after_tokens=80_000, unchanged_tokens=60_000, turns=1)
    assert (report.after.cache_read_tokens, report.after.cache_write_tokens) == (60_000, 20_000)


def test_a_summary_call_is_paid_once() -> None:
    report = _report(cached=0, one_time_usd=0.5)
    assert report.after.money == pytest.approx(0.5 + (61_000 * 0.3 + 32_000 * 3.75) / 1e6 - (0.0))
    assert report.to_json()["oneTimeUsd"] == 0.5


def test_an_unknown_price_reports_tokens_and_says_so() -> None:
    report = _report(cached=0, price=None, model="local:thing")
    assert report.before.money is None and not report.priced
    assert report.notes == ("no price known for local:thing (set prices)",)
    body = report.to_json()
    assert body["before"]["usd"] is None and body["breakEvenTurn"] == 1


def test_a_model_without_a_cache_pays_input_for_everything() -> None:
    plain = ModelPrice(1, 2)
    report = _report(cached=100_000, price=plain, turns=1)
    assert report.before.cache_read_tokens == 0
    assert report.before.money == pytest.approx(100_000 * 1 / 1e6)


def test_prices_are_found_by_spec_name_and_prefix_and_can_be_overridden() -> None:
    assert find_price("anthropic:claude-sonnet-4-5-20250929", DEFAULT_PRICES) == SONNET
    assert find_price("gpt-4o-mini", DEFAULT_PRICES) == DEFAULT_PRICES["gpt-4o-mini"]
    assert find_price("gpt-4o-2024-08-06", DEFAULT_PRICES) == DEFAULT_PRICES["gpt-4o"]
    assert find_price("ollama:llama3.1", DEFAULT_PRICES) is None
    assert find_price("anthropic:claude-sonnet-4-6", DEFAULT_PRICES) is None  # not guessed
    table = parse_prices('{"my-model": {"input": 1, "output": 2, "cacheRead": 0.1}}')
    assert table["my-model"] == ModelPrice(1, 2, 0.1, None)
    assert table["gpt-4o"] == DEFAULT_PRICES["gpt-4o"]


def test_a_bad_price_is_an_error_naming_the_model_and_field(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path), "CONTEXTREE_PRICES": '{"m": {"input": -1, "output": 2}}'}
    with pytest.raises(SettingsError, match=r"prices.*m\.input: expected a price >= 0"):
        load_settings(cwd=tmp_path, env=env)
    env["CONTEXTREE_PRICES"] = '{"m": {"input": 1}}'
    with pytest.raises(SettingsError, match="m: input and output prices are required"):
        load_settings(cwd=tmp_path, env=env)


def test_the_prune_report_of_a_session_uses_its_model_and_cache() -> None:
    chain = Chain()
    chain.msg(user("go"))
    for n in range(4):
        chain.msg(assistant("", calls=[tool_call(f"c{n}", "bash")]))
        chain.msg(tool_result(f"c{n}", chars(3_000)))
    reply = assistant("done")
    reply["timestamp"] = NOW - 1_000  # warm
    chain.msg(reply)
    rules = PruneSettings(protect_tokens=100, minimum_savings=10, cache_aware=False)
    decision = decide_prune(chain.entries, rules, at_ms=NOW)
    assert decision.candidates
    settings = Settings(prune=rules)
    report = prune_cost(chain.entries, decision, settings, at_ms=NOW)
    assert report is not None
    assert session_model(chain.entries) == report.model == "anthropic:claude-sonnet-4-5"
    assert report.before.cache_read_tokens > 0  # the warm cache is read without the prune
    assert report.after.input_tokens < report.before.input_tokens
    assert prune_cost(chain.entries, decide_prune([], rules), settings) is None


def _session(path: Path) -> Path:
    tree = SessionTree.open(path)
    tree.append_message(user("start"))
    for n in range(30):
        tree.append_message(assistant("", calls=[tool_call(f"c{n}", "bash")]))
        tree.append_message(tool_result(f"c{n}", chars(2_000)))
    tree.append_message(assistant("done"))
    return path


def test_the_dry_runs_print_the_report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _session(tmp_path / "s.jsonl")
    out = " ".join(ok("compact", "--dry-run", path).stdout.split())
    assert "The next 10 requests (est.)" in out and "cost (USD)" in out
    assert re.search(r"at anthropic:claude-sonnet-4-5's prices: pays off at request \d+", out)
    monkeypatch.setenv("CONTEXTREE_COST_TURNS", "3")
    monkeypatch.setenv("CONTEXTREE_PRUNING_PROTECT_TOKENS", "1000")
    # Just written: the replies are seconds old, so the cache is warm and holds them back.
    out = " ".join(ok("prune", "--dry-run", path).stdout.split())
    assert out.startswith("Nothing to prune") and "kept for the warm prompt cache" in out
    monkeypatch.setenv("CONTEXTREE_PRUNING_CACHE_AWARE", "false")
    out = " ".join(ok("prune", "--dry-run", path).stdout.split())
    assert "The next 3 requests (est.)" in out and "input tokens" in out
    monkeypatch.setenv("CONTEXTREE_PRICES", "[1]")
    bad = invoke("prune", "--dry-run", path)
    assert bad.exit_code != 0 and "Traceback" not in bad.output
    assert "prices" in bad.output and len(bad.output.strip().splitlines()) == 1


def test_prices_from_a_toml_settings_file(tmp_path: Path) -> None:
    home = tmp_path / "ct"
    home.mkdir()
    (home / "settings.toml").write_text(
        "[prices.claude-sonnet-4-5]\ninput = 3\noutput = 15\ncacheRead = 0.3\ncacheWrite = 6\n"
    )
    loaded = load_settings(cwd=tmp_path, env={"HOME": str(tmp_path), "CONTEXTREE_HOME": str(home)})
    assert loaded.settings.prices["claude-sonnet-4-5"] == ModelPrice(3, 15, 0.3, 6)
    assert loaded.origins["prices"] == str(home / "settings.toml")
