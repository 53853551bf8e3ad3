"""``contextree eval``: the retention eval, on the generated corpus or on a session of yours."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from contextree.cli.options import BaseUrlOpt, FormatOpt, InstructionsOpt, OutputFormat

__all__ = ["register"]


EvalModelOpt = Annotated[
    str | None,
    typer.Option(
        "--model",
        "-m",
        help="The summarizer to measure: offline (the default, whatever the settings say) "
        "or provider:model.",
    ),
]


def register(app: typer.Typer) -> None:
    from contextree.cli.common import fail, handles_errors, print_json, state

    @app.command("eval")
    @handles_errors
    def eval_(
        model: EvalModelOpt = None,
        base_url: BaseUrlOpt = None,
        rounds: Annotated[
            int, typer.Option(min=1, max=50, help="Compactions per session, new turns between.")
        ] = 5,
        sessions: Annotated[
            int, typer.Option(min=1, max=500, help="Generated sessions (five domains).")
        ] = 35,
        seed: Annotated[int, typer.Option(help="Seed of the generated corpus.")] = 25,
        ratio: Annotated[
            float,
            typer.Option(
                min=0.01,
                max=1.0,
                help="Also run with the context at most this share of the original size.",
            ),
        ] = 0.2,
        session: Annotated[
            Path | None,
            typer.Option("--session", help="Your own session file instead of the corpus."),
        ] = None,
        probes: Annotated[
            Path | None,
            typer.Option(
                "--probes",
                help='JSON Lines, one probe a line: {"kind": "fact", "values": ["..."]}.',
            ),
        ] = None,
        instructions: InstructionsOpt = None,
        recall: Annotated[
            bool,
            typer.Option(
                "--recall",
                help="Also count a probe kept when the recall tool's answer shows its values.",
            ),
        ] = False,
        format: FormatOpt = OutputFormat.text,
    ) -> None:
        """Measure what summaries keep: planted items still visible after N compactions."""
        import asyncio

        from contextree.cli import render
        from contextree.cli.models import make_client
        from contextree.eval import build_corpus, run_sessions, visible
        from contextree.eval.probes_file import branch_messages, load_probes, session_with_probes
        from contextree.eval.recall_check import visible_or_recalled

        if (session is None) != (probes is None):
            raise fail("--session and --probes go together: a session and its probes", 2)
        client = make_client(model, base_url=base_url)
        if session is not None and probes is not None:
            from contextree.cli.common import open_session

            messages = branch_messages(open_session(session))
            corpus = [session_with_probes(session.name, messages, load_probes(probes), rounds)]
        else:
            corpus = build_corpus(sessions=sessions, rounds=rounds, seed=seed)
        with state.console.status(f"Compacting {len(corpus)} sessions with {client.name}..."):
            report = asyncio.run(
                run_sessions(
                    corpus,
                    client,
                    rounds=rounds,
                    ratios=(None, ratio),
                    kept=visible_or_recalled if recall else visible,
                    instructions=instructions,
                    model=model or "offline",
                    seed=None if session else seed,
                )
            )
        if format is OutputFormat.json:
            print_json(report.to_json())
            return
        state.console.print(render.eval_report(report))
