"""The prompt texts sent to summarizer models, shipped as package data in ``prompts/*.md``.

The texts are our own words; the facts they ask for follow pi's prompts (pi-behaviour.md §7.3).
A user may replace any of them by putting a file with the same name in an overrides directory,
which the caller passes in (the library never reads the environment to find it).

Names and what they are for:

- ``system``: the system prompt of every summarization call.
- ``initial-summary``: first history summary (sections Goal ... Critical Context).
- ``update-summary``: merge newer messages into the ``<previous-summary>`` block.
- ``turn-prefix``: summary of the start of a turn whose end is kept verbatim.
- ``short-summary``: two or three first-person sentences describing the changes.
- ``branch-summary``: summary of a branch the user left (§9.3).
- ``branch-preamble``: the line put before a branch summary; the caller joins it to the
  summary with a blank line.
- ``auto-continue``: the synthetic prompt that asks the agent to resume after a compaction.
"""

from __future__ import annotations

import functools
from importlib import resources
from pathlib import Path
from typing import Final

__all__ = ["PROMPT_NAMES", "load_prompt"]

PROMPT_NAMES: Final = (
    "system",
    "initial-summary",
    "update-summary",
    "turn-prefix",
    "short-summary",
    "branch-summary",
    "branch-preamble",
    "auto-continue",
)
"""Every prompt template name, without the ``.md`` suffix."""


def load_prompt(name: str, *, overrides_dir: Path | None = None) -> str:
    """Return the text of prompt ``name``, without its trailing newlines.

    Args:
        name: one of :data:`PROMPT_NAMES`.
        overrides_dir: a directory whose ``<name>.md``, when it exists, replaces the built-in
            text.

    Raises:
        ValueError: ``name`` is not a known prompt name.
    """
    if name not in PROMPT_NAMES:
        known = ", ".join(PROMPT_NAMES)
        raise ValueError(f'unknown prompt "{name}"; expected one of: {known}')
    if overrides_dir is not None:
        override = overrides_dir / f"{name}.md"
        if override.is_file():
            return override.read_text(encoding="utf-8").rstrip("\n")
    return _builtin_prompt(name)


@functools.cache
def _builtin_prompt(name: str) -> str:
    # The package data never changes while the process runs, so one read per name is enough.
    path = resources.files("contextree.compaction").joinpath("prompts", f"{name}.md")
    return path.read_text(encoding="utf-8").rstrip("\n")
