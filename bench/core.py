"""The measurements: what each benchmark row times, and the targets it is held to.

Every timing is the median of a few repetitions with the garbage collector run before each
one (it stays enabled while timing, as in real use). Memory is measured in a child process so
that nothing earlier in the run inflates it: the child imports contextree, resets and reads its
resident set size, opens the session and builds the LLM context, and reports how far the peak
resident set size (``VmHWM``, the per-process ``ru_maxrss``) rose above that baseline. That
counts everything the process really held at its worst moment (the file's bytes, decoded
dicts, allocator slack), which is what "memory < 2x file size" is about; ``tracemalloc`` would
miss non-Python allocations and slow the run down severalfold.
"""

from __future__ import annotations

import gc
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from bench.generate import GeneratedSession, generate_session
from bench.integrations_openai_agents import measure_openai_agents_turn
from bench.integrations_pydantic_ai import measure_pydantic_ai_turn
from bench.metrics import Metric, Report, Target

__all__ = ["SIZES", "Metric", "Report", "Target", "run"]

SIZES = {"10k": 10_000, "100k": 100_000}
APPENDS = 2000


# -- timing helpers -----------------------------------------------------------------------------


def _median_time(func: Callable[[], object], repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        func()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def _open(path: Path) -> Any:
    from contextree.session.tree import SessionTree

    return SessionTree.open(path, create=False)


def measure_open_context(path: Path, repeat: int) -> dict[str, float]:
    """``open`` alone, ``open`` + context, and ``get_branch`` on a fresh tree (cold) and again."""
    from contextree.context.convert import convert_to_llm

    opens, contexts, colds, warms = [], [], [], []
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        tree = _open(path)
        opened = time.perf_counter()
        convert_to_llm(tree.build_session_context().messages)
        done = time.perf_counter()
        opens.append(opened - start)
        contexts.append(done - start)
        del tree
        gc.collect()
        tree = _open(path)
        start = time.perf_counter()
        tree.get_branch()
        cold = time.perf_counter()
        tree.get_branch()
        warm = time.perf_counter()
        colds.append(cold - start)
        warms.append(warm - cold)
        del tree
    return {
        "open": statistics.median(opens),
        "open_context": statistics.median(contexts),
        "branch_cold": statistics.median(colds),
        "branch_warm": statistics.median(warms),
    }


def measure_compaction(path: Path, repeat: int) -> dict[str, float]:
    """``prepare_compaction`` and ``decide_prune`` on the leaf path (entries already decoded)."""
    from contextree.compaction.prepare import prepare_compaction
    from contextree.compaction.prune import decide_prune
    from contextree.settings.schema import CompactionSettings

    branch = _open(path).get_branch()
    settings = CompactionSettings()
    prepare = _median_time(lambda: prepare_compaction(branch, settings), repeat)
    prune = _median_time(lambda: decide_prune(branch), repeat)

    def both() -> None:
        prepare_compaction(branch, settings)
        decide_prune(branch)

    return {"prepare": prepare, "prune": prune, "prepare_prune": _median_time(both, repeat)}


def measure_append(path: Path, workdir: Path, count: int = APPENDS) -> dict[str, float]:
    """Latency of ``append_message`` on an opened tree (a copy of the session file)."""
    copy = workdir / f"append-{path.name}"
    shutil.copyfile(path, copy)
    tree = _open(copy)
    for n in range(20):  # warm up: first write opens the descriptor
        tree.append_message(_small_message(n))
    samples: list[int] = []
    gc.collect()
    for n in range(count):
        message = _small_message(n)
        start = time.perf_counter_ns()
        tree.append_message(message)
        samples.append(time.perf_counter_ns() - start)
    tree.store.close()
    copy.unlink()
    samples.sort()
    return {
        "append_mean": statistics.fmean(samples) / 1000,
        "append_p99": samples[min(len(samples) - 1, int(len(samples) * 0.99))] / 1000,
    }


def _small_message(n: int) -> dict[str, Any]:
    return {
        "role": "user",
        "content": [{"type": "text", "text": f"benchmark append {n}: keep going"}],
        "timestamp": 1_767_225_600_000 + n,
    }


def measure_memory(path: Path, *, check: bool = False) -> dict[str, float]:
    """Peak RSS growth of open + context (``check``: of open + ``check_session``), measured in
    a fresh child process."""
    src = Path(__file__).resolve().parent.parent / "src"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(src), str(src.parent), env.get("PYTHONPATH", "")) if p
    )
    result = subprocess.run(
        [sys.executable, "-m", "bench.core", "--check-memory" if check else "--memory", str(path)],
        capture_output=True,
        text=True,
        env=env,
        cwd=src.parent,
        check=True,
    )
    data = json.loads(result.stdout)
    peak = (data["peak_kb"] - data["baseline_kb"]) * 1024
    if check:
        return {"check_memory_ratio": peak / path.stat().st_size}
    return {"memory": peak / 1e6, "memory_ratio": peak / path.stat().st_size}


def _status_kb(name: str) -> int | None:
    """A ``kB`` field of /proc/self/status (Linux), or ``None``."""
    try:
        with open("/proc/self/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith(name + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def _memory_child(path: str, *, check: bool = False) -> None:
    import resource

    from contextree.context.convert import convert_to_llm
    from contextree.session.check import check_session
    from contextree.session.tree import SessionTree

    gc.collect()
    # The peak of this address space (VmHWM): ru_maxrss would also carry the parent's peak,
    # which Linux hands on across fork and exec. Reset it to the current size first.
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as handle:
            handle.write("5")
    except OSError:
        pass
    baseline = _status_kb("VmRSS")
    if baseline is None:  # not Linux: fall back to ru_maxrss (bytes on macOS)
        scale = 1024 if sys.platform == "darwin" else 1
        baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // scale
    tree = SessionTree.open(path, create=False)
    if check:
        findings = check_session(tree).findings
    messages = convert_to_llm(tree.build_session_context().messages) if not check else findings
    peak = _status_kb("VmHWM")
    if peak is None:
        scale = 1024 if sys.platform == "darwin" else 1
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // scale
    print(json.dumps({"baseline_kb": baseline, "peak_kb": peak, "messages": len(messages)}))


HELP_REPEAT = 15


def measure_help_startup(repeat: int = HELP_REPEAT) -> dict[str, float]:
    """Wall time of ``python -m contextree --help`` in a fresh process (median, 3 warm-ups):
    the start-up a user waits for before any command runs. Not session-dependent."""
    import contextree

    src = str(Path(contextree.__file__).resolve().parent.parent)  # the contextree measured
    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join(filter(None, [src, os.environ.get("PYTHONPATH")]))
    )
    command = [sys.executable, "-m", "contextree", "--help"]

    def once() -> None:
        subprocess.run(command, env=env, capture_output=True, check=True)

    for _ in range(3):
        once()
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        once()
        samples.append(time.perf_counter() - start)
    return {"help_startup": statistics.median(samples)}


# -- the run ------------------------------------------------------------------------------------


def machine_info() -> dict[str, Any]:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "cpu": cpu,
        "cpus": os.cpu_count(),
    }


_STORES = (("file", "file", 3000), ("sqlite", "SQLite", 2000), ("postgres", "PostgreSQL", 1000))
"""Each store's key, label and issue 27's floor for 8 workers (appends/s)."""


def _store_metrics() -> list[Metric]:
    """Per store: open + context, open + first append, appends/s with 1 and 8 workers (issue
    27's floors for 8 workers) and the 8-worker rate at 100k against 10k."""
    metrics = []
    for kind, label, eight in _STORES:
        metrics += [
            Metric(f"{kind}_open_context", f"{label}: open + context", "s"),
            Metric(f"{kind}_first_append", f"{label}: open + first append", "s"),
            Metric(f"{kind}_appends_1", f"{label}: appends/s, 1 worker", "/s"),
            Metric(
                f"{kind}_appends_8",
                f"{label}: appends/s, 8 workers",
                "/s",
                target=Target(">=", eight),
            ),
            Metric(
                f"{kind}_appends_8_ratio",
                "  100k rate / 10k rate",
                "x",
                target=Target(">=", 0.7, "100k"),
            ),
        ]
    metrics.append(
        Metric(
            "postgres_sessions_64",
            "PostgreSQL: appends/s in total, 64 workers on 64 sessions (8 processes, pooled)",
            "/s",
            target=Target(">=", 5000),
        )
    )
    return metrics


def _recall_metrics() -> list[Metric]:
    """Issue 26's rows: the index build, a query, a whole CLI call, the update per append."""
    return [
        Metric("recall_build", "recall: index build", "s", target=Target("<", 3, "100k")),
        Metric("recall_build_cpu", "  its CPU time", "s"),
        Metric("recall_build_plain", "  without redaction (wall)", "s"),
        Metric("recall_db_mb", "recall: index size", "MB"),
        Metric("recall_query", "recall: query in process", "ms", target=Target("<", 50, "100k")),
        Metric("recall_query_cpu", "  its CPU time", "ms"),
        Metric("recall_cli", "recall: whole CLI call (wall)", "s", target=Target("<", 0.5, "100k")),
        Metric("recall_cli_cpu", "  its CPU time", "s"),
        Metric(
            "recall_cli_appended",
            "recall: whole CLI call after another worker's append (wall)",
            "s",
            target=Target("<", 0.5, "100k"),
        ),
        Metric("recall_append", "recall: update per append", "ms", target=Target("<", 1)),
        Metric("recall_append_cpu", "  its CPU time", "ms"),
    ]


def _metrics() -> list[Metric]:
    return [
        Metric("file_mb", "file size", "MB"),
        Metric("open", "open: SessionTree.open", "s"),
        Metric(
            "open_context",
            "open + context + convert_to_llm",
            "s",
            target=Target("<=", 0.35, "100k"),
        ),
        Metric("branch_cold", "get_branch(leaf), first call", "ms"),
        Metric("branch_warm", "get_branch(leaf), again", "ms"),
        Metric("prepare", "prepare_compaction(leaf path)", "ms"),
        Metric("prune", "decide_prune(leaf path)", "ms"),
        Metric(
            "prepare_prune",
            "prepare_compaction + decide_prune",
            "ms",
            target=Target("<", 50, "100k"),
        ),
        Metric("append_mean", f"append, mean of {APPENDS}", "µs", target=Target("<", 100)),
        Metric("append_p99", f"append, p99 of {APPENDS}", "µs"),
        Metric("rewrite_fresh", "rewrite one entry, fresh tree", "s"),
        Metric("rewrite_after_appends", "rewrite one entry after 20 appends", "s"),
        # "No more than on a fresh tree" (issue 27), with room for the noise of 5 runs; judged
        # at 10k: at 100k the kernel's write of 141 MB alone varies from 0.03 to 0.3 s.
        Metric("rewrite_ratio", "  after appends / fresh", "x", target=Target("<=", 1.2, "10k")),
        Metric("memory", "peak memory of open + context", "MB"),
        Metric("memory_ratio", "peak memory / file size", "x", target=Target("<", 2)),
        Metric(
            "check_memory_ratio",
            "check: peak memory / file size",
            "x",
            target=Target("<=", 1.5, "100k"),
        ),
        *_store_metrics(),
        Metric(
            "pydantic_ai_turn",
            "pydantic-ai SessionHistory turn",
            "ms",
            target=Target("<", 5, "10k"),
        ),
        Metric("pydantic_ai_own", "  of it the adapter's own (no core)", "ms"),
        Metric(
            "openai_agents_turn",
            "OpenAI Agents SDK session turn",
            "ms",
            target=Target("<", 5, "10k"),
        ),
        Metric("openai_agents_own", "  of it the adapter's own (no core)", "ms"),
        *_recall_metrics(),
        Metric("context_cli", "context CLI (wall)", "s", target=Target("<=", 0.3, "100k")),
        Metric("context_cli_cpu", "  its CPU time", "s"),
        Metric("compact_cli", "compact CLI (wall)", "s", target=Target("<=", 1, "100k")),
        Metric("compact_cli_cpu", "  its CPU time", "s"),
        # Measured once (under the first size's column): it does not depend on a session.
        Metric("help_startup", "contextree --help startup", "ms", target=Target("<", 150)),
        # The retention eval (issue 25), measured once as well.
        Metric(
            "retention_mean",
            "retention eval: mean survival, 5 rounds (offline)",
            "",
            target=Target(">=", 0.95),
        ),
        Metric(
            "retention_20", "  context within 20% of the original", "", target=Target(">=", 0.75)
        ),
        Metric("retention_held_out", "  held-out phrasings", ""),
        Metric("retention_time", "  wall time of the eval (35 sessions x 2 budgets)", "s"),
        Metric("blind_full", "blind sessions (bench/blind test): survival, 5 rounds", ""),
        Metric("blind_20", "  context within 20% of the original", ""),
        Metric("blind_recall", "  full budget, the recall tool's answer counted", ""),
        Metric("blind_recall_20", "  within 20%, the recall tool's answer counted", ""),
        Metric("blind_fresh2_full", "blind sessions (fresh2, written later): survival", ""),
        Metric("blind_fresh2_20", "  context within 20% of the original", ""),
        Metric("blind_fresh3_full", "blind sessions (fresh3, written later): survival", ""),
        Metric("blind_fresh3_20", "  context within 20% of the original", ""),
        Metric("blind_fresh4_full", "blind sessions (fresh4, written later): survival", ""),
        Metric("blind_fresh4_20", "  context within 20% of the original", ""),
        Metric("blind_fresh4_recall_20", "  within 20%, the recall tool's answer counted", ""),
        Metric("blind_fresh5_full", "blind sessions (fresh5, written later): survival", ""),
        Metric("blind_fresh5_20", "  context within 20% of the original", ""),
        Metric("blind_fresh5_recall_20", "  within 20%, the recall tool's answer counted", ""),
        Metric("blind_fresh6_full", "blind sessions (fresh6, written later): survival", ""),
        Metric("blind_fresh6_20", "  context within 20% of the original", ""),
        Metric("blind_fresh6_recall_20", "  within 20%, the recall tool's answer counted", ""),
        Metric("blind_fresh7_full", "blind sessions (fresh7, written later): survival", ""),
        Metric("blind_fresh7_20", "  context within 20% of the original", ""),
        Metric("blind_fresh7_recall_20", "  within 20%, the recall tool's answer counted", ""),
        Metric("blind_fresh8_full", "blind sessions (fresh8, written later): survival", ""),
        Metric("blind_fresh8_20", "  context within 20% of the original", ""),
        Metric("blind_fresh8_recall_20", "  within 20%, the recall tool's answer counted", ""),
        Metric("blind_fresh9_full", "blind sessions (fresh9, written later): survival", ""),
        Metric("blind_fresh9_20", "  context within 20% of the original", ""),
        Metric("blind_fresh9_recall_20", "  within 20%, the recall tool's answer counted", ""),
        Metric("blind_fresh10_full", "blind sessions (fresh10, written later): survival", ""),
        Metric("blind_fresh10_20", "  context within 20% of the original", ""),
        Metric("blind_fresh10_recall_20", "  within 20%, the recall tool's answer counted", ""),
        Metric("blind_fresh11_full", "blind sessions (fresh11, written later): survival", ""),
        Metric("blind_fresh11_20", "  context within 20% of the original", ""),
        Metric("blind_fresh11_recall_20", "  within 20%, the recall tool's answer counted", ""),
        Metric("blind_fresh12_full", "blind sessions (fresh12, written last): survival", ""),
        Metric("blind_fresh12_20", "  context within 20% of the original", ""),
        Metric("blind_fresh12_recall_20", "  within 20%, the recall tool's answer counted", ""),
        Metric("blind_dev2_recall", "blind dev2 (long tool results), recall counted", ""),
        Metric("blind_dev2_recall_20", "  context within 20% of the original", ""),
        *_integration_metrics(),
    ]


def _integration_metrics() -> list[Metric]:
    from bench.integrations_langchain import langchain_metrics

    return langchain_metrics()


COMPACTION_REPEAT = 15

_MS_KEYS = {"branch_cold", "branch_warm", "prepare", "prune", "prepare_prune", "help_startup"}


def run(
    sizes: list[str],
    workdir: Path,
    *,
    seed: int = 1,
    keep: bool = False,
    progress: Callable[[str], None] = lambda _msg: None,
) -> Report:
    """Generate the sessions, measure everything, return the report (``keep``: the files)."""
    metrics = {m.key: m for m in _metrics()}
    sessions: dict[str, dict[str, Any]] = {}
    generated_paths: dict[str, Path] = {}
    for size in sizes:
        entries = SIZES[size]
        progress(f"generating {size} entries (seed {seed})")
        generated: GeneratedSession = generate_session(
            workdir / f"session-{size}.jsonl", entries, seed=seed
        )
        info = asdict(generated)
        info["path"] = str(generated.path)
        sessions[size] = info
        repeat = 5
        results: dict[str, float] = {"file_mb": generated.bytes / 1e6}
        progress(f"{size}: open and context")
        results.update(measure_open_context(generated.path, repeat))
        progress(f"{size}: prepare_compaction and prune decision")
        # Tens of milliseconds each: more runs make the median steady on a shared machine.
        results.update(measure_compaction(generated.path, COMPACTION_REPEAT))
        progress(f"{size}: {APPENDS} appends")
        results.update(measure_append(generated.path, workdir))
        progress(f"{size}: a rewrite, fresh and after appends")
        from bench.rewrite import measure_rewrite

        results.update(measure_rewrite(generated.path, workdir))
        progress(f"{size}: the stores (file, SQLite, PostgreSQL when configured)")
        from bench.stores import measure_stores

        results.update(measure_stores(generated.path, workdir))
        progress(f"{size}: recall index, queries, appends")
        from bench.recall import measure_recall

        results.update(measure_recall(generated.path, workdir))
        progress(f"{size}: contextree context and compact (fresh processes)")
        from bench.cli_commands import measure_compact_cli, measure_context_cli

        results.update(measure_context_cli(generated.path, workdir))
        results.update(measure_compact_cli(generated.path, workdir))
        progress(f"{size}: peak memory (child process)")
        results.update(measure_memory(generated.path))
        results.update(measure_memory(generated.path, check=True))
        if size == "10k":
            from bench.integrations_langchain import measure_langchain_turn

            progress(f"{size}: LangChain middleware turns")
            results.update(measure_langchain_turn(generated.path, workdir))
            # The adapters' target is per turn on the 10k session; 100k adds nothing to it.
            progress(f"{size}: pydantic-ai SessionHistory turns")
            results.update(measure_pydantic_ai_turn(generated.path, workdir))
            progress(f"{size}: OpenAI Agents SDK session turns")
            results.update(measure_openai_agents_turn(generated.path, workdir))
        if size == sizes[0]:
            progress("contextree --help startup (fresh processes)")
            results.update(measure_help_startup())
            from bench.retention import measure_retention

            progress("the retention eval (contextree eval, offline)")
            results.update(measure_retention())
            from bench.retention import measure_blind_retention

            progress("the retention eval on the blind sessions")
            results.update(measure_blind_retention())
        for key, value in results.items():
            metrics[key].values[size] = value * 1000 if key in _MS_KEYS else value
        generated_paths[size] = generated.path
    if {"10k", "100k"} <= generated_paths.keys():
        # Issue 27: an append under contention costs the same at 100k as at 10k, so each
        # store's 8-worker rate at 100k is held to at least 0.7 times its rate at 10k,
        # measured with the runs of the two sizes taken in turn.
        progress("the stores: 8 workers at 10k and 100k in turn")
        from bench.stores import measure_scaling

        scaled = measure_scaling({s: generated_paths[s] for s in ("10k", "100k")}, workdir)
        for key, value in scaled.items():
            metrics[key].values["100k"] = value
    if not keep:
        for path in generated_paths.values():
            path.unlink()
    return Report(machine_info(), sessions, list(metrics.values()))


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] in ("--memory", "--check-memory"):
        _memory_child(sys.argv[2], check=sys.argv[1] == "--check-memory")
    else:
        sys.exit(
            "usage: python -m bench.core --memory|--check-memory SESSION.jsonl "
            "(internal; use python -m bench)"
        )
