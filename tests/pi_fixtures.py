"""Where the real pi session files live: ``../shared/pi-fixtures`` beside the repository.

They are read in place (never copied into the project); CI has ``shared/`` at the same place.
Where the whole folder is absent (a fresh clone) the tests that need it skip with one reason
(``pi_fixture_guard`` at collection, and :func:`pi_fixture` itself for whatever the guard's
reading of the source misses, such as a helper imported under another name); a single missing
file in a folder that exists fails loudly.

``CONTEXTREE_TEST_PI_FIXTURES`` points elsewhere (the test that runs tests without the folder
uses it).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

PI_FIXTURES = Path(
    os.environ.get("CONTEXTREE_TEST_PI_FIXTURES")
    or Path(__file__).resolve().parents[1].parent / "shared" / "pi-fixtures"
)
REASON = f"needs pi's session files in {PI_FIXTURES} (../shared/pi-fixtures), which is absent"


def pi_fixture(name: str) -> Path:
    """Path of a fixture file: the test skips (with :data:`REASON`) when the whole folder is
    absent, and fails when the folder is there without this file."""
    if not PI_FIXTURES.is_dir():
        pytest.skip(REASON)
    path = PI_FIXTURES / name
    if not path.is_file():
        raise FileNotFoundError(
            f"pi fixture {path} is missing; tests need ../shared beside the repo"
        )
    return path


def pi_fixture_or_skip(name: str) -> Path:
    """Path of a fixture file, or skip the test (with the reason) when it is not there.

    For tests that only add a check on real data to others that build their own files.
    """
    path = PI_FIXTURES / name
    if not path.is_file():
        pytest.skip(f"pi fixture {path} is missing (../shared/pi-fixtures beside the repo)")
    return path
