"""Issue 12 point 9: a branch on one entry type, role or content kind uses the typed guards of
``contextree.entries.types`` (``entry_message``, ``is_tool_result_message``, ...), after which
mypy checks the fields read, instead of ``x.get("type") == "..."`` which mypy cannot check.

The sites left are listed with the reason each one stays; a new comparison fails this test.
Membership tests (``kind in (...)``) and ``match`` dispatch classify without narrowing and are
not counted. Foreign shapes are out of scope: provider wire formats (``llm/``) and framework
items (``integrations/``) are not entries.
"""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

from contextree.entries.types import ENTRY_TYPES, MESSAGE_ROLES

SOURCE = Path(__file__).resolve().parents[2] / "src" / "contextree"
TAGS = ENTRY_TYPES | MESSAGE_ROLES | {"text", "image", "thinking", "toolCall"}
NOT_ENTRIES = ("llm/", "integrations/")

ALLOWED: dict[str, tuple[int, str]] = {
    "compaction/offline/developer.py": (
        1,
        "a developer message has no shape of its own: it is read as the user's (issue 25)",
    ),
    "context/build.py": (1, "the hot path of every context: the tag is read once per entry"),
    "runtime/agent.py": (1, "the reply is passed on as an AgentMessage"),
    "runtime/triggers.py": (1, "returns the message itself as an AgentMessage"),
    "store/migrations.py": (1, "renames pi's pre-v3 role in a raw dict (no shape for it)"),
}


def _tag_comparisons(path: Path) -> int:
    count = 0
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Compare) or len(node.ops) != 1:
            continue
        if not isinstance(node.ops[0], ast.Eq | ast.NotEq):
            continue
        left, right = node.left, node.comparators[0]
        is_tag_read = (
            isinstance(left, ast.Call)
            and isinstance(left.func, ast.Attribute)
            and left.func.attr == "get"
            and len(left.args) == 1
            and isinstance(left.args[0], ast.Constant)
            and left.args[0].value in ("type", "role")
        )
        if is_tag_read and isinstance(right, ast.Constant) and right.value in TAGS:
            count += 1
    return count


def test_tag_branches_use_the_guards() -> None:
    found = Counter(
        {
            str(path.relative_to(SOURCE)): n
            for path in SOURCE.rglob("*.py")
            if not str(path.relative_to(SOURCE)).startswith(NOT_ENTRIES)
            and (n := _tag_comparisons(path))
        }
    )
    allowed = Counter({module: n for module, (n, _) in ALLOWED.items()})
    assert found == allowed, (
        "compare an entry's type or a message's role through contextree.entries.types "
        f"(entry_message, is_*): found {dict(found)}"
    )
