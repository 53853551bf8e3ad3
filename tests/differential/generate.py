"""Seed-generated session trees for the differential tests.

A session is built with contextree's own ``SessionTree`` (and compacted with its own
``prepare_compaction``), the way an agent builds one: turns of a user message and assistant
steps whose tool calls are answered by results. Between turns it branches, starts new roots,
changes metadata, runs ``!bash``, adds custom messages (as ``custom_message`` entries and as
v3 ``custom`` messages), leaves branch summaries and compacts. The contents are chosen to reach
the corners of the shared algorithms: texts of every size around the keep budgets and the
2,000-character tool-result cut (with surrogate pairs on the cut), images, empty texts,
thinking, failed replies, tool-call arguments with integer-like keys, floats and nesting.

Everything is drawn from ``random.Random(seed)``, so a seed names a session exactly.
"""

from __future__ import annotations

import itertools
import random
from pathlib import Path
from typing import Any

from contextree.compaction.prepare import CompactionPreparation, prepare_compaction
from contextree.entries.ids import ms_to_iso
from contextree.session import SessionTree
from contextree.settings import CompactionSettings
from contextree.store import JsonlFileStore

Json = dict[str, Any]

BASE_MS = 1_767_225_600_000
KEEPS = (1, 30, 200, 1000, 20000)
"""The keep budgets the tests compare: pi's default (20,000) and small ones that cut often."""

_ALPHABETS = (
    "abcdefghij klmnop\n",
    'é ü ß ø — “quoted” \\ " \t',
    "日本語のテキスト",
    "😀🎉👍🏽",  # surrogate pairs: UTF-16 lengths differ from Python's
)
_SIZES = (0, 3, 40, 300, 1200, 1999, 2000, 2001, 2600, 9000)
_PATHS = ("src/app.py", "src/util/io.py", "README.md", "tests/test_app.py", "docs/ünïcode.md")


class _Gen:
    def __init__(self, seed: int, path: Path, resets: bool) -> None:
        self.rng = random.Random(seed)
        self.resets = resets
        self.clock = itertools.count(1)
        ids = itertools.count(1)

        def new_id(exists: Any) -> str:
            while True:
                candidate = f"{seed % 4096:03x}{next(ids):05x}"
                if not exists(candidate):
                    return candidate

        self.new_id = new_id
        self.tree = SessionTree(
            JsonlFileStore(path),
            cwd="/work/project",
            now=lambda: ms_to_iso(BASE_MS + 1000 * next(self.clock)),
            new_id=new_id,
            session_id=f"gen-{seed}",
        )
        self.calls = itertools.count(1)

    # -- contents ------------------------------------------------------------------------------

    def text(self, size: int | None = None) -> str:
        rng = self.rng
        size = rng.choice(_SIZES) if size is None else size
        alphabet = rng.choice(_ALPHABETS)
        out = "".join(rng.choice(alphabet) for _ in range(min(size, 64)))
        return (out * (size // max(len(out), 1) + 1))[:size] if out else ""

    def ms(self) -> int:
        return BASE_MS + 1000 * next(self.clock)

    def user(self) -> Json:
        rng = self.rng
        if rng.random() < 0.25:
            content: Any = self.text(rng.choice((3, 40, 300)))
        else:
            content = [{"type": "text", "text": self.text()}]
            if rng.random() < 0.15:
                content.append({"type": "image", "data": "aGVsbG8=", "mimeType": "image/png"})
            if rng.random() < 0.15:
                content.append({"type": "text", "text": self.text(40)})
        return {"role": "user", "content": content, "timestamp": self.ms()}

    def arguments(self, name: str) -> Json:
        rng = self.rng
        if name in ("read", "write", "edit"):
            args: Json = {"path": rng.choice(_PATHS)}
            if name == "read" and rng.random() < 0.4:
                args.update(offset=rng.choice((1, 20, 300)), limit=rng.choice((10, 2.5, 1e21)))
            if name == "write":
                args["content"] = self.text(rng.choice((3, 40, 300)))
            if name == "edit":
                args.update(oldText=self.text(20), newText=self.text(20))
            if rng.random() < 0.1:
                args["path"] = ""  # ignored by the file tracking
            return args
        if name == "bash":
            return {"command": "pytest -q", "timeout": rng.choice((30, 0.5, -1))}
        return {
            "2": "integer-like keys come first in JavaScript",
            "b": [1, 2.25, None, True, {"x": "ü"}],
            "1": {"nested": {"deep": "😀"}},
            "a": -0.0 if rng.random() < 0.3 else 3.0,
        }

    def assistant(self, n_calls: int) -> tuple[Json, list[tuple[str, str]]]:
        rng = self.rng
        content: list[Json] = []
        if rng.random() < 0.3:
            content.append({"type": "thinking", "thinking": self.text(rng.choice((0, 40, 300)))})
        for _ in range(rng.choice((0, 1, 1, 1, 2))):
            content.append({"type": "text", "text": self.text()})
        calls = []
        for _ in range(n_calls):
            name = rng.choice(("read", "read", "write", "edit", "bash", "search"))
            call_id = f"call_{next(self.calls)}"
            calls.append((call_id, name))
            content.append(
                {"type": "toolCall", "id": call_id, "name": name, "arguments": self.arguments(name)}
            )
        total = rng.choice((0, 1500, 25000, 180000))
        usage: Json = {
            "input": total // 2,
            "output": 50,
            "cacheRead": total // 4,
            "cacheWrite": 0,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
        }
        if rng.random() < 0.7:
            usage["totalTokens"] = total
        stop = "toolUse" if calls else rng.choice(("stop", "stop", "length"))
        message: Json = {
            "role": "assistant",
            "content": content,
            "api": "openai-completions",
            "provider": rng.choice(("openai", "anthropic")),
            "model": rng.choice(("gpt-4o-mini", "claude-sonnet-4-5")),
            "usage": usage,
            "stopReason": stop,
            "timestamp": self.ms(),
        }
        if not calls and rng.random() < 0.08:
            message["stopReason"] = rng.choice(("error", "aborted"))
            message["errorMessage"] = "upstream failed"
        return message, calls

    def tool_result(self, call_id: str, name: str) -> Json:
        rng = self.rng
        content: list[Json] = []
        if rng.random() > 0.05:
            content.append({"type": "text", "text": self.text()})
        if rng.random() < 0.1:
            content.append({"type": "image", "data": "aGVsbG8=", "mimeType": "image/png"})
        message: Json = {
            "role": "toolResult",
            "toolCallId": call_id,
            "toolName": name,
            "content": content,
            "isError": rng.random() < 0.15,
            "timestamp": self.ms(),
        }
        if rng.random() < 0.2:
            message["details"] = {"exitCode": 0}
        return message

    def bash(self) -> Json:
        rng = self.rng
        message: Json = {
            "role": "bashExecution",
            "command": rng.choice(("ls", "make test", "git status")),
            "output": self.text(rng.choice((0, 40, 300, 2600))),
            "exitCode": rng.choice((0, 0, 1, 127, None)),
            "cancelled": rng.random() < 0.1,
            "truncated": False,
            "timestamp": self.ms(),
        }
        if rng.random() < 0.15:
            message.update(truncated=True, fullOutputPath="/tmp/pi-bash-1.log")
        if rng.random() < 0.15:
            message["excludeFromContext"] = True
        return message

    # -- operations ----------------------------------------------------------------------------

    def turn(self) -> None:
        tree, rng = self.tree, self.rng
        tree.append_message(self.user())
        for _ in range(rng.choice((1, 1, 2, 3))):
            message, calls = self.assistant(rng.choice((0, 0, 1, 1, 2)))
            tree.append_message(message)
            for call_id, name in calls:
                tree.append_message(self.tool_result(call_id, name))
            if not calls:
                break

    def pick(self) -> str | None:
        path = self.tree.get_branch() or self.tree.get_entries()
        if not path:
            return None
        return str(path[-1 - self.rng.randrange(min(len(path), 14))]["id"])

    def compact(self) -> None:
        tree, rng = self.tree, self.rng
        settings = CompactionSettings(
            keep_recent_tokens=rng.choice(KEEPS[:-1]),
            adjust_keep_recent_by_usage=rng.random() < 0.3,
        )
        plan = prepare_compaction(tree.get_branch(), settings)
        if not isinstance(plan, CompactionPreparation):
            return
        summary = "## Goal\n" + self.text(rng.choice((40, 300, 1200)))
        details: Any = None
        if rng.random() < 0.7:
            details = {
                "readFiles": rng.sample(_PATHS, rng.randrange(3)),
                "modifiedFiles": rng.sample(_PATHS, rng.randrange(3)),
            }
        first_kept = plan.first_kept_entry_id
        if rng.random() < 0.05:
            # A first kept entry that is not on the path (a hook's mistake): nothing is kept.
            first_kept = rng.choice([str(e["id"]) for e in tree.get_entries()] + ["0badc0de"])
        tree.append_compaction(
            summary,
            first_kept,
            plan.tokens_before,
            details,
            from_extension=rng.random() < 0.15,
            tokens_after=rng.choice((None, 1234)),
            method=rng.choice((None, "soft")),
        )

    def step(self) -> None:
        tree, rng = self.tree, self.rng
        roll = rng.random()
        if roll < 0.40:
            self.turn()
        elif roll < 0.47:
            tree.append_message(self.bash())
        elif roll < 0.52:
            content: Any = self.text(rng.choice((3, 300)))
            if rng.random() < 0.5:
                content = [{"type": "text", "text": content}]
            tree.append_custom_message(
                "ext.note",
                content,
                display=rng.random() < 0.7,
                details={"n": 1} if rng.random() < 0.5 else None,
            )
        elif roll < 0.55:
            # A v3 custom message stored as a message entry (a cut point for pi).
            tree.append_message(
                {
                    "role": "custom",
                    "customType": "ext.inline",
                    "content": self.text(40),
                    "display": True,
                    "timestamp": self.ms(),
                }
            )
        elif roll < 0.64:
            target = self.pick()
            if target is not None:
                tree.branch(target)
            if rng.random() < 0.1:
                tree.reset_leaf()
        elif roll < 0.70:
            details = None
            if rng.random() < 0.5:
                details = {"readFiles": ["src/app.py"], "modifiedFiles": []}
            summary = "" if rng.random() < 0.15 else "Branch: " + self.text(rng.choice((40, 300)))
            tree.branch_with_summary(self.pick(), summary, details, rng.random() < 0.1)
        elif roll < 0.82:
            self.compact()
        elif self.resets and roll < 0.86:
            # oh-my-pi's /clear (pi does not know the entry).
            tree.append_entry(
                {
                    "type": "reset_boundary",
                    "id": self.new_id(tree.has_entry),
                    "parentId": tree.leaf_id,
                    "timestamp": ms_to_iso(self.ms()),
                }
            )
        else:
            kind = rng.choice(("thinking", "model", "label", "custom", "info"))
            if kind == "thinking":
                tree.append_thinking_level_change(rng.choice(("off", "low", "high")))
            elif kind == "model":
                tree.append_model_change("openai", rng.choice(("gpt-4o", "o3")))
            elif kind == "label":
                target = self.pick()
                if target is not None:
                    tree.append_label(target, rng.choice(("mark", None)))
            elif kind == "custom":
                tree.append_custom("ext.state", {"n": rng.randrange(5)})
            else:
                tree.append_session_info("Generated session")


def generate_session(
    seed: int, path: Path, *, steps: int | None = None, resets: bool = False
) -> SessionTree:
    """Write the session of ``seed`` to ``path`` (a new file) and return its tree.

    ``resets`` also adds oh-my-pi's ``reset_boundary`` entries (for oh-my-pi only: pi 0.73.1
    does not know them).
    """
    gen = _Gen(seed, path, resets)
    gen.turn()
    for _ in range(steps if steps is not None else gen.rng.randrange(15, 45)):
        gen.step()
    gen.tree.flush()
    return gen.tree
