"""The framework examples in examples/ run offline, compact, and leave a clean session file.

Each example runs as a user would run it (``python examples/<name>.py SESSION``) in a fresh
process, with one addition: a guard that refuses, and reports on stderr, every connection or
name lookup beyond the loopback interface. ``OPENAI_API_KEY`` is set (``OPENAI_BASE_URL`` is
not, so the example still talks to its fake server) because that is what would let the Agents
SDK's trace exporter try api.openai.com if the example did not switch tracing off.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from contextree import SessionTree
from contextree.session.check import check_session

# (example, the packages it imports besides contextree)
EXAMPLES = [
    ("langchain_example.py", ("langchain", "langchain_core", "langgraph", "langchain_openai")),
    ("openai_agents_example.py", ("agents", "openai")),
    ("pydantic_ai_example.py", ("pydantic_ai", "openai")),
]

GUARD = """\
import ipaddress, runpy, socket, sys

def _local(host):
    if host in (None, "", "localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False

def _refuse(what):
    print(f"guard: refused {what}", file=sys.stderr)
    return ConnectionRefusedError(f"examples run offline: {what}")

_connect, _getaddrinfo = socket.socket.connect, socket.getaddrinfo

def connect(self, address):
    if isinstance(address, tuple) and not _local(address[0]):
        raise _refuse(f"a connection to {address!r}")
    return _connect(self, address)

def getaddrinfo(host, *args, **kwargs):
    name = host.decode() if isinstance(host, bytes) else host
    if not _local(name):
        raise _refuse(f"a lookup of {name!r}")
    return _getaddrinfo(host, *args, **kwargs)

socket.socket.connect = connect
socket.getaddrinfo = getaddrinfo
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def missing(packages: tuple[str, ...]) -> list[str]:
    return [name for name in packages if importlib.util.find_spec(name) is None]


@pytest.mark.parametrize(("example", "packages"), EXAMPLES, ids=[e for e, _ in EXAMPLES])
def test_the_example_runs_offline_and_compacts(
    example: str, packages: tuple[str, ...], tmp_path: Path, repo_root: Path
) -> None:
    if absent := missing(packages):
        pytest.skip(f"{example} needs {', '.join(absent)}")
    session = tmp_path / "example.jsonl"
    env = {
        **os.environ,
        # This checkout's contextree, not whichever one the interpreter has installed.
        "PYTHONPATH": os.pathsep.join([str(repo_root / "src"), os.environ.get("PYTHONPATH", "")]),
        "OPENAI_API_KEY": "sk-example-test",
    }
    env.pop("OPENAI_BASE_URL", None)
    script = repo_root / "examples" / example

    done = subprocess.run(
        [sys.executable, "-c", GUARD, str(script), str(session)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env=env,
    )

    assert done.returncode == 0, done.stderr
    assert "guard: refused" not in done.stderr
    assert "turn 7: Module 7 reviewed." in done.stdout
    # Issue 24 point 9: "1 compaction", "2 compactions" (the LangChain one said "1 compactions").
    counted = re.search(r"\b(\d+) compaction(s?)\b", done.stdout)
    assert counted is not None and (counted.group(1) == "1") == (counted.group(2) == "")
    assert f"contextree context {session}" in done.stdout
    tree = SessionTree.open(session)
    assert tree.report.clean
    assert check_session(tree).findings == []
    assert [e for e in tree.get_entries() if e["type"] == "compaction"]
    first = tree.build_session_context().messages[0]
    assert first["role"] == "compactionSummary"
