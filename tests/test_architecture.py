"""The layer order of docs/library.md "Architecture": every import points down.

A package imports only from packages in lower layers, never from its own layer or above, so
the layers can be read, tested and changed from the bottom up (and no import cycle between
packages can appear). Imports inside functions count as much as those at the top of a module:
they run too. Only imports under ``if TYPE_CHECKING:`` are exempt (annotations, never run).
"""

from __future__ import annotations

import ast
from pathlib import Path

SOURCE = Path(__file__).resolve().parent.parent / "src" / "contextree"

LAYERS: list[set[str]] = [
    {"errors", "entries"},
    {"security", "tokens", "context", "hooks", "llm", "store"},
    {"settings", "session"},
    {"compaction", "recall"},
    {"branching"},
    {"runtime", "eval"},
    {"integrations", "serve"},
    {"cli"},
    {"__init__", "__main__"},  # the package root: `from contextree import SessionTree`, `-m`
]
"""Bottom first; docs/library.md lists the same order with what each layer is for."""


def _layer_of(package: str) -> int:
    for number, layer in enumerate(LAYERS):
        if package in layer:
            return number
    raise AssertionError(f"{package} is in no layer: add it to LAYERS and to docs/library.md")


def _package_of(module_path: Path) -> str:
    relative = module_path.relative_to(SOURCE)
    return relative.parts[0].removesuffix(".py")


def _imported_packages(module_path: Path) -> list[tuple[int, str]]:
    """``(line, package)`` for every contextree import that runs (not under TYPE_CHECKING)."""
    tree = ast.parse(module_path.read_text(encoding="utf-8"))
    annotations_only: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            annotations_only.update(id(inner) for inner in ast.walk(node))
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if id(node) in annotations_only:
            continue
        names: list[str] = []
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        assert not (isinstance(node, ast.ImportFrom) and node.level), (
            f"{module_path}:{node.lineno}: relative import; the codebase uses absolute ones"
        )
        for name in names:
            parts = name.split(".")
            if parts[0] == "contextree" and len(parts) > 1:
                found.append((node.lineno, parts[1]))
    return found


def test_every_package_is_in_exactly_one_layer() -> None:
    packages = {
        _package_of(path)
        for path in SOURCE.glob("*")
        if path.suffix == ".py" or (path / "__init__.py").exists()
    }
    placed = [name for layer in LAYERS for name in layer]
    assert len(placed) == len(set(placed)), "a package is in two layers"
    assert packages - set(placed) == set(), "packages in no layer"
    assert set(placed) - packages == set(), "layers name packages that do not exist"


def test_imports_only_point_down() -> None:
    wrong: list[str] = []
    for path in sorted(SOURCE.rglob("*.py")):
        package = _package_of(path)
        own = _layer_of(package)
        for line, imported in _imported_packages(path):
            if imported == package:
                continue
            if _layer_of(imported) >= own:
                where = path.relative_to(SOURCE.parent)
                wrong.append(
                    f"{where}:{line}: {package} (layer {own}) imports {imported}"
                    f" (layer {_layer_of(imported)})"
                )
    assert wrong == [], "imports against the layer order:\n" + "\n".join(wrong)


def test_the_check_sees_an_upward_import(tmp_path: Path) -> None:
    # The scan itself: an import in a function body counts, one under TYPE_CHECKING does not.
    module = tmp_path / "probe.py"
    module.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from contextree.cli import app\n"
        "def f():\n"
        "    from contextree.runtime import AgentSession\n",
        encoding="utf-8",
    )
    assert _imported_packages(module) == [(5, "runtime")]
