"""Where the real pi session files live: ``../shared/pi-fixtures`` beside the repository.

They are read in place (never copied into the project); CI has ``shared/`` at the same place.
Where the whole folder is absent (a fresh clone) the tests that need it skip with one reason
(``pi_fixture_guard``); a single missing file in a folder that exists fails loudly.
"""

from __future__ import annotations

from pathlib import Path

PI_FIXTURES = Path(__file__).resolve().parents[1].parent / "shared" / "pi-fixtures"


def pi_fixture(name: str) -> Path:
    """Path of a fixture file; raises when ``../shared/pi-fixtures`` is not there."""
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
    import pytest

    path = PI_FIXTURES / name
    if not path.is_file():
        pytest.skip(f"pi fixture {path} is missing (../shared/pi-fixtures beside the repo)")
    return path
