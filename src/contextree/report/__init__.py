"""A session's life along its current path: context per turn and what each event saved."""

from contextree.report.html import series_html
from contextree.report.money import EventMoney, event_money, session_model
from contextree.report.series import ReportEvent, SessionSeries, TurnPoint, build_series

__all__ = [
    "EventMoney",
    "ReportEvent",
    "SessionSeries",
    "TurnPoint",
    "build_series",
    "event_money",
    "series_html",
    "session_model",
]
