"""The retention eval: how much of what matters survives rounds of compaction.

A generated corpus of sessions (coding, ops, data analysis, writing, support) carries planted
probes of ten kinds in many phrasings; each session is compacted over N rounds with new turns in
between, at the full budget and at 20% of the original size, and a probe counts as kept when its
specific values appear in what the model would see (:func:`visible`, replaceable). A held-out
split of phrasings that no unit test of the summarizer uses is scored separately.
"""

from __future__ import annotations

from contextree.eval.corpus import EvalSession, PlantedProbe, build_corpus
from contextree.eval.probes import PROBE_KINDS, Probe, ProbeKind
from contextree.eval.probes_file import ProbesFileError, load_probes, session_with_probes
from contextree.eval.report import BudgetReport, EvalReport, Survival
from contextree.eval.run import DEFAULT_RATIOS, run_eval, run_sessions
from contextree.eval.score import KeptCheck, values_found, visible

__all__ = [
    "DEFAULT_RATIOS",
    "PROBE_KINDS",
    "BudgetReport",
    "EvalReport",
    "EvalSession",
    "KeptCheck",
    "PlantedProbe",
    "Probe",
    "ProbeKind",
    "ProbesFileError",
    "Survival",
    "build_corpus",
    "load_probes",
    "run_eval",
    "run_sessions",
    "session_with_probes",
    "values_found",
    "visible",
]
