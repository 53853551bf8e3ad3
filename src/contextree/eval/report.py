"""Survival figures from the runs: overall, per kind, per split, per round."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from contextree.eval.probes import PROBE_KINDS, Probe
from contextree.eval.rounds import SessionRun

__all__ = ["BudgetReport", "EvalReport", "Survival"]


@dataclass(frozen=True, slots=True)
class Survival:
    """``kept`` of ``scored`` probes; survival is 1.0 when nothing was scored (``null`` in
    the JSON: :attr:`share`)."""

    kept: int
    scored: int

    @property
    def survival(self) -> float:
        """The share kept."""
        return self.kept / self.scored if self.scored else 1.0

    @property
    def share(self) -> float | None:
        """The share kept, rounded as the JSON shows it; ``None`` when nothing was scored
        (0 of 0 is no result, not a perfect one)."""
        return round(self.survival, 4) if self.scored else None

    def to_json(self) -> dict[str, Any]:
        """``{survival, kept, scored}``."""
        return {"survival": self.share, "kept": self.kept, "scored": self.scored}


def _survival(probes: Iterable[Probe], scored: set[str], kept: set[str]) -> Survival:
    ids = [p.id for p in probes if p.id in scored]
    return Survival(sum(1 for i in ids if i in kept), len(ids))


@dataclass(frozen=True, slots=True)
class BudgetReport:
    """One budget ("full" or a ratio of the original size) over every session."""

    label: str
    probes: tuple[Probe, ...]
    runs: tuple[SessionRun, ...]

    def _final(self) -> tuple[set[str], set[str]]:
        scored: set[str] = set()
        kept: set[str] = set()
        for run in self.runs:
            if run.rounds:
                scored.update(run.rounds[-1].scored)
                kept.update(run.rounds[-1].kept)
        return scored, kept

    def overall(self) -> Survival:
        """All probes, after the last round."""
        return _survival(self.probes, *self._final())

    def by_kind(self) -> dict[str, Survival]:
        """Each kind's probes, after the last round."""
        scored, kept = self._final()
        kinds = [k for k in PROBE_KINDS if any(p.kind == k for p in self.probes)]
        return {k: _survival((p for p in self.probes if p.kind == k), scored, kept) for k in kinds}

    def split(self, held_out: bool) -> Survival:
        """The held-out phrasings' probes (or the tuning ones), after the last round."""
        scored, kept = self._final()
        return _survival((p for p in self.probes if p.held_out == held_out), scored, kept)

    def per_round(self) -> list[tuple[int, Survival, int]]:
        """(round, survival of the probes scored by then, probes first lost in that round)."""
        count = max((len(run.rounds) for run in self.runs), default=0)
        rows = []
        for index in range(count):
            kept = scored = lost = 0
            for run in self.runs:
                if index >= len(run.rounds):
                    continue
                now = run.rounds[index]
                before = set(run.rounds[index - 1].kept) if index else set()
                earlier_scored = set(run.rounds[index - 1].scored) if index else set()
                kept += len(now.kept)
                scored += len(now.scored)
                # Lost here: kept in the round before, or scored for the first time, and not now.
                lost += sum(
                    1
                    for probe in now.scored
                    if probe not in now.kept and (probe in before or probe not in earlier_scored)
                )
            rows.append((index + 1, Survival(kept, scored), lost))
        return rows

    def context_ratio(self) -> float:
        """The largest context after a final compaction, as a share of its history."""
        ratios = [
            r.rounds[-1].context_tokens / r.rounds[-1].history_tokens
            for r in self.runs
            if r.rounds and r.rounds[-1].history_tokens
        ]
        return max(ratios, default=0.0)

    def lost_probes(self) -> list[Probe]:
        """The probes scored and not kept after the last round."""
        scored, kept = self._final()
        return [p for p in self.probes if p.id in scored and p.id not in kept]

    def to_json(self) -> dict[str, Any]:
        """This budget's figures as JSON (see :meth:`EvalReport.to_json`)."""
        overall = self.overall()
        rounds = self.per_round()
        return {
            "mean_survival": overall.share,
            "kept": overall.kept,
            "scored": overall.scored,
            "kinds": {kind: s.to_json() for kind, s in self.by_kind().items()},
            "held_out": _split_json(self.split(True)),
            "tuning": _split_json(self.split(False)),
            "per_round": [
                {
                    "round": n,
                    "survival": s.share,
                    "kept": s.kept,
                    "scored": s.scored,
                    "lost": lost,
                }
                for n, s, lost in rounds
            ],
            "lost_in_rounds": [n for n, _, lost in rounds if lost],
            "max_context_ratio": round(self.context_ratio(), 4),
            "lost": [
                {"id": p.id, "kind": p.kind, "values": list(p.values)} for p in self.lost_probes()
            ],
        }


def _split_json(s: Survival) -> dict[str, Any]:
    return {"mean_survival": s.share, "kept": s.kept, "scored": s.scored}


@dataclass(frozen=True, slots=True)
class EvalReport:
    """The retention eval's result: the full budget first, then each ratio."""

    model: str
    rounds: int
    seed: int | None
    sessions: int
    budgets: tuple[BudgetReport, ...]
    check: str = "visible"
    """How a probe was scored: ``visible`` (its values in what the model sees) or
    ``visible_or_recalled`` (or in what the recall tool shows, ``eval --recall``)."""

    @property
    def full(self) -> BudgetReport:
        """The full budget's figures."""
        return self.budgets[0]

    def to_json(self) -> dict[str, Any]:
        """The figures as JSON: ``mean_survival``, ``kinds``, ``held_out`` and ``rounds`` are
        the full budget's; ``budgets`` has every budget (``"full"``, ``"0.2"``)."""
        full = self.full.to_json()
        return {
            "model": self.model,
            "rounds": self.rounds,
            "seed": self.seed,
            "sessions": self.sessions,
            "check": self.check,
            "probes": len(self.full.probes),
            **{k: v for k, v in full.items() if k != "lost"},
            "budgets": {b.label: b.to_json() for b in self.budgets},
        }


def budget_label(ratio: float | None) -> str:
    """``"full"`` for the full budget, else the ratio as written (``"0.2"``)."""
    return "full" if ratio is None else f"{ratio:g}"
