"""Settings: typed values and defaults, loaded from files, the environment and flags."""

from contextree.settings.load import KEYS, LoadedSettings, Settings, load_settings
from contextree.settings.schema import (
    BranchSummarySettings,
    CompactionSettings,
    PruneSettings,
    RetrySettings,
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
