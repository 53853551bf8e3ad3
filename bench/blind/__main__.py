"""``python -m bench.blind``: the retention eval on sessions written blind to the summarizer.

    python -m bench.blind check [--split SPLIT|all]   # every probe placed, once
    python -m bench.blind [--split SPLIT|all] [--rounds 5] [--lost] [--auto] [--json OUT]
    python -m bench.blind export --split dev --to DIR   # pi session files and probes files

``dev`` to ``dev8`` sessions may be read when the summarizer or recall is
changed; ``test``, ``fresh`` to ``fresh12`` sessions are only ever scored (their
figures are what we quote, see bench/blind/README.md). ``--lost`` lists the probes lost (only
for the readable splits: reading the others would tune on them).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from bench.blind.script import Script, ScriptError, load_script

HERE = Path(__file__).resolve().parent
SPLITS = (
    "dev",
    "test",
    "fresh",
    "fresh2",
    "fresh3",
    "dev2",
    "fresh4",
    "dev3",
    "dev4",
    "fresh5",
    "dev5",
    "fresh6",
    "fresh7",
    "fresh8",
    "fresh9",
    "dev6",
    "fresh10",
    "dev7",
    "fresh11",
    "fresh12",
    "dev8",
)
READABLE = ("dev", "dev2", "dev3", "dev4", "dev5", "dev6", "dev7", "dev8")
"""The splits that may be read to find what is lost (``--lost``); the others are only scored."""
HELD_OUT = tuple(split for split in SPLITS if split not in READABLE)
"""The splits only ever scored, in the order they were written."""


def scripts(split: str) -> list[Script]:
    """The scripts of ``split`` (``all``: every split), by file name."""
    names = SPLITS if split == "all" else (split,)
    return [load_script(path) for name in names for path in sorted((HERE / name).glob("*.json"))]


def problems(script: Script) -> list[str]:
    """Probes the eval cannot use: placed nowhere, or whose values come back in a later message
    (that message would keep them visible whatever the summary says)."""
    from contextree.context.convert import convert_to_llm
    from contextree.eval.score import context_text, values_found

    texts = [context_text(convert_to_llm([message])) for message in script.messages]  # type: ignore[list-item]
    found = []
    for probe in script.probes:
        where = [i for i, text in enumerate(texts) if values_found(probe, text)]
        if not where:
            found.append(
                f"{probe.id} ({probe.kind}): values {list(probe.values)} in no one message"
            )
        elif len(where) > 1:
            found.append(f"{probe.id} ({probe.kind}): values also in later message(s) {where[1:]}")
        for value in probe.values:
            # Matched as the eval matches (values_found: case and spacing ignored).
            alone = replace(probe, values=(value,))
            if sum(values_found(alone, text) for text in texts) > 1:
                found.append(f"{probe.id}: value {value!r} appears in more than one message")
    return found


def _check(split: str) -> int:
    bad = 0
    for script in scripts(split):
        found = problems(script)
        bad += len(found)
        print(
            f"{script.name}: {len(script.messages)} messages, {len(script.probes)} probes"
            + ("" if found else ", ok")
        )
        for line in found:
            print(f"  {line}")
    return 1 if bad else 0


def _corpus(chosen: Sequence[Script], rounds: int) -> list:  # type: ignore[type-arg]
    from contextree.eval.probes_file import session_with_probes

    return [session_with_probes(s.name, s.messages, s.probes, rounds) for s in chosen]  # type: ignore[arg-type]


def blind_reports(split: str, rounds: int = 5) -> list[tuple[str, Any]]:
    """The eval's reports on ``split`` (see :func:`_reports`)."""
    return _reports(scripts(split), rounds)


def _reports(
    chosen: Sequence[Script], rounds: int, *, auto: bool = False
) -> list[tuple[str, Any]]:
    """The eval's report with what the model sees, then with recall's first hits too, and
    with ``auto`` what ``recall.auto`` adds to a user message asking after each probe."""
    from contextree.compaction import OfflineSummarizer
    from contextree.eval import run_sessions, visible
    from contextree.eval.recall_check import (
        visible_or_asked,
        visible_or_auto_recalled,
        visible_or_recalled,
    )

    checks: list[tuple[str, Any]] = [("", visible), (" +recall", visible_or_recalled)]
    if auto:
        checks.append((" +auto", visible_or_auto_recalled))
        checks.append((" +ask", visible_or_asked))
    reports = []
    for label, kept in checks:
        report = asyncio.run(
            run_sessions(
                _corpus(chosen, rounds),
                OfflineSummarizer(),
                rounds=rounds,
                kept=kept,
                model="offline",
            )
        )
        reports.append((label, report))
    return reports


def _run(split: str, rounds: int, lost: bool, out: Path | None, auto: bool = False) -> int:
    chosen = scripts(split)
    reports = _reports(chosen, rounds, auto=auto)
    full = reports[0][1].full
    print(
        f"blind sessions ({split}): {len(chosen)} sessions, {len(full.probes)} probes, "
        f"{rounds} rounds, offline summarizer"
    )
    columns = [(f"{b.label}{label}", b) for label, report in reports for b in report.budgets]
    print(f"{'kind':<12}" + "".join(f"{name:>18}" for name, _ in columns))
    kinds = sorted({p.kind for p in full.probes})
    for kind in [*kinds, "all"]:
        cells = []
        for _, budget in columns:
            s = budget.overall() if kind == "all" else budget.by_kind().get(kind)
            cells.append(f"{s.survival:.2f} ({s.kept}/{s.scored})" if s and s.scored else "-")
        print(f"{kind:<12}" + "".join(f"{c:>18}" for c in cells))
    if lost:
        domain_of = {p.id: s.domain for s in chosen for p in s.probes}
        for name, budget in columns:
            for probe in budget.lost_probes():
                print(
                    f"lost at {name}: {probe.id} [{probe.kind}, "
                    f"{domain_of.get(probe.id, '')}] {list(probe.values)}  {probe.text}"
                )
    if out is not None:
        data = {label.strip() or "visible": report.to_json() for label, report in reports}
        out.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return 0


def export(split: str, out: Path) -> list[Path]:
    """Write each script of ``split`` as a pi session file ``OUT/<name>.jsonl`` and its probes
    as ``OUT/<name>.probes.jsonl`` (for ``contextree eval --session ... --probes ...``, a
    model summarizer, or pi itself); returns the session files."""
    from contextree.session.tree import SessionTree

    out.mkdir(parents=True, exist_ok=True)
    written = []
    for script in scripts(split):
        path = out / f"{script.name}.jsonl"
        if path.exists():
            raise ScriptError(f"{path}: exists; export writes new files only")
        tree = SessionTree.open(str(path), cwd=f"/blind/{script.name}")
        for message in script.messages:
            tree.append_message(message)  # type: ignore[arg-type]
        probes = [
            {"id": p.id, "kind": p.kind, "values": list(p.values), "text": p.text}
            for p in script.probes
        ]
        lines = "".join(json.dumps(p, ensure_ascii=False) + "\n" for p in probes)
        (out / f"{script.name}.probes.jsonl").write_text(lines, encoding="utf-8")
        written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.blind", description=__doc__.split("\n")[0]
    )
    parser.add_argument("command", nargs="?", default="run", choices=("run", "check", "export"))
    parser.add_argument(
        "--split", choices=(*SPLITS, "all"), help="run: test by default; export: required"
    )
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--lost", action="store_true", help="list lost probes (dev to dev8 only)"
    )
    parser.add_argument(
        "--auto",
        action="store_true",
        help="also count what recall.auto adds to a user message asking after each probe: "
        "its planted sentence (+auto) and the user's own question where one was written (+ask)",
    )
    parser.add_argument("--json", type=Path, dest="out")
    parser.add_argument("--to", type=Path, help="export: the directory to write to")
    args = parser.parse_args(argv)
    try:
        if args.command == "check":
            return _check(args.split or "all")
        if args.command == "export":
            # Never the held-out split by default: exporting it is a choice.
            if args.to is None or args.split is None:
                parser.error("export needs --split and --to DIR")
            for path in export(args.split, args.to):
                print(path)
            return 0
        split = args.split or "test"
        if args.lost and split not in READABLE:
            parser.error(
                "--lost reads the probes: only for --split "
                "dev, dev2, dev3, dev4, dev5, dev6, dev7 or dev8"
            )
        return _run(split, args.rounds, args.lost, args.out, args.auto)
    except ScriptError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
