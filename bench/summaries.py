"""``python -m bench.summaries``: what the summaries keep, and what they cost.

Three measurements, printed as tables:

1. **Retention over rounds.** A generated coding session with planted facts (user constraints
   and decisions, assistant TODOs, files edited and files only named in prose) grows in ten
   slices; after each slice the session is compacted with the offline summarizer (each round
   updates the previous summary). After rounds 1, 5 and 10 we count how many of the facts
   planted so far the model still sees: in the summary or in the messages kept verbatim
   (edited files also count when listed in the entry's ``details``).
2. **Summary size vs budget** on the bench sessions (``bench.generate``) and the shipped
   example: the summary's chars/4 tokens against the budget the dry run prints.
3. **Wall time** of a whole offline compaction (prepare + summarize + append) on the 100k
   session.

Nothing here is asserted; tests pin the behaviour, this prints the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.importable import ensure_importable

ensure_importable()

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from contextree.compaction.budget import summary_token_budget  # noqa: E402
from contextree.compaction.offline import OfflineSummarizer  # noqa: E402
from contextree.compaction.run import CompactionOutcome, compact_session  # noqa: E402
from contextree.compaction.serialize import serialize_conversation  # noqa: E402
from contextree.compaction.summarize import text_tokens  # noqa: E402
from contextree.context.convert import convert_to_llm  # noqa: E402
from contextree.session.tree import SessionTree  # noqa: E402
from contextree.settings.schema import CompactionSettings  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "todo-api-session.jsonl"
ROUNDS = 10
TURNS_PER_ROUND = 8
_MODULES = ("billing", "auth", "search", "export", "audit", "quota", "cache", "mailer")
_LIBS = ("httpx", "orjson", "sqlalchemy", "pydantic", "structlog", "tenacity")


@dataclass
class Planted:
    """Facts planted in the generated session, by kind, in the order they were planted."""

    facts: dict[str, list[str]] = field(default_factory=dict)

    def add(self, kind: str, text: str) -> None:
        self.facts.setdefault(kind, []).append(text)


def _usage(total: int) -> dict[str, int]:
    return {"input": total, "output": 50, "cacheRead": 0, "cacheWrite": 0, "totalTokens": total}


def _assistant(content: list[dict[str, Any]], total: int) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": content,
        "api": "openai-completions",
        "provider": "openai",
        "model": "gpt-4o-mini",
        "usage": _usage(total),
        "stopReason": "toolUse" if any(b["type"] == "toolCall" for b in content) else "stop",
        "timestamp": 1,
    }


class _Writer:
    """Appends one coding turn at a time, planting facts as it goes."""

    def __init__(self, tree: SessionTree, rng: random.Random, planted: Planted) -> None:
        self.tree, self.rng, self.planted = tree, rng, planted
        self.calls = 0
        self.tokens = 2000

    def _call(self, name: str, **arguments: Any) -> tuple[dict[str, Any], str]:
        self.calls += 1
        call_id = f"call_{self.calls}"
        return {"type": "toolCall", "id": call_id, "name": name, "arguments": arguments}, call_id

    def _result(self, call_id: str, name: str, text: str, error: bool = False) -> None:
        self.tree.append_message(
            {
                "role": "toolResult",
                "toolCallId": call_id,
                "toolName": name,
                "content": [{"type": "text", "text": text}],
                "isError": error,
                "timestamp": 1,
            }
        )

    def turn(self, index: int) -> None:
        rng = self.rng
        module = _MODULES[index % len(_MODULES)]
        path = f"src/app/{module}_{index}.py"
        request = f"Add retry handling to the {module} client ({index})."
        if index % 3 == 0:
            constraint = f"Never change the public signature of `{module}_{index}.fetch()`."
            self.planted.add("constraint", constraint)
            request = f"{request} {constraint}"
        if index % 4 == 1:
            lib = _LIBS[index % len(_LIBS)]
            decision = f"Let's use {lib} for the {module} module instead of writing our own."
            self.planted.add("decision", decision)
            request = f"{request}\n{decision}"
        self.tree.append_message(
            {"role": "user", "content": [{"type": "text", "text": request}], "timestamp": 1}
        )
        read, read_id = self._call("read", path=path)
        self.tokens += 400
        self.tree.append_message(
            _assistant([{"type": "text", "text": "Reading it."}, read], self.tokens)
        )
        body = "\n".join(f"def f{n}(x):\n    return x + {n}" for n in range(rng.randint(30, 80)))
        self._result(read_id, "read", body)
        edit, edit_id = self._call("edit", path=path, oldText="return x", newText="return retry(x)")
        self.tokens += 300
        self.tree.append_message(_assistant([edit], self.tokens))
        self._result(edit_id, "edit", f"Successfully replaced text in {path}.")
        self.planted.add("file", path)
        prose = f"docs/{module}_{index}.md"
        text = f"I also updated `{prose}` to describe the retries."
        if index % 5 == 2:
            todo = f"TODO: still need to migrate the {module} fixtures to the new format."
            self.planted.add("todo", todo)
            text += f"\n\n{todo}"
        self.planted.add("prose-file", prose)
        test, test_id = self._call("bash", command=f"pytest -q tests/test_{module}.py")
        self.tokens += 500
        self.tree.append_message(_assistant([{"type": "text", "text": text}, test], self.tokens))
        self._result(test_id, "bash", f"{rng.randint(5, 40)} passed in 0.{rng.randint(1, 9)}s")
        self.tree.append_message(
            _assistant([{"type": "text", "text": f"Done with the {module} client."}], self.tokens)
        )


def _summary_of(tree: SessionTree) -> tuple[str, dict[str, Any]]:
    for entry in reversed(tree.get_branch()):
        if entry.get("type") == "compaction":
            return str(entry["summary"]), dict(entry.get("details") or {})
    return "", {}


def _seen(tree: SessionTree) -> str:
    """Everything the model sees after the compaction: the summary and the kept messages."""
    messages = convert_to_llm(tree.build_session_context().messages)
    return serialize_conversation(messages)


def _kept(kind: str, fact: str, seen: str, details: dict[str, Any]) -> bool:
    if kind == "file":
        return fact in seen or fact in details.get("modifiedFiles", [])
    return fact in seen


def retention(seed: int = 7) -> list[tuple[int, dict[str, tuple[int, int]], int, int]]:
    """(round, {kind: (kept, planted)}, summary tokens, budget) after rounds 1, 5 and 10."""
    settings = CompactionSettings(keep_recent_tokens=2000, adjust_keep_recent_by_usage=False)
    budget = summary_token_budget(settings)
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        tree = SessionTree.open(Path(folder) / "planted.jsonl")
        planted = Planted()
        writer = _Writer(tree, random.Random(seed), planted)
        for round_index in range(1, ROUNDS + 1):
            for turn in range(TURNS_PER_ROUND):
                writer.turn((round_index - 1) * TURNS_PER_ROUND + turn)
            outcome = asyncio.run(compact_session(tree, OfflineSummarizer(), settings=settings))
            if not isinstance(outcome, CompactionOutcome):
                continue
            if round_index in (1, 5, 10):
                summary, details = _summary_of(tree)
                seen = _seen(tree)
                counts = {
                    kind: (sum(_kept(kind, f, seen, details) for f in facts), len(facts))
                    for kind, facts in planted.facts.items()
                }
                rows.append((round_index, counts, text_tokens(summary), budget))
    return rows


def sizes(paths: list[Path]) -> list[tuple[str, int, int, float]]:
    """(session, summary tokens, budget, seconds) of one offline compaction of each file."""
    rows = []
    settings = CompactionSettings()
    for path in paths:
        with tempfile.TemporaryDirectory() as folder:
            copy = Path(folder) / path.name
            shutil.copyfile(path, copy)
            start = time.perf_counter()
            tree = SessionTree.open(copy)
            outcome = asyncio.run(compact_session(tree, OfflineSummarizer(), settings=settings))
            seconds = time.perf_counter() - start
            if isinstance(outcome, CompactionOutcome):
                summary = outcome.result.summary
                rows.append(
                    (path.name, text_tokens(summary), summary_token_budget(settings), seconds)
                )
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.summaries", description=__doc__)
    parser.add_argument(
        "--sessions",
        type=Path,
        nargs="*",
        default=None,
        help="session files to compact (default: the example and a generated 10k and 100k session)",
    )
    args = parser.parse_args(argv)
    console = Console()

    table = Table(
        title="Planted facts kept in the summary (offline summarizer)", title_justify="left"
    )
    table.add_column("round")
    kinds = ("constraint", "decision", "todo", "file", "prose-file")
    for kind in kinds:
        table.add_column(kind, justify="right")
    table.add_column("summary tokens / budget", justify="right")
    for round_index, counts, tokens, budget in retention():
        cells = [f"{counts[k][0]}/{counts[k][1]}" if k in counts else "-" for k in kinds]
        table.add_row(str(round_index), *cells, f"{tokens:,} / {budget:,}")
    console.print(table)

    paths = args.sessions
    with tempfile.TemporaryDirectory() as folder:
        if paths is None:
            from bench.generate import generate_session

            paths = [EXAMPLE]
            for entries in (10_000, 100_000):
                target = Path(folder) / f"bench-{entries // 1000}k.jsonl"
                generate_session(target, entries)
                paths.append(target)
        size_table = Table(
            title="One offline compaction: summary size and wall time", title_justify="left"
        )
        for column in ("session", "summary tokens", "budget", "wall time"):
            size_table.add_column(column, justify="right" if column != "session" else "left")
        for name, tokens, budget, seconds in sizes(paths):
            size_table.add_row(name, f"{tokens:,}", f"{budget:,}", f"{seconds:.2f} s")
        console.print(size_table)


if __name__ == "__main__":
    main()
