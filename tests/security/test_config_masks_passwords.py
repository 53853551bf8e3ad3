"""``contextree config`` masks a password in a URL value, as every other printed line does.

``compaction.remoteEndpoint``, ``model`` (``remote:URL``) and ``retry.fallbackModels`` may carry
``user:password@``; ``compact`` printed them masked, ``config`` (a table people paste into bug
reports) in clear.
"""

from __future__ import annotations

from reliability.fuzzing import run_cli

PASSWORD = "Hunter2-config-Pw"


def test_config_prints_url_passwords_masked() -> None:
    url = f"https://bob:{PASSWORD}@summaries.example/x"
    env = {
        "COLUMNS": "300",
        "CONTEXTREE_COMPACTION_REMOTE_ENDPOINT": url,
        "CONTEXTREE_MODEL": f"remote:{url}",
        "CONTEXTREE_RETRY_FALLBACK_MODELS": f'["remote:{url}"]',
    }
    outcome = run_cli(["config"], env=env)
    assert outcome.exit_code == 0, outcome.stderr
    assert PASSWORD not in outcome.stdout + outcome.stderr
    assert outcome.stdout.count("https://bob:***@summaries.example/x") == 3
