"""``sessions`` and ``chat --continue`` also look in oh-my-pi's session folder (issue 12
point 5): ``~/.omp/agent/sessions/<name>/``, the name relative to home or temp as omp makes it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from cli_env import clean_cli_env, invoke, ok, reset_consoles, session_file
from fakes.fake_llm import FakeLLMServer


@pytest.fixture(autouse=True)
def clean_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in ("XDG_DATA_HOME", "PI_CONFIG_DIR", "TMPDIR"):
        monkeypatch.delenv(name, raising=False)
    clean_cli_env(tmp_path, monkeypatch)
    yield
    reset_consoles()


def test_omp_names_folders_relative_to_home_and_temp(tmp_path: Path) -> None:
    from contextree.session.paths import omp_sessions_dir

    home = tmp_path / "me"
    (home / "src" / "app").mkdir(parents=True)
    temp = tmp_path / "temp"
    (temp / "job").mkdir(parents=True)
    env = {"HOME": str(home), "TMPDIR": str(temp) + "/"}
    root = home / ".omp" / "agent" / "sessions"
    assert omp_sessions_dir(home, env) == root / "-"
    assert omp_sessions_dir(home / "src" / "app", env) == root / "-src-app"
    assert omp_sessions_dir(temp, env) == root / "-tmp"
    assert omp_sessions_dir(temp / "job", env) == root / "-tmp-job"
    assert omp_sessions_dir(Path("/opt/x:y"), env) == root / "--opt-x-y--"
    # a symlink names the folder of its target, as omp resolves the real path
    (home / "link").symlink_to(home / "src" / "app")
    assert omp_sessions_dir(home / "link", env) == root / "-src-app"
    assert omp_sessions_dir(home, {**env, "PI_CONFIG_DIR": ".omp-dev"}).parent == (
        home / ".omp-dev" / "agent" / "sessions"
    )


def test_omp_uses_xdg_data_home_once_its_folder_exists(tmp_path: Path) -> None:
    from contextree.session.paths import omp_sessions_root

    env = {"HOME": str(tmp_path), "XDG_DATA_HOME": str(tmp_path / "data")}
    assert omp_sessions_root(env) == tmp_path / ".omp" / "agent" / "sessions"
    (tmp_path / "data" / "omp").mkdir(parents=True)
    assert omp_sessions_root(env) == tmp_path / "data" / "omp" / "sessions"


def test_sessions_lists_ours_pis_and_omps_for_this_directory() -> None:
    from contextree.session.paths import omp_sessions_dir, pi_sessions_dir, sessions_dir

    cwd = Path.cwd()
    ours = session_file(sessions_dir(cwd), "10-00-00", "ours", 1_767_225_600)
    pis = session_file(pi_sessions_dir(cwd), "11-00-00", "from pi", 1_767_225_700)
    omps = session_file(omp_sessions_dir(cwd), "12-00-00", "from omp", 1_767_225_800)
    listed = json.loads(ok("sessions", "--format", "json").stdout)
    assert [item["path"] for item in listed] == [str(omps), str(pis), str(ours)]
    everything = json.loads(ok("sessions", "--all", "-f", "json").stdout)
    assert [item["path"] for item in everything] == [str(omps), str(pis), str(ours)]
    assert str(omp_sessions_dir(cwd)) in "".join(ok("sessions").stdout.split())


def test_chat_continue_takes_the_newest_including_omps(fake_llm: FakeLLMServer) -> None:
    from contextree.session.paths import latest_session, omp_sessions_dir, sessions_dir

    cwd = Path.cwd()
    session_file(sessions_dir(cwd), "10-00-00", "ours", 1_767_225_600)
    omps = session_file(omp_sessions_dir(cwd), "12-00-00", "from omp", 1_767_225_800)
    assert latest_session(cwd) == omps
    fake_llm.enqueue_text("Continued.")
    result = invoke(
        "chat", "--model", "openai:gpt-x", "--base-url", fake_llm.url, "-c", "-p", "Next?"
    )
    assert result.exit_code == 0, result.output
    assert "Next?" in omps.read_text(encoding="utf-8")
