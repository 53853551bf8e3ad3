"""A session's life along its current path: context per turn and what each event saved."""

from contextree.report.series import ReportEvent, SessionSeries, TurnPoint, build_series

__all__ = ["ReportEvent", "SessionSeries", "TurnPoint", "build_series"]
