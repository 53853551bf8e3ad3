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
    {"security", "tokens", "context", "hooks", "llm", "store", "text"},
    {"settings", "session"},
    {"compaction", "recall", "report"},
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


def _module_name(path: Path, source: Path = SOURCE) -> str:
    parts = path.relative_to(source.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _module_imports(module_path: Path, modules: set[str]) -> set[str]:
    """The contextree modules ``module_path`` imports where it runs (not under TYPE_CHECKING):
    ``from a.b import c`` names the module ``a.b.c`` when there is one, else ``a.b``."""
    tree = ast.parse(module_path.read_text(encoding="utf-8"))
    annotations_only: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            annotations_only.update(id(inner) for inner in ast.walk(node))
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in annotations_only:
            continue
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            for alias in node.names:
                inner = f"{node.module}.{alias.name}"
                found.add(inner if inner in modules else node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found & modules


def _cycles_inside_packages(source: Path = SOURCE) -> list[list[str]]:
    """Import cycles among the modules of one package (its ``__init__`` aside: a package's
    ``__init__`` re-exports what its modules define)."""
    paths = {_module_name(p, source): p for p in source.rglob("*.py") if p.name != "__init__.py"}
    modules = set(paths)
    graph = {
        name: {
            other
            for other in _module_imports(path, modules)
            if other != name and other.rpartition(".")[0] == name.rpartition(".")[0]
        }
        for name, path in paths.items()
    }
    cycles: list[list[str]] = []
    for start in sorted(graph):
        # A path back to ``start`` through modules that sort after it: each cycle once.
        stack = [(start, [start])]
        seen: set[str] = set()
        while stack:
            name, trail = stack.pop()
            for other in sorted(graph[name]):
                if other == start:
                    cycles.append(trail)
                elif other > start and other not in seen:
                    seen.add(other)
                    stack.append((other, [*trail, other]))
    return cycles


def test_no_import_cycle_between_modules_of_a_package() -> None:
    cycles = _cycles_inside_packages()
    assert cycles == [], "import cycles inside a package:\n" + "\n".join(
        " -> ".join([*cycle, cycle[0]]) for cycle in cycles
    )


def test_the_check_sees_a_cycle_through_a_function_level_import(tmp_path: Path) -> None:
    package = tmp_path / "contextree" / "things"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "one.py").write_text("from contextree.things import two\n", encoding="utf-8")
    (package / "two.py").write_text(
        "def f():\n    from contextree.things.one import g\n", encoding="utf-8"
    )
    (package / "three.py").write_text("from contextree.things import two\n", encoding="utf-8")
    cycles = _cycles_inside_packages(tmp_path / "contextree")
    assert cycles == [["contextree.things.one", "contextree.things.two"]]


def _private_imports(package: Path) -> list[str]:
    """``module: name`` for every underscore name a module of ``package`` imports from a
    sibling module."""
    found = []
    prefix = ".".join(("contextree", *package.relative_to(SOURCE).parts))
    for path in sorted(package.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(prefix + "."):
                found += [
                    f"{path.stem}: {alias.name}"
                    for alias in node.names
                    if alias.name.startswith("_") and not alias.name.startswith("__")
                ]
    return found


def test_the_offline_summarizer_modules_share_no_private_names() -> None:
    # Issue 29 point 6: split from one file, its modules imported 143 private names from
    # each other; what a sibling uses is public (small surfaces, no underscores).
    assert _private_imports(SOURCE / "compaction" / "offline") == []


def test_no_import_cycle_between_the_benchmark_modules() -> None:
    assert _cycles_inside_packages(SOURCE.parent.parent / "bench") == []

MAX_MODULE_LINES = 700
MAX_FUNCTION_LINES = 80
"""Issue 29 point 4: a module or a function past these is to be split (nested functions count
inside their parent, and a command's option signature counts too)."""

def _size_offences(root: Path) -> list[str]:
    """``path: name (N lines)`` for every module over MAX_MODULE_LINES lines and every function
    or method over MAX_FUNCTION_LINES (``def`` line to last line) under ``root``."""
    found = []
    for path in sorted(root.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        name = path.relative_to(root).as_posix()
        if len(text.splitlines()) > MAX_MODULE_LINES:
            found.append(f"{name} ({len(text.splitlines())} lines)")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                assert node.end_lineno is not None
                length = node.end_lineno - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    found.append(f"{name}: {node.name} ({length} lines)")
    return found


def test_no_module_or_function_is_too_long() -> None:
    offences = _size_offences(SOURCE)
    assert offences == [], "split these:\n" + "\n".join(offences)


def test_the_size_check_sees_a_long_module_and_function(tmp_path: Path) -> None:
    body = "".join(f"    x{n} = {n}\n" for n in range(MAX_FUNCTION_LINES))
    (tmp_path / "big.py").write_text("def f():\n" + body + "\n" * MAX_MODULE_LINES)
    assert _size_offences(tmp_path) == ["big.py (781 lines)", "big.py: f (81 lines)"]
