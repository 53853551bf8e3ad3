"""One set of summary options for every summary: compactions and branch summaries alike.

``compact()``, ``compact_session()`` and ``navigate_tree()`` take a :class:`SummaryOptions`;
:func:`summary_options` builds it from :class:`~contextree.settings.load.Settings` (plus what a
command line or a caller overrides), so the CLI's ``compact``, ``navigate``, the tree browser
and the agent runtime choose the model window, the prompts, the redactor and the budgets the
same way (issue 12 point 3: they had drifted apart).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypedDict, cast

from contextree.compaction.budget import summary_token_budget
from contextree.errors import SettingsError
from contextree.security.redact import DEFAULT_REDACTOR, Redactor, environment_secrets
from contextree.tokens.estimate import get_estimator

if TYPE_CHECKING:
    from contextree.settings.schema import CompactionSettings, Settings
    from contextree.tokens.estimate import TokenEstimator

__all__ = [
    "SummaryKeywords",
    "SummaryOptions",
    "check_prompts_dir",
    "summary_model",
    "summary_options",
]


@dataclass(frozen=True, slots=True)
class SummaryOptions:
    """How a summary is asked for; the defaults are the library's (built-in redaction only).

    ``None`` in ``summary_tokens``, ``fallback_to_offline`` and ``record_facts`` means "as the
    preparation's ``compaction.*`` settings say".
    """

    custom_instructions: str | None = None
    """What the summary should focus on (``Additional focus: ...``)."""
    replace_instructions: bool = False
    """Branch summaries: send ``custom_instructions`` instead of the branch prompt."""
    prompts_dir: Path | None = None
    """A directory whose ``<name>.md`` files override our prompts."""
    redactor: Redactor | None = DEFAULT_REDACTOR
    """Blanks secrets out of everything sent to a summarizer; ``None`` sends it as it is."""
    context_window: int | None = None
    """The summarizing model's window in tokens; ``None``: looked up (branch) or unknown."""
    reasoning: str | None = None
    """Reasoning effort asked of the summarizing model, if it has one."""
    estimator: TokenEstimator | None = None
    """Token estimator for cut points, budgets and ``tokensAfter``; default pi's chars/4
    (:func:`summary_options` takes the one ``tokens.estimator`` names)."""
    summary_tokens: int | None = None
    """The compaction summary's budget (``max_tokens``); ``None`` or ``<= 0``: computed."""
    fallback_to_offline: bool | None = None
    """When the model fails, summarize offline instead of raising."""
    record_facts: bool | None = None
    """Append the offline summarizer's recorded facts to a model's summary."""
    short_summary: bool = True
    """Also write the short display summary of a compaction."""
    branch_reserve_tokens: int = 16384
    """``branchSummary.reserveTokens``: room kept for the branch prompt and the answer."""

    def summary_budget(self, settings: CompactionSettings) -> int:
        """The compaction summary's token budget: ``summary_tokens`` when set, else
        :func:`~contextree.compaction.budget.summary_token_budget` of ``settings`` and the
        window (what ``compact()`` asks for and ``compact --dry-run`` prints)."""
        if self.summary_tokens is not None and self.summary_tokens > 0:
            return self.summary_tokens
        return summary_token_budget(settings, context_window=self.context_window)


class SummaryKeywords(TypedDict, total=False):
    """The separate keywords ``compact()`` and friends took before :class:`SummaryOptions`;
    still accepted, and applied on top of ``options``."""

    custom_instructions: str | None
    replace_instructions: bool
    prompts_dir: Path | None
    redactor: Redactor | None
    context_window: int | None
    reasoning: str | None
    estimator: TokenEstimator | None
    summary_tokens: int | None
    fallback_to_offline: bool | None
    record_facts: bool | None
    short_summary: bool


def resolve_options(options: SummaryOptions | None, keywords: SummaryKeywords) -> SummaryOptions:
    """``options`` (default :class:`SummaryOptions`) with the old-style keywords applied: the
    one place they are read, at the public functions that still accept them; everything
    below gets the resolved :class:`SummaryOptions`."""
    base = options or SummaryOptions()
    return replace(base, **keywords) if keywords else base


def take_summary_keywords(keywords: dict[str, Any]) -> SummaryKeywords:
    """Remove the :class:`SummaryOptions` fields from ``keywords`` (a caller's ``**kwargs``
    mixing them with other arguments) and return them."""
    names = {option.name for option in fields(SummaryOptions)}
    taken = {name: keywords.pop(name) for name in list(keywords) if name in names}
    return cast("SummaryKeywords", taken)


def summary_model(settings: Settings) -> str | None:
    """The summarizing model ``settings`` select: ``model`` (flag, ``CONTEXTREE_MODEL`` or a
    settings file), else ``compaction.remoteEndpoint``; ``None`` means the offline summarizer."""
    if settings.model:
        return str(settings.model)
    endpoint = settings.compaction.remote_endpoint
    return f"remote:{endpoint}" if endpoint else None


def check_prompts_dir(prompts_dir: Path | None) -> None:
    """Refuse a prompts directory (``--prompts-dir``, ``prompts.dir``) that is not one: its
    files would silently not replace the built-in prompts.

    Raises:
        SettingsError: naming the directory.
    """
    if prompts_dir is None or prompts_dir.is_dir():
        return
    problem = "is not a directory" if prompts_dir.exists() else "does not exist"
    raise SettingsError(
        "--prompts-dir / prompts.dir",
        None,
        f'"{prompts_dir}" {problem} (give a directory of <name>.md files that replace the '
        "built-in prompts)",
    )


def summary_options(
    settings: Settings,
    *,
    model: str | None = None,
    custom_instructions: str | None = None,
    replace_instructions: bool = False,
    context_window: int | None = None,
    redactor: Redactor | Literal["settings"] | None = "settings",
    environ: Mapping[str, str] | None = None,
) -> SummaryOptions:
    """The summary options ``settings`` ask for.

    Args:
        model: the summarizing model's spec; its window (``contextWindows`` first, then the
            registry) plans the summary when ``context_window`` is not given; ``None`` (the
            offline summarizer): no window.
        redactor: ``"settings"`` (default) builds it from ``redaction.*`` plus the values of
            secret-looking variables in ``environ`` (default ``os.environ``); ``None`` when
            ``redaction.enabled`` is off. A :class:`Redactor` or ``None`` is used as given.

    The estimator is the one ``tokens.estimator`` names (it measures the cut point, the
    summary budget's history and ``tokensAfter``, as the cost report does).
    """
    if context_window is None and model:
        from contextree.llm.registry import context_window as lookup_window

        context_window = lookup_window(model, settings.context_windows)
    if redactor == "settings":
        env = os.environ if environ is None else environ
        redactor = Redactor.from_settings(settings.redaction, literals=environment_secrets(env))
    return SummaryOptions(
        custom_instructions=custom_instructions,
        replace_instructions=replace_instructions,
        prompts_dir=Path(settings.prompts_dir) if settings.prompts_dir else None,
        redactor=redactor,
        context_window=context_window,
        estimator=get_estimator(settings.estimator),
        # summary_tokens, fallback_to_offline and record_facts stay None: they follow the
        # compaction settings the preparation was made with, so a plan and its run agree.
        branch_reserve_tokens=settings.branch_summary.reserve_tokens,
    )
