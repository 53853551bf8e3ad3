"""A user's own probes: a JSON Lines file, one probe a line, found in their own session.

Each line is an object: ``{"kind": "fact", "values": ["Postgres 15", "us-west-2"]}`` with an
optional ``"id"`` and ``"text"``. A probe is planted where its values first appear together in
one message of the session.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import cast

from contextree.context.convert import convert_to_llm
from contextree.entries.types import StoredMessage, is_message_entry
from contextree.errors import ContextreeError
from contextree.eval.corpus import EvalSession, PlantedProbe
from contextree.eval.probes import PROBE_KINDS, Probe, ProbeKind
from contextree.eval.score import context_text, values_found
from contextree.session.tree import SessionTree

__all__ = [
    "ProbesFileError",
    "branch_messages",
    "load_probes",
    "probe_from_object",
    "session_with_probes",
]


class ProbesFileError(ContextreeError):
    """A probes file that cannot be used; the message names the file, line and field."""


def probe_from_object(data: object, where: str, *, default_id: str) -> Probe:
    """The probe an object describes (``kind``, ``values``, optional ``id``, ``text`` and
    ``ask``).

    Raises:
        ProbesFileError: a field is missing or of the wrong type; the message starts with
            ``where``.
    """
    if not isinstance(data, dict):
        raise ProbesFileError(f"{where}: expected an object with kind and values")
    kind = data.get("kind")
    if kind not in PROBE_KINDS:
        raise ProbesFileError(
            f'{where}: field "kind": expected one of {", ".join(PROBE_KINDS)}, got {kind!r}'
        )
    values = data.get("values")
    if (
        not isinstance(values, list)
        or not values
        or not all(isinstance(v, str) and v.strip() for v in values)
    ):
        raise ProbesFileError(f'{where}: field "values": expected a non-empty list of strings')
    for field in ("id", "text", "ask"):
        if field in data and not isinstance(data[field], str):
            raise ProbesFileError(f'{where}: field "{field}": expected a string')
    return Probe(
        id=data.get("id") or default_id,
        kind=cast(ProbeKind, kind),
        values=tuple(values),
        text=data.get("text", ""),
        ask=data.get("ask", ""),
    )


def load_probes(path: Path) -> list[Probe]:
    """The probes of a JSON Lines file (blank lines skipped).

    Raises:
        ProbesFileError: a line is not a JSON object, or a field is missing or of the wrong
            type; ``OSError`` when the file cannot be read.
    """
    probes: list[Probe] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ProbesFileError(f"{where}: not JSON ({exc.msg})") from None
        probes.append(probe_from_object(data, where, default_id=f"line-{number}"))
    if not probes:
        raise ProbesFileError(f"{path}: no probes (one JSON object per line)")
    return probes


def session_with_probes(
    name: str, messages: Sequence[StoredMessage], probes: Sequence[Probe], rounds: int
) -> EvalSession:
    """The session cut into ``rounds`` slices of about equal message counts, with each probe
    placed at the first message holding all its values.

    Raises:
        ProbesFileError: a probe's values are in no single message of the session.
    """
    texts = [context_text(convert_to_llm([message])) for message in messages]
    size = max(1, -(-len(messages) // rounds))
    slices = tuple(tuple(messages[i : i + size]) for i in range(0, len(messages), size))
    placed: list[PlantedProbe] = []
    for probe in probes:
        found = next((i for i, text in enumerate(texts) if values_found(probe, text)), None)
        if found is None:
            raise ProbesFileError(
                f'probe "{probe.id}": its values are in no single message of the session'
            )
        segment, index = divmod(found, size)
        placed.append(PlantedProbe(replace(probe, segment=segment), index))
    return EvalSession(name, "user", slices, tuple(placed))


def branch_messages(tree: SessionTree) -> list[StoredMessage]:
    """The messages on the session's current branch, oldest first (earlier compactions and
    other entries left out: the eval compacts the messages again)."""
    return [entry["message"] for entry in tree.get_branch() if is_message_entry(entry)]
