"""A benchmark row (:class:`Metric`), the target it is held to, and the report of a run.

Apart from :mod:`bench.core` so that the integration benchmarks can declare their rows without
importing the module that imports them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["Metric", "Report", "Target", "fmt"]


@dataclass(frozen=True, slots=True)
class Target:
    """``value <op> limit`` must hold at ``size`` (``None``: at every size measured)."""

    op: str
    limit: float
    size: str | None = None

    def holds(self, value: float) -> bool:
        if self.op == ">=":
            return value >= self.limit
        return value <= self.limit if self.op == "<=" else value < self.limit

    def describe(self, unit: str) -> str:
        where = f" @ {self.size}" if self.size else ""
        return f"{self.op} {fmt(self.limit)} {unit}{where}"


@dataclass(slots=True)
class Metric:
    key: str
    label: str
    unit: str
    values: dict[str, float] = field(default_factory=dict)
    target: Target | None = None

    def status(self) -> tuple[str, str]:
        """``("PASS" | "MISS" | "", note)`` judged on the sizes the target names."""
        if self.target is None or not self.values:
            return "", ""
        if self.target.size is None:
            # The worst size: the smallest value for a floor (">="), the largest otherwise.
            values = self.values.values()
            worst = min(values) if self.target.op == ">=" else max(values)
            return ("PASS" if self.target.holds(worst) else "MISS"), ""
        if self.target.size in self.values:
            value = self.values[self.target.size]
            return ("PASS" if self.target.holds(value) else "MISS"), ""
        size, value = list(self.values.items())[-1]
        verdict = "PASS" if self.target.holds(value) else "MISS"
        return verdict, f"at {size} only"


@dataclass(slots=True)
class Report:
    machine: dict[str, Any]
    sessions: dict[str, dict[str, Any]]
    metrics: list[Metric]

    def to_json(self) -> dict[str, Any]:
        rows = []
        for metric in self.metrics:
            verdict, note = metric.status()
            rows.append(
                {
                    "key": metric.key,
                    "label": metric.label,
                    "unit": metric.unit,
                    "values": metric.values,
                    "target": None
                    if metric.target is None
                    else {
                        "op": metric.target.op,
                        "limit": metric.target.limit,
                        "size": metric.target.size,
                    },
                    "status": verdict or None,
                    "note": note or None,
                }
            )
        return {"machine": self.machine, "sessions": self.sessions, "metrics": rows}


def fmt(value: float) -> str:
    if value >= 100:
        return f"{value:,.0f}"
    if value >= 10:
        return f"{value:.1f}"
    if value >= 1:
        return f"{value:.2f}"
    return f"{value:.3f}"
