"""When automatic compaction fires (pi-behaviour.md §4.3, with pi's reserve rule)."""

from __future__ import annotations

import math

import pytest

from contextree.tokens.thresholds import resolve_threshold_tokens, should_compact


def test_reserve_rule_is_window_minus_reserve() -> None:
    # pi's rule, not the fork's 15 % floor (which would give 85 000 here).
    assert resolve_threshold_tokens(100_000, reserve_tokens=10_000) == 90_000
    assert should_compact(90_001, 100_000, reserve_tokens=10_000)
    assert not should_compact(90_000, 100_000, reserve_tokens=10_000)
    assert not should_compact(86_000, 100_000, reserve_tokens=10_000)


def test_reserve_rule_with_a_large_reserve() -> None:
    assert should_compact(70_001, 100_000, reserve_tokens=30_000)
    assert not should_compact(70_000, 100_000, reserve_tokens=30_000)


def test_default_reserve_is_16384() -> None:
    assert should_compact(200_000 - 16_384 + 1, 200_000)
    assert not should_compact(200_000 - 16_384, 200_000)


def test_threshold_percent() -> None:
    assert resolve_threshold_tokens(100_000, reserve_tokens=10_000, threshold_percent=90) == 90_000
    assert should_compact(90_001, 100_000, reserve_tokens=30_000, threshold_percent=90)
    assert not should_compact(89_000, 100_000, reserve_tokens=30_000, threshold_percent=90)


@pytest.mark.parametrize(("percent", "expected"), [(0.5, 1_000), (150, 99_000), (99.9, 99_000)])
def test_threshold_percent_is_clamped_to_1_to_99(percent: float, expected: int) -> None:
    assert resolve_threshold_tokens(100_000, reserve_tokens=0, threshold_percent=percent) == (
        expected
    )


def test_threshold_percent_rounds_down() -> None:
    assert resolve_threshold_tokens(1_001, reserve_tokens=0, threshold_percent=50) == 500


def test_threshold_tokens_take_priority() -> None:
    def compacts(tokens: int) -> bool:
        return should_compact(
            tokens, 100_000, reserve_tokens=10_000, threshold_percent=50, threshold_tokens=42_000
        )

    threshold = resolve_threshold_tokens(
        100_000, reserve_tokens=10_000, threshold_percent=50, threshold_tokens=42_000
    )
    assert threshold == 42_000
    assert compacts(42_001)
    assert not compacts(42_000)


def test_threshold_tokens_are_kept_inside_the_window() -> None:
    assert resolve_threshold_tokens(100_000, reserve_tokens=0, threshold_tokens=500_000) == 99_999
    assert resolve_threshold_tokens(100_000, reserve_tokens=0, threshold_tokens=0.5) == 1


@pytest.mark.parametrize("unset", [-1, 0, math.nan, math.inf, -math.inf])
def test_sentinels_and_non_finite_values_mean_unset(unset: float) -> None:
    threshold = resolve_threshold_tokens(
        100_000, reserve_tokens=10_000, threshold_percent=unset, threshold_tokens=unset
    )
    assert threshold == 90_000


def test_disabled_never_compacts() -> None:
    assert not should_compact(10**9, 100_000, enabled=False)


@pytest.mark.parametrize("window", [0, -5])
def test_unknown_context_window_never_compacts(window: int) -> None:
    assert not should_compact(10**9, window)
    assert not should_compact(10**9, window, threshold_tokens=10)
