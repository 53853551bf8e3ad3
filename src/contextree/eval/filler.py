"""The ordinary turns of generated sessions: requests, tool calls, outputs and replies.

Filler carries numbers, paths and commands of its own (as real sessions do), so probes compete
with realistic detail for the summary's budget; it never uses the probe value pools.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Final

from contextree.eval.messages import Message, assistant, bash_result, call, tool_result, user

__all__ = ["DOMAIN_FILLER", "Domain", "filler_turn"]


@dataclass(frozen=True, slots=True)
class Domain:
    subjects: tuple[str, ...]
    requests: tuple[str, ...]
    read_paths: tuple[str, ...]
    commands: tuple[str, ...]
    edit_paths: tuple[str, ...]
    output: str
    """Which output generator fits the commands: ``tests``, ``table``, ``log`` or ``prose``."""
    asks: tuple[tuple[str, str], ...]
    """(assistant question, user answer) pairs: questions the user does answer."""


DOMAIN_FILLER: Final[dict[str, Domain]] = {
    "coding": Domain(
        subjects=("orders", "users", "search", "notify", "reports", "inventory"),
        requests=(
            "Can you look at why the {s} endpoint is slow on large accounts?",
            "Add pagination to the {s} listing and cover it with tests.",
            "The {s} serializer drops empty fields; make it keep them.",
            "Refactor the {s} service so the handlers stay thin.",
            "Please add logging around the {s} retries.",
        ),
        read_paths=("src/app/{s}.py", "tests/test_{s}.py", "src/app/{s}_service.py"),
        commands=(
            "pytest -q tests/test_{s}.py",
            "ruff check src/app/{s}.py",
            "python -m mypy src/app/{s}.py",
        ),
        edit_paths=("src/app/{s}.py", "src/app/{s}_service.py", "tests/test_{s}.py"),
        output="tests",
        asks=(
            ("Should I also update the {s} docs page?", "Yes, update the {s} docs page too."),
            ("Do you want the {s} change behind a flag?", "No flag for {s}, ship it directly."),
        ),
    ),
    "ops": Domain(
        subjects=("gateway", "worker", "scheduler", "metrics", "ingest", "mailer"),
        requests=(
            "The {s} pods restart every few hours; find out why.",
            "Check the {s} alerts from last night and tell me if they were real.",
            "Tune the {s} memory limits, they look too tight.",
            "Write a runbook entry for restarting {s} safely.",
            "Can you see why {s} deploys take so long?",
        ),
        read_paths=("k8s/{s}/deployment.yaml", "runbooks/{s}.md", "monitoring/{s}-alerts.yaml"),
        commands=(
            "kubectl get pods -n {s}",
            "kubectl logs deploy/{s} --tail=200",
            "journalctl -u {s} --since today",
        ),
        edit_paths=("k8s/{s}/deployment.yaml", "runbooks/{s}.md"),
        output="log",
        asks=(
            ("Should I apply the {s} change to staging first?", "Yes, staging first for {s}."),
            ("Do you want a PagerDuty alert for {s} as well?", "Just a Slack alert for {s}."),
        ),
    ),
    "data": Domain(
        subjects=("signups", "invoices", "sessions", "refunds", "campaigns", "trials"),
        requests=(
            "Summarize the {s} table by month and flag anything odd.",
            "Why do the {s} counts differ between the dashboard and the warehouse?",
            "Build a quick cohort view of {s}.",
            "Clean the {s} export: trim whitespace and fix the date column.",
            "Plot {s} per week for the last quarter.",
        ),
        read_paths=("sql/{s}.sql", "notebooks/{s}_explore.ipynb", "etl/{s}_load.py"),
        commands=(
            "python etl/{s}_load.py --dry-run",
            "duckdb warehouse.db -c 'select * from {s} limit 20'",
            "python -m pytest -q tests/test_{s}_etl.py",
        ),
        edit_paths=("sql/{s}.sql", "etl/{s}_load.py"),
        output="table",
        asks=(
            ("Should I exclude test accounts from {s}?", "Yes, exclude test accounts from {s}."),
            ("Do you want the {s} chart as PNG or SVG?", "SVG for the {s} chart."),
        ),
    ),
    "writing": Domain(
        subjects=("intro", "pricing", "onboarding", "roadmap", "security", "faq"),
        requests=(
            "Tighten the {s} section; it rambles.",
            "Rewrite the {s} paragraph for a non-technical reader.",
            "Check the {s} page for repeated words and passive voice.",
            "Give the {s} section a clearer first sentence.",
            "Shorten the {s} part to about half its length.",
        ),
        read_paths=("drafts/{s}.md", "notes/{s}-feedback.md"),
        commands=("wc -w drafts/{s}.md", "vale drafts/{s}.md"),
        edit_paths=("drafts/{s}.md",),
        output="prose",
        asks=(
            ("Should the {s} section keep the customer quote?", "Keep the {s} quote."),
            ("Do you want a subheading in the {s} section?", "One subheading in {s} is fine."),
        ),
    ),
    "support": Domain(
        subjects=("billing", "login", "export", "mobile", "invites", "webhooks"),
        requests=(
            "Go through the open {s} tickets and group them by cause.",
            "Draft a reply for the angry {s} ticket at the top of the queue.",
            "Which {s} tickets are past their SLA?",
            "Update the {s} macro so it asks for the account email.",
            "Summarize what customers say about {s} this week.",
        ),
        read_paths=("tickets/{s}-queue.json", "macros/{s}.md", "kb/{s}.md"),
        commands=("helpdesk list --queue {s} --status open", "helpdesk stats --queue {s}"),
        edit_paths=("macros/{s}.md", "kb/{s}.md"),
        output="table",
        asks=(
            ("Should I tag the {s} tickets as duplicates?", "Tag the {s} duplicates, yes."),
            ("Do you want the {s} reply to offer a credit?", "No credit for {s}, apologize only."),
        ),
    ),
}

_TEXT: Final = (
    "the request handler reads the account settings before it checks the cache, then writes "
    "the result back and records the timing for the dashboard; when the upstream answers slowly "
    "the retry loop waits and tries again, which is where most of the time goes on large inputs"
)
_WORDS: Final = tuple(_TEXT.split(" "))


def _prose(rng: random.Random, sentences: int) -> str:
    out = []
    for _ in range(sentences):
        start = rng.randrange(0, len(_WORDS) - 14)
        words = _WORDS[start : start + rng.randrange(8, 14)]
        out.append(" ".join(words).capitalize() + ".")
    return " ".join(out)


def _output(rng: random.Random, kind: str, subject: str) -> tuple[str, int]:
    if kind == "tests":
        passed = rng.randrange(8, 60)
        lines = [f"tests/test_{subject}.py " + "." * rng.randrange(10, 40) for _ in range(3)]
        return "\n".join(
            lines
        ) + f"\n{passed} passed in {rng.randrange(1, 9)}.{rng.randrange(10, 99)}s", 0
    if kind == "log":
        lines = [
            f'{subject}-{rng.randrange(1000, 9999):x} level=info msg="handled batch" '
            f"size={rng.randrange(10, 500)} took={rng.randrange(3, 900)}ms"
            for _ in range(rng.randrange(8, 20))
        ]
        return "\n".join(lines), 0
    if kind == "table":
        rows = [f"{'month':<10}{'count':>8}{'total':>12}"]
        for month in range(1, rng.randrange(6, 13)):
            rows.append(
                f"2025-{month:02d}   {rng.randrange(100, 9000):>8}{rng.randrange(1000, 90000):>12}"
            )
        return "\n".join(rows), 0
    return _prose(rng, rng.randrange(4, 9)), 0


def _file_text(rng: random.Random, kind: str, subject: str) -> str:
    if kind in ("tests", "table"):
        body = [
            f"def handle_{subject}_{n}(request):\n"
            f"    return service.{subject}(request, limit={rng.randrange(10, 99)})\n"
            for n in range(rng.randrange(6, 16))
        ]
        return "\n".join(body)
    if kind == "log":
        return "\n".join(
            f"  {key}: {rng.randrange(1, 512)}"
            for key in ("replicas", "cpu", "memory_mb", "timeout_s", "max_surge") * 3
        )
    return "\n\n".join(_prose(rng, 4) for _ in range(rng.randrange(3, 6)))


class _Ids:
    def __init__(self, prefix: str) -> None:
        self.prefix, self.n = prefix, 0

    def next(self) -> str:
        self.n += 1
        return f"{self.prefix}{self.n}"


def filler_turn(
    rng: random.Random, domain: str, ids: _Ids | None = None, *, ask: bool = False
) -> list[Message]:
    """One ordinary turn: a request, two or three tool calls with outputs, a short reply.

    With ``ask``, the reply ends with a question the next turn's request answers.
    """
    spec = DOMAIN_FILLER[domain]
    ids = ids or _Ids("f")
    subject = rng.choice(spec.subjects)
    messages: list[Message] = [user(rng.choice(spec.requests).format(s=subject))]
    read_path = rng.choice(spec.read_paths).format(s=subject)
    cid = ids.next()
    messages += [
        assistant(f"I'll start with `{read_path}`.", call(cid, "read", path=read_path)),
        tool_result(cid, "read", _file_text(rng, spec.output, subject)),
    ]
    command = rng.choice(spec.commands).format(s=subject)
    cid = ids.next()
    output, code = _output(rng, spec.output, subject)
    messages += [assistant("", call(cid, "bash", command=command)), bash_result(cid, output, code)]
    if rng.random() < 0.6:
        path = rng.choice(spec.edit_paths).format(s=subject)
        cid = ids.next()
        messages += [
            assistant("", call(cid, "edit", path=path, oldText="limit=10", newText="limit=25")),
            tool_result(cid, "edit", f"Successfully replaced text in {path}."),
        ]
    reply = _prose(rng, rng.randrange(1, 3))
    if ask:
        reply += " " + rng.choice(spec.asks)[0].format(s=subject)
    messages.append(assistant(reply))
    return messages


def answer_for(domain: str, question: str) -> str | None:
    """The user's answer to a filler question, or ``None`` when it is not one."""
    for subject in DOMAIN_FILLER[domain].subjects:
        for asked, answer in DOMAIN_FILLER[domain].asks:
            if question.endswith(asked.format(s=subject)):
                return answer.format(s=subject)
    return None
