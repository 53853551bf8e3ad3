"""Importing contextree never imports a framework; without one, its integration names the extra."""

from __future__ import annotations

import subprocess
import sys

import pytest

# (integration module, the framework's top-level packages, the extra that installs them)
INTEGRATIONS = [
    ("langchain", ("langchain", "langchain_core", "langgraph", "langchain_openai"), "langchain"),
    ("openai_agents", ("agents",), "openai-agents"),
    ("pydantic_ai", ("pydantic_ai",), "pydantic-ai"),
]


def run(code: str) -> str:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()


@pytest.mark.parametrize(("integration", "packages", "extra"), INTEGRATIONS)
def test_importing_contextree_never_imports_the_framework(
    integration: str, packages: tuple[str, ...], extra: str
) -> None:
    code = (
        "import sys, contextree, contextree.integrations, contextree.integrations.core\n"
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {packages!r}))\n"
    )
    assert run(code) == "[]"


def test_no_module_outside_the_framework_integrations_imports_a_framework() -> None:
    # Every module of the package (the CLI, the runtime, the stores...) but the three
    # framework integrations, found by file (pkgutil.walk_packages would import the
    # integrations' packages to look inside them).
    frameworks = sorted({name for _, packages, _ in INTEGRATIONS for name in packages})
    skipped = tuple(f"contextree.integrations.{integration}" for integration, _, _ in INTEGRATIONS)
    code = (
        "import importlib, pathlib, sys, contextree\n"
        "root = pathlib.Path(contextree.__file__).parent\n"
        "names = []\n"
        "for path in sorted(root.rglob('*.py')):\n"
        "    parts = list(path.relative_to(root.parent).with_suffix('').parts)\n"
        "    if parts[-1] == '__init__':\n"
        "        parts.pop()\n"
        "    name = '.'.join(parts)\n"
        f"    if name.endswith('__main__') or name.startswith({skipped!r}):\n"
        "        continue\n"
        "    importlib.import_module(name)\n"
        "    names.append(name)\n"
        f"found = sorted({{m for m in sys.modules if m.split('.')[0] in {frameworks!r}}})\n"
        "print(len(names), found)\n"
    )
    count, found = run(code).split(" ", 1)
    assert int(count) > 100  # the walk found the package
    assert found == "[]"


@pytest.mark.parametrize(("integration", "packages", "extra"), INTEGRATIONS)
def test_without_the_framework_the_import_error_names_the_extra(
    integration: str, packages: tuple[str, ...], extra: str
) -> None:
    # A meta-path finder that hides the framework, as on a machine without the extra.
    code = (
        "import sys\n"
        "class Hide:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        f"        if name.split('.')[0] in {packages!r}:\n"
        "            raise ImportError(f'No module named {name!r}')\n"
        "sys.meta_path.insert(0, Hide())\n"
        "try:\n"
        f"    import contextree.integrations.{integration}\n"
        "except ImportError as exc:\n"
        "    print(exc)\n"
    )
    assert f'pip install "contextree[{extra}]"' in run(code)
