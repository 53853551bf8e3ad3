"""Secret-holding environment variables whose names the ``*_TOKEN``-style suffixes missed.

The chat agent's bash tool inherits every variable but ``*_API_KEY``; what a command prints
is stored and sent redacted, and a bare value (``echo $PGPASSWORD``) is caught only when its
variable is one :func:`environment_secrets` names. libpq's ``PGPASSWORD``, MySQL's
``MYSQL_PWD``, Django's ``SECRET_KEY``, a Sentry DSN or a Slack webhook URL used to pass.
"""

from __future__ import annotations

import pytest

from contextree.security import Redactor, environment_secrets

MISSED = {
    "PGPASSWORD": "pg-Secret-Value-9xK2",
    "MYSQL_PWD": "mysql-Secret-Q7rT",
    "SECRET_KEY": "django-Secret-Key-Z8wP3v",
    "PASSWORD": "plain-Password-77aa",
    "TOKEN": "plain-Token-value-42",
    "DEPLOY_PRIVATE_KEY": "deploy-Private-Key-0a9",
    "SENTRY_DSN": "https://abcdef0123456789abcdef@o1.ingest.sentry.io/1",
    "SLACK_WEBHOOK_URL": "https://hooks.slack.com/services/T000/B000/XXXXXXXXXXXXXXXX",
    "NPM_CONFIG__AUTH": "bnBtYXV0aHNlY3JldA==",
}


@pytest.mark.parametrize("name", sorted(MISSED))
def test_a_bare_value_printed_by_a_command_is_redacted(name: str) -> None:
    value = MISSED[name]
    redactor = Redactor(literals=environment_secrets({name: value, "PATH": "/usr/bin"}))
    out = redactor.redact(f"$ echo ${name}\n{value}\n")
    assert value not in out and "[REDACTED:" in out


def test_the_working_directories_and_ordinary_variables_are_not_secrets() -> None:
    env = {
        "PWD": "/home/dev/project",
        "OLDPWD": "/home/dev/elsewhere",
        "HOME": "/home/dev",
        "SSH_AUTH_SOCK": "/tmp/ssh-agent.sock",
        "GOOGLE_APPLICATION_CREDENTIALS": "/home/dev/creds.json",
        "KEYBOARD_LAYOUT": "us-international",
    }
    assert environment_secrets(env) == []
