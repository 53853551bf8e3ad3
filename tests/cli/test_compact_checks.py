"""``compact --dry-run`` checks what the run checks: a model spec the run refuses is refused
by the dry run with the same line (it used to exit 0 with "the summary call (foo) is not
priced"), and a prompts directory that is not one is an error naming it, dry run or not (it
used to be ignored without a word)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_env import invoke
from core_helpers import Chain, assistant, chars, header, jsonl, user

pytestmark = pytest.mark.usefixtures("clean_cli")


def _session(path: Path) -> Path:
    chain = Chain()
    for turn in range(6):
        chain.msg(user(f"step {turn} " + chars(300)))
        chain.msg(assistant(f"done {turn} " + chars(300)))
    path.write_bytes(jsonl(header(), *chain.entries))
    return path


def _error(args: tuple[object, ...]) -> str:
    result = invoke("compact", *args)
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    (line,) = result.output.strip().splitlines()
    return line


@pytest.mark.parametrize("spec", ["foo", "nosuch:model", "remote:", "remote:ftp://x"])
def test_the_dry_run_refuses_a_model_as_the_run_does(tmp_path: Path, spec: str) -> None:
    path = _session(tmp_path / "s.jsonl")
    before = path.read_bytes()
    keep = ("--keep-recent", "100")
    dry = _error(("--dry-run", "--model", spec, *keep, path))
    real = _error(("--model", spec, *keep, path))
    assert dry == real and dry.startswith("error: ")
    assert path.read_bytes() == before


@pytest.mark.parametrize("dry_run", [True, False], ids=["dry-run", "run"])
@pytest.mark.parametrize("kind", ["missing", "a file"])
def test_a_prompts_dir_that_is_not_a_directory_is_an_error(
    tmp_path: Path, dry_run: bool, kind: str
) -> None:
    path = _session(tmp_path / "s.jsonl")
    before = path.read_bytes()
    prompts = tmp_path / "prompts"
    if kind == "a file":
        prompts.write_text("not a directory")
    flags = ["--dry-run"] if dry_run else []
    line = _error((*flags, "--prompts-dir", prompts, "--keep-recent", "100", path))
    problem = "is not a directory" if kind == "a file" else "does not exist"
    assert line.startswith(f'error: --prompts-dir / prompts.dir: "{prompts}" {problem}')
    assert path.read_bytes() == before


def test_the_setting_is_checked_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _session(tmp_path / "s.jsonl")
    monkeypatch.setenv("CONTEXTREE_PROMPTS_DIR", str(tmp_path / "nope"))
    line = _error(("--dry-run", path))
    assert f'"{tmp_path / "nope"}" does not exist' in line


def test_a_prompts_dir_that_exists_is_used(tmp_path: Path) -> None:
    path = _session(tmp_path / "s.jsonl")
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    result = invoke("compact", "--dry-run", "--prompts-dir", prompts, "--keep-recent", "100", path)
    assert result.exit_code == 0, result.output
