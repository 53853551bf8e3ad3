"""``recall.indexDir``: from user files and the environment, never from a project's files (a
cloned repository must not choose where copies of session text are written)."""

from __future__ import annotations

from pathlib import Path

from contextree.settings.load import load_settings


def test_the_environment_sets_the_index_dir(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path), "CONTEXTREE_RECALL_INDEX_DIR": "/srv/idx"}
    assert load_settings(cwd=tmp_path, env=env).settings.recall_index_dir == "/srv/idx"


def test_a_project_file_may_not_move_the_index(tmp_path: Path) -> None:
    project = tmp_path / "repo"
    (project / ".contextree").mkdir(parents=True)
    (project / ".contextree" / "settings.toml").write_text('[recall]\nindexDir = "/tmp/x"\n')
    loaded = load_settings(cwd=project, env={"HOME": str(tmp_path)})
    assert loaded.settings.recall_index_dir is None
    assert any("recall.indexDir" in warning for warning in loaded.warnings)
