"""``contextree report``: context tokens per turn along the current path, with what events saved."""

from __future__ import annotations

import typer

from contextree.cli.options import FormatOpt, OutputFormat, SessionArg

__all__ = ["register"]


def register(app: typer.Typer) -> None:
    """Add ``report`` to ``app``."""
    from contextree.cli.common import handles_errors

    @app.command()
    @handles_errors
    def report(session: SessionArg, format: FormatOpt = OutputFormat.text) -> None:
        """Chart context tokens per turn along the current path, marking compactions, prunes
        and branch summaries with the tokens each saved."""
        from contextree.cli.common import open_session, print_json, state
        from contextree.cli.report_render import series_json, series_text
        from contextree.report import build_series

        tree = open_session(session)
        series = build_series(list(tree.get_branch()))
        if format is OutputFormat.json:
            print_json(series_json(series))
            return
        state.console.print(series_text(series, width=state.console.width), markup=False)
