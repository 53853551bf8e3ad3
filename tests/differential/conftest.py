"""The real pi and oh-my-pi for the differential tests (see ``installs``)."""

from __future__ import annotations

import pytest

from differential.installs import Install, find_omp, find_pi, require


@pytest.fixture(scope="session")
def pi() -> Install:
    """pi 0.73.1 (node); skips, or fails in CI, when it is not installed."""
    return require(find_pi(), "PI_UNAVAILABLE")


@pytest.fixture(scope="session")
def omp() -> Install:
    """oh-my-pi 18.2.3 (bun); skips, or fails in CI, when it is not installed."""
    return require(find_omp(), "OMP_UNAVAILABLE")
