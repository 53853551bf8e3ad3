"""``contextree report``: context tokens per turn along the current path, with what events saved."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from contextree.cli.options import FormatOpt, OutputFormat, SessionArg

__all__ = ["register"]


def register(app: typer.Typer) -> None:
    """Add ``report`` to ``app``."""
    from contextree.cli.common import handles_errors

    @app.command()
    @handles_errors
    def report(
        session: SessionArg,
        format: FormatOpt = OutputFormat.text,
        html: Annotated[
            Path | None,
            typer.Option(
                "--html",
                metavar="FILE",
                help="Also write the report as a self-contained HTML page (an SVG chart).",
            ),
        ] = None,
        force: Annotated[
            bool, typer.Option("--force", help="Replace the --html file when it exists.")
        ] = False,
        follow_symlinks: Annotated[
            bool,
            typer.Option(
                "--follow-symlinks",
                help="Write the --html page through a symbolic link (refused without it).",
            ),
        ] = False,
        model: Annotated[
            str | None,
            typer.Option(help="Price savings at this PROVIDER:MODEL (default: the session's)."),
        ] = None,
    ) -> None:
        """Chart context tokens per turn along the current path, marking compactions, prunes
        and branch summaries with the tokens (and money, at a known price) each saved."""
        from contextree.cli.common import effective_settings, open_session, print_json, state
        from contextree.cli.report_render import series_json, series_text
        from contextree.report import build_series, event_money, series_html, session_model
        from contextree.settings.prices import find_price
        from contextree.store.transfer import write_file

        tree = open_session(session)
        path = list(tree.get_branch())
        series = build_series(path)
        priced_at = model or session_model(path)
        price = find_price(priced_at, effective_settings().settings.prices)
        money = event_money(series, price)
        written = None
        if html is not None:
            page = series_html(series, title=str(session)).encode("utf-8")
            written = write_file(html, page, overwrite=force, follow_symlinks=follow_symlinks)
        if format is OutputFormat.json:
            print_json(series_json(series, money, priced_at, price is not None, written))
            return
        text = series_text(series, width=state.console.width, money=money, model=priced_at)
        state.console.print(text, markup=False, soft_wrap=True)
        if written is not None:
            state.console.print(f"wrote {written}", markup=False, soft_wrap=True)
