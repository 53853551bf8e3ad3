"""``contextree config`` masks a password in a URL value, as every other printed line does.

``compaction.remoteEndpoint``, ``model`` (``remote:URL``) and ``retry.fallbackModels`` may carry
``user:password@``; ``compact`` printed them masked, ``config`` (a table people paste into bug
reports) in clear.
"""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console

from contextree.cli import render
from contextree.cli.theme import THEME
from contextree.settings.load import load_settings

PASSWORD = "Hunter2-config-Pw"


def test_config_prints_url_passwords_masked(tmp_path: Path) -> None:
    url = f"https://bob:{PASSWORD}@summaries.example/x"
    env = {
        "HOME": str(tmp_path),
        "CONTEXTREE_COMPACTION_REMOTE_ENDPOINT": url,
        "CONTEXTREE_MODEL": f"remote:{url}",
        "CONTEXTREE_RETRY_FALLBACK_MODELS": f'["remote:{url}"]',
    }
    loaded = load_settings(cwd=tmp_path, home=tmp_path / "ct", env=env)
    out = io.StringIO()
    Console(file=out, width=400, no_color=True, theme=THEME).print(render.settings_table(loaded))
    shown = out.getvalue()
    assert PASSWORD not in shown
    assert shown.count("https://bob:***@summaries.example/x") == 3
