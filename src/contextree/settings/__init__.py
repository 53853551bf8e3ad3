"""Settings: typed values and defaults, loaded from files, the environment and flags.

The schema (every settings type and the key table) is :mod:`contextree.settings.schema`;
:mod:`contextree.settings.load` reads and merges the sources into it.
"""

from contextree.settings.load import load_settings
from contextree.settings.schema import (
    KEYS,
    BranchSummarySettings,
    CompactionSettings,
    LoadedSettings,
    PruneSettings,
    RetrySettings,
    Settings,
)

__all__ = [
    "KEYS",
    "BranchSummarySettings",
    "CompactionSettings",
    "LoadedSettings",
    "PruneSettings",
    "RetrySettings",
    "Settings",
    "load_settings",
]
