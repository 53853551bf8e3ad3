"""``python -m bench``: generate sessions, measure, print a table (and optionally JSON)."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from bench.importable import ensure_importable

if TYPE_CHECKING:
    from rich.table import Table

    from bench.core import Report


def render(report: Report) -> Table:
    """The results as a rich table: one row per metric, one column per session size."""
    from rich.table import Table

    from bench.metrics import fmt as _fmt

    sizes = list(report.sessions)
    table = Table(title="contextree benchmarks", title_justify="left")
    table.add_column("measurement")
    for size in sizes:
        info = report.sessions[size]
        table.add_column(f"{size}\n({info['entries']:,} entries)", justify="right")
    table.add_column("target")
    table.add_column("result")
    for metric in report.metrics:
        verdict, note = metric.status()
        cells = [
            f"{_fmt(metric.values[s])} {metric.unit}" if s in metric.values else "-" for s in sizes
        ]
        style = {"PASS": "green", "MISS": "bold red"}.get(verdict, "")
        result = f"[{style}]{verdict}[/]" if verdict else ""
        if note:
            result += f" [dim]({note})[/]"
        target = metric.target.describe(metric.unit) if metric.target else ""
        table.add_row(metric.label, *cells, target, result)
    machine = report.machine
    table.caption = (
        f"{machine['cpu']}, {machine['cpus']} CPUs, {machine['implementation']} "
        f"{machine['python']}; leaf path "
        + ", ".join(f"{s}: {report.sessions[s]['leaf_path_length']:,} entries" for s in sizes)
    )
    table.caption_justify = "left"
    return table


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench",
        description="Benchmark contextree on generated 10k- and 100k-entry sessions.",
    )
    parser.add_argument("--quick", action="store_true", help="only the 10k session (smoke test)")
    parser.add_argument("--json", type=Path, metavar="OUT", help="also write the results here")
    parser.add_argument("--seed", type=int, default=1, help="seed of the generated sessions")
    parser.add_argument(
        "--dir",
        type=Path,
        help="generate the sessions here and keep them (default: a temp dir, removed)",
    )
    parser.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    args = parser.parse_args(argv)

    ensure_importable()
    from rich.console import Console

    from bench.core import run

    console = Console(highlight=False)
    if not console.is_terminal:
        console = Console(highlight=False, width=120)
    errors = Console(stderr=True, highlight=False)
    sizes = ["10k"] if args.quick else ["10k", "100k"]

    def progress(message: str) -> None:
        errors.print(f"[dim]… {message}[/]")

    if args.dir is not None:
        args.dir.mkdir(parents=True, exist_ok=True)
        report = run(sizes, args.dir, seed=args.seed, keep=True, progress=progress)
    else:
        with tempfile.TemporaryDirectory(prefix="contextree-bench-") as tmp:
            report = run(sizes, Path(tmp), seed=args.seed, progress=progress)
    console.print(render(report))
    if args.json is not None:
        args.json.write_text(json.dumps(report.to_json(), indent=2) + "\n", encoding="utf-8")
        errors.print(f"[dim]wrote {args.json}[/]")
    misses = [m.key for m in report.metrics if m.status()[0] == "MISS"]
    return 1 if misses and args.strict else 0


if __name__ == "__main__":
    sys.exit(main())
