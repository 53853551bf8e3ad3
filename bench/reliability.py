"""``python -m bench.reliability``: the figures behind ``docs/reliability.md``.

Runs the reliability harnesses of ``tests/reliability/`` for many more iterations than the test
suite does, all from one seed, and prints one table (``--json OUT`` also writes the figures):

- crash safety: workers SIGKILLed at random points (and at every I/O call of each scenario);
  entries lost must be 0;
- concurrent writers: appender processes against ``contextree`` rewrites of the same file;
- writers without a lock: the real pi (or, without it, a Python appender that writes the same
  way) appending while the library and ``contextree prune`` rewrite the file; nothing lost;
- bad input: hypothesis over the codec, the loader and library, every CLI command and the
  ``serve`` endpoint, plus fixed matrices (a wrong type in every field, every truncation, a
  6 MB line, nesting 10000 deep, invalid UTF-8);
- model faults: every client x every fault through ``compact_session`` and the CLI, which also
  checks that the API key never reaches a file, a body, a log record or a message.

Exit status 1 when any check failed. The run uses a temporary ``HOME`` and no ``*_API_KEY``
or ``CONTEXTREE_*`` variables, so user settings cannot change the outcome.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import json
import os
import platform
import random
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.importable import ensure_importable

ROOT = Path(__file__).resolve().parent.parent


def _clean_environment(home: Path) -> None:
    for name in list(os.environ):
        if name.startswith("CONTEXTREE_") or name.endswith(("_API_KEY", "_BASE_URL")):
            del os.environ[name]
    os.environ["HOME"] = str(home)
    os.environ["CONTEXTREE_HOME"] = str(home / ".config" / "contextree")


@dataclass
class Row:
    """One figure of the report and whether it meets its requirement."""

    section: str
    label: str
    value: int | str
    requirement: str = ""
    ok: bool | None = None


@dataclass
class Report:
    seed: int
    rows: list[Row] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)

    def add(self, section: str, label: str, value: int | str, requirement: str = "") -> None:
        ok: bool | None = None
        if requirement == "= 0":
            ok = value == 0
        elif requirement == "> 0":
            ok = isinstance(value, int) and value > 0
        self.rows.append(Row(section, label, value, requirement, ok))

    def to_json(self) -> dict[str, Any]:
        return {
            "seed": self.seed,
            "machine": {
                "python": platform.python_version(),
                "implementation": platform.python_implementation(),
                "system": platform.platform(),
                "cpus": os.cpu_count(),
            },
            "rows": [row.__dict__ for row in self.rows],
            "seconds": self.seconds,
            "problems": self.problems,
        }


Progress = Callable[[str], None]


def crash_safety(report: Report, work: Path, iterations: int, progress: Progress) -> None:
    from pi_fixtures import pi_fixture
    from reliability.crash import SCENARIOS, kill_at_every_io, run_crash_campaign
    from reliability.faults import build_session

    stats = run_crash_campaign(
        work / "crash",
        iterations=iterations,
        seed=report.seed,
        v1_fixture=pi_fixture("large-session.jsonl"),
        progress=progress,
    )
    exhaustive_kills = exhaustive_lost = exhaustive_problems = 0
    for scenario in SCENARIOS:
        if scenario == "migrate":
            start = pi_fixture("large-session.jsonl")
        else:
            start = work / f"start-{scenario}.jsonl"
            build_session(start)
        every = kill_at_every_io(
            work / f"every-{scenario}", scenario=scenario, start=start, seed=report.seed
        )
        exhaustive_kills += every.killed
        exhaustive_lost += every.entries_lost
        exhaustive_problems += len(every.problems)
        report.problems.extend(every.problems)
        stats.rewrites_interrupted += every.rewrites_interrupted
    report.problems.extend(stats.problems)
    section = "crash safety (SIGKILL)"
    scenarios = ", ".join(f"{k} {v}" for k, v in sorted(stats.per_scenario.items()))
    report.add(section, f"iterations ({scenarios})", stats.iterations)
    report.add(section, "workers killed mid-run", stats.killed, "> 0")
    report.add(section, "  at a chosen write / fsync / rename", stats.killed_at_io)
    report.add(section, "  by a timer, anywhere", stats.killed_by_timer)
    report.add(section, "kills at every I/O call of each scenario", exhaustive_kills, "> 0")
    report.add(section, "entries whose append had returned", stats.entries_confirmed)
    report.add(section, "entries lost", stats.entries_lost + exhaustive_lost, "= 0")
    report.add(section, "torn last lines (reported, then appended past)", stats.partial_last_lines)
    report.add(section, "rewrites killed mid-rename (old or new file)", stats.rewrites_interrupted)
    report.add(section, "v1 -> v3 migrations killed and checked", stats.migrations_checked)
    report.add(section, "leftover temp files (removed by check --repair)", stats.stray_temp_files)
    report.add(section, "failed checks", len(stats.problems) + exhaustive_problems, "= 0")


def concurrency(report: Report, work: Path, writers: int, rounds: int) -> None:
    from reliability.concurrency import run_concurrency

    stats = run_concurrency(
        work / "concurrency", writers=writers, minimum=200, rounds=rounds, seed=report.seed
    )
    report.problems.extend(stats.problems)
    section = "concurrent writers"
    runs = ", ".join(f"{k} {v}" for k, v in sorted(stats.cli_runs.items()))
    report.add(section, f"appender processes ({writers})", stats.writers)
    report.add(section, "concurrent appends", stats.appends, "> 0")
    report.add(section, f"CLI writes meanwhile ({runs})", sum(stats.cli_runs.values()))
    report.add(section, "torn lines", stats.torn_lines, "= 0")
    report.add(section, "appends lost", stats.lost, "= 0")
    report.add(section, "failed checks", len(stats.problems), "= 0")


def unlocked_writer(report: Report, work: Path, turns: int) -> None:
    """An appender that takes no lock (the real pi when it is installed) against rewrites."""
    from reliability.common import child_env
    from reliability.unlocked import (
        Appender,
        python_appender_command,
        race_rewrites,
        start_session,
    )

    work.mkdir(parents=True, exist_ok=True)
    path = work / "session.jsonl"
    start_session(path)
    pi = _installed_pi()
    if pi is not None:
        from differential.pi_writer import start_pi_appender

        name = "pi 0.73.1 (appendFileSync)"
        appender = start_pi_appender(pi, path, turns=turns, pause_ms=5, output_bytes=1500)
    else:
        name = "a Python appender, open(path, 'a') per line (pi is not installed)"
        command = python_appender_command(path, turns=turns, pause_ms=5, output_bytes=1500)
        appender = Appender.start(command, cwd=work, env=child_env())
    stats = race_rewrites(path, appender, turns, work / "home")
    report.problems.extend(stats.problems)
    section = "writers without a lock"
    report.add(section, f"entries appended by {name}, every 5 ms", stats.appended, "> 0")
    runs = f"library {stats.rewrites - stats.cli_prunes}, contextree prune {stats.cli_prunes}"
    report.add(section, f"rewrites meanwhile ({runs})", stats.rewrites, "> 0")
    report.add(section, "entries lost", stats.lost, "= 0")
    report.add(section, "entries written twice / torn lines", f"{stats.twice} / {stats.torn_lines}")
    report.add(section, "failed checks", len(stats.problems), "= 0")


def _installed_pi() -> Any:
    """pi 0.73.1 when it is installed (see tests/differential/installs.py), else ``None``."""
    from differential.installs import Install, find_pi

    found = find_pi()
    return found if isinstance(found, Install) else None


def _hypothesis(
    name: str, strategy: Any, check: Callable[[Any], None], examples: int, seed: int
) -> list[str]:
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as fixed_seed

    @fixed_seed(seed)
    @settings(
        max_examples=examples,
        database=None,
        deadline=None,
        phases=[Phase.generate, Phase.shrink],
        suppress_health_check=list(HealthCheck),
    )
    @given(strategy)
    def run(value: Any) -> None:
        check(value)

    try:
        run()
    except BaseException as exc:  # a falsifying example: report it, go on with the rest
        if isinstance(exc, KeyboardInterrupt):
            raise
        return [f"fuzz {name}: {exc!r}\n{traceback.format_exc(limit=3)}"]
    return []


def bad_input(report: Report, work: Path, examples: int, progress: Progress) -> None:
    from hypothesis import strategies as st

    from reliability import fuzzing as fz

    fz.CASES.clear()
    seed = report.seed
    problems: list[str] = []
    cli_dir = work / "cli"
    runs: list[tuple[str, Any, Callable[[Any], None], int]] = [
        ("codec", st.binary(max_size=400), fz.check_codec, examples * 2),
        (
            "codec round trip",
            st.dictionaries(st.text(max_size=8), fz.json_values, max_size=6),
            fz.check_round_trip,
            examples,
        ),
        ("library", fz.damaged_sessions(), fz.exercise_library, examples * 2),
        (
            "cli",
            st.tuples(fz.damaged_sessions(), st.sampled_from(fz.COMMANDS)),
            lambda pair: fz.check_cli(pair[0], pair[1], cli_dir),
            max(50, examples // 2),
        ),
    ]
    for name, strategy, check, count in runs:
        progress(f"fuzz: {name}, {count} examples")
        problems += _hypothesis(name, strategy, check, count, seed)
    progress("fuzz: serve endpoint")
    with fz.fuzz_server() as (host, port, escaped):
        problems += _hypothesis(
            "serve",
            fz.raw_requests(),
            lambda request: fz.check_serve(host, port, request),
            examples,
            seed,
        )
        problems += [f"serve handler raised: {text}" for text in escaped]
    progress("fuzz: fixed matrices")
    problems += _matrices(cli_dir)
    report.problems.extend(problems)
    section = "bad input"
    report.add(section, "codec cases (any bytes, round trips)", fz.CASES["codec"], "> 0")
    report.add(section, "damaged sessions through the library", fz.CASES["library"], "> 0")
    report.add(section, "CLI runs on damaged sessions", fz.CASES["cli"], "> 0")
    report.add(section, "requests to the serve endpoint", fz.CASES["serve"], "> 0")
    report.add(section, "tracebacks, hangs, changed files, non-JSON errors", len(problems), "= 0")


def _matrices(cli_dir: Path) -> list[str]:
    """The fixed cases of ``tests/reliability/test_fuzz.py``: every field, every truncation."""
    from reliability import fuzzing as fz

    problems: list[str] = []

    def attempt(label: str, check: Callable[..., None], *args: Any) -> None:
        try:
            check(*args)
        except Exception as exc:
            problems.append(f"{label}: {exc!r}")

    wrong: tuple[Any, ...] = (None, 7, -1.5, "x", [], {}, True, [{"type": 3}], {"role": []})
    for index, line in enumerate(fz.BASE):
        for path in fz.field_paths(line):
            for value in wrong:
                lines = copy.deepcopy(fz.BASE)
                fz.set_path(lines[index], path, value)
                data = fz.encode(lines)
                attempt(f"wrong type at line {index} {path}", fz.exercise_library, data)
    data = fz.encode(fz.BASE)
    for end in range(len(data)):
        attempt(f"truncated at {end}", fz.exercise_library, data[:end])
    huge = copy.deepcopy(fz.BASE)
    huge[3]["message"]["content"][0]["text"] = "word " * 1_200_000
    deep = fz.encode(fz.BASE[:4]) + (
        b'{"type":"message","id":"e0000004","parentId":"e0000003","timestamp":"t",'
        b'"message":{"role":"user","content":' + b"[" * 10_000 + b"]" * 10_000 + b"}}\n"
    )
    invalid = data.replace(b"Fix the parser", b"Fix the \xff\xfe parser")
    for label, sample in (
        ("6 MB line", fz.encode(huge)),
        ("depth 10000", deep),
        ("UTF-8", invalid),
    ):
        for command in fz.COMMANDS:
            attempt(
                f"{label}: contextree {' '.join(command)}", fz.check_cli, sample, command, cli_dir
            )
    return problems


def model_faults(report: Report, work: Path) -> None:
    from fakes.fake_llm import FakeLLMServer
    from reliability import faults
    from reliability.common import FAKE_KEY
    from reliability.fuzzing import run_cli

    problems: list[str] = []
    outcomes: dict[str, int] = {}
    cli_cases = 0
    folder = work / "faults"
    folder.mkdir(parents=True, exist_ok=True)
    with FakeLLMServer() as server:
        cases = faults.fault_cases()
        for case in cases:
            result = asyncio.run(faults.run_fault_case(case, server, folder))
            outcomes[result.outcome] = outcomes.get(result.outcome, 0) + 1
            problems += [f"{case.id}: {problem}" for problem in result.problems]
        for client in ("openai", "anthropic", "remote"):
            for fault in ("ok", "refused", "429", "500", "malformed", "empty", "overflow"):
                case = faults.FaultCase(client, fault)
                path = folder / f"cli-{case.id}.jsonl"
                path.unlink(missing_ok=True)
                faults.build_session(path)
                before = path.read_bytes()
                server.reset()
                faults.script(server, fault)
                args, env = faults.cli_args(case, server, path)
                outcome = run_cli(args, env=env)
                cli_cases += 1
                lines = outcome.stderr.splitlines()
                if FAKE_KEY in outcome.stdout + outcome.stderr:
                    problems.append(f"cli {case.id}: the output holds the API key")
                if fault == "ok":
                    if outcome.exit_code != 0:
                        problems.append(f"cli {case.id}: failed: {outcome.stderr}")
                elif (
                    outcome.exit_code != 1
                    or len(lines) != 1
                    or not lines[0].startswith("error: ")
                    or path.read_bytes() != before
                ):
                    problems.append(f"cli {case.id}: not one error line, or the file changed")
    report.problems.extend(problems)
    section = "model faults"
    report.add(section, "fault cases through compact_session", len(cases), "> 0")
    report.add(section, "  of which: ok / error / cancelled", _split(outcomes))
    report.add(section, "fault cases through contextree compact", cli_cases, "> 0")
    report.add(
        section, "API-key leak checks (file, bodies, logs, messages)", (len(cases) + cli_cases) * 4
    )
    report.add(section, "failed checks (incl. key leaks)", len(problems), "= 0")


def _split(outcomes: dict[str, int]) -> str:
    return " / ".join(str(outcomes.get(k, 0)) for k in ("ok", "error", "cancelled"))


def render(report: Report) -> Any:
    from rich.table import Table

    table = Table(title=f"contextree reliability (seed {report.seed})", title_justify="left")
    table.add_column("section")
    table.add_column("measurement")
    table.add_column("value", justify="right")
    table.add_column("required")
    table.add_column("result")
    previous = ""
    for row in report.rows:
        verdict = {True: "[green]PASS[/]", False: "[bold red]FAIL[/]", None: ""}[row.ok]
        value = f"{row.value:,}" if isinstance(row.value, int) else row.value
        section = row.section if row.section != previous else ""
        previous = row.section
        table.add_row(section, row.label, value, row.requirement, verdict)
    total = sum(report.seconds.values())
    table.caption = (
        f"{platform.python_implementation()} {platform.python_version()}, "
        f"{os.cpu_count()} CPUs, {total:.0f} s; replay: python -m bench.reliability "
        f"--seed {report.seed}"
    )
    table.caption_justify = "left"
    return table


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.reliability",
        description="Crash, concurrency, bad-input and model-fault runs; prints the figures.",
    )
    parser.add_argument("--iterations", type=int, default=1000, help="SIGKILL iterations")
    parser.add_argument("--seed", type=int, default=None, help="seed (default: random, printed)")
    parser.add_argument("--examples", type=int, default=1000, help="hypothesis examples per run")
    parser.add_argument("--writers", type=int, default=6, help="concurrent appender processes")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of CLI rewrites")
    parser.add_argument(
        "--turns", type=int, default=500, help="turns (2 entries each) of the unlocked writer"
    )
    parser.add_argument("--quick", action="store_true", help="small counts (a smoke test)")
    parser.add_argument("--json", type=Path, metavar="OUT", help="also write the figures here")
    args = parser.parse_args(argv)
    if args.quick:
        args.iterations, args.examples, args.writers, args.rounds = 60, 100, 3, 1
        args.turns = 100
    seed = args.seed if args.seed is not None else random.randrange(2**32)

    ensure_importable(with_tests=True)
    from rich.console import Console

    console = Console(highlight=False)
    errors = Console(stderr=True, highlight=False)
    report = Report(seed=seed)
    errors.print(f"[dim]seed {seed}[/]")

    def progress(message: str) -> None:
        errors.print(f"[dim]… {message}[/]")

    with tempfile.TemporaryDirectory(prefix="contextree-reliability-") as tmp:
        work = Path(tmp)
        _clean_environment(work / "home")
        steps: list[tuple[str, Callable[[], None]]] = [
            ("crash", lambda: crash_safety(report, work, args.iterations, progress)),
            ("concurrency", lambda: concurrency(report, work, args.writers, args.rounds)),
            ("unlocked writer", lambda: unlocked_writer(report, work / "unlocked", args.turns)),
            ("bad input", lambda: bad_input(report, work, args.examples, progress)),
            ("model faults", lambda: model_faults(report, work)),
        ]
        for name, step in steps:
            progress(name)
            started = time.perf_counter()
            step()
            report.seconds[name] = round(time.perf_counter() - started, 1)
    console.print(render(report))
    for problem in report.problems[:30]:
        errors.print(f"[red]{problem}[/]", markup=True)
    if args.json is not None:
        args.json.write_text(json.dumps(report.to_json(), indent=2) + "\n", encoding="utf-8")
        errors.print(f"[dim]wrote {args.json}[/]")
    failed = report.problems or any(row.ok is False for row in report.rows)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
