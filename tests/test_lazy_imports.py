"""Commands that only read a session do not import the HTTP stack (issue 27 item 5: `context`
spent a third of its time importing httpx through cli.render -> compaction -> llm)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest


def _imports(module: str, code: str) -> bool:
    probe = f"{code}\nimport sys\nprint({module!r} in sys.modules)"
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120
    )
    return done.stdout.strip().splitlines()[-1] == "True"


def _imports_httpx(code: str) -> bool:
    return _imports("httpx", code)


def test_reading_modules_do_not_import_httpx() -> None:
    assert not _imports_httpx("import contextree.llm, contextree.compaction.run")
    assert not _imports_httpx("import contextree.cli.render")


def test_the_lazy_names_still_resolve() -> None:
    assert _imports_httpx("from contextree.llm import OpenAIClient")
    import contextree.llm as llm

    for name in llm.__all__:
        assert getattr(llm, name) is not None


def test_a_packages_submodules_are_its_attributes_though_it_loads_them_lazily() -> None:
    # In a fresh interpreter: here other tests have imported the submodules already.
    code = (
        "import contextree.compaction as c\n"
        "assert callable(c.prune.prune_session)\n"
        "assert callable(c.offline.facts.extract_facts)\n"
        "assert not hasattr(c, 'no_such_module') and not hasattr(c.offline, '_private')\n"
    )
    assert _imports("contextree.compaction.prune", code)


@pytest.mark.parametrize("module", ["httpx", "contextree.serve"])
def test_compact_with_the_offline_summarizer_imports_no_network_code(
    module: str, tmp_path: Path
) -> None:
    # Nothing leaves the machine, so the one-line note about where the conversation goes
    # needs no HTTP client (it imported httpx: 0.12 s of `contextree compact`) and no loopback
    # check from the summary server (16 ms).
    session = tmp_path / "s.jsonl"
    example = Path(__file__).resolve().parents[1] / "examples" / "todo-api-session.jsonl"
    shutil.copyfile(example, session)
    code = (
        "import sys\n"
        f"sys.argv = ['contextree', 'compact', {str(session)!r}, '--quiet']\n"
        "from contextree.cli.app import main\n"
        "try:\n    main()\nexcept SystemExit as exit:\n    assert not exit.code, exit.code\n"
    )
    assert not _imports(module, code)
    assert '"type":"compaction"' in session.read_text(encoding="utf-8")


def test_reading_a_session_imports_no_hash_or_random_module() -> None:
    # hashlib (only v1 migrations and derived ids need it) and secrets (a temp name) cost about
    # 9 ms of every `contextree context` call when imported at the top of their modules.
    example = Path(__file__).resolve().parents[1] / "examples" / "todo-api-session.jsonl"
    code = (
        "import contextree.cli.context_fast, contextree.cli.context_render\n"
        "from contextree import SessionTree\n"
        f"SessionTree.open({str(example)!r}, create=False).build_session_context()\n"
    )
    for module in ("hashlib", "secrets"):
        assert not _imports(module, code), module
