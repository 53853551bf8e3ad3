"""The generated corpus: sessions of five domains, in slices, with planted probes.

Every session plants one probe of each kind; the phrasings rotate over the sessions, so each
phrasing is used about equally often, and the positions (early, middle, late slice) and
placements follow the phrasing. Everything comes from one seed.
"""

from __future__ import annotations

import random
import string
from collections.abc import Sequence
from dataclasses import dataclass

from contextree.eval.filler import _Ids, answer_for, filler_turn
from contextree.eval.messages import (
    Message,
    assistant,
    bash_result,
    call,
    system,
    tool_result,
    user,
)
from contextree.eval.phrasings import PHRASINGS, Phrasing
from contextree.eval.probes import PROBE_KINDS, Position, Probe, ProbeKind
from contextree.eval.values import DOMAINS, SlotValues

__all__ = ["EvalSession", "PlantedProbe", "build_corpus", "corpus_phrasings"]

_TURNS_PER_SLICE = 5
_ACKS = ("Understood.", "Noted, thanks.", "Got it.", "OK, I'll keep that in mind.")
_FORMATTER = string.Formatter()


@dataclass(frozen=True, slots=True)
class PlantedProbe:
    """A probe and the index (in its slice) of the message that carries it."""

    probe: Probe
    message: int


@dataclass(frozen=True, slots=True)
class EvalSession:
    """One session of the corpus: its messages in slices (one per round) and its probes."""

    name: str
    domain: str
    slices: tuple[tuple[Message, ...], ...]
    probes: tuple[PlantedProbe, ...]


def build_corpus(*, sessions: int = 35, rounds: int = 5, seed: int = 25) -> list[EvalSession]:
    """``sessions`` generated sessions of ``rounds`` slices each (seeded, deterministic)."""
    if sessions < 1 or rounds < 1:
        raise ValueError(f"sessions and rounds must be positive, got {sessions} and {rounds}")
    by_kind = {kind: [p for p in PHRASINGS if p.kind == kind] for kind in PROBE_KINDS}
    return [_session(index, rounds, seed, by_kind) for index in range(sessions)]


def _position(segment: int, rounds: int) -> Position:
    if segment == 0:
        return "early"
    return "late" if segment == rounds - 1 else "middle"


def _session(
    index: int, rounds: int, seed: int, by_kind: dict[ProbeKind, list[Phrasing]]
) -> EvalSession:
    rng = random.Random(f"{seed}:{index}")
    domain = DOMAINS[index % len(DOMAINS)]
    values = SlotValues(rng, domain)
    plans: dict[int, list[tuple[Phrasing, dict[str, str], str]]] = {}
    choices = [min(rounds - 1, x) for x in (0, rounds // 2, rounds - 1)]
    for k, kind in enumerate(PROBE_KINDS):
        options = by_kind[kind]
        phrasing = options[(index + 3 * k) % len(options)]
        segment = choices[(index + k) % 3]
        slots = _slots(phrasing)
        plans.setdefault(segment, []).append((phrasing, values.fill(slots), f"{index}.{kind}"))
    ids = _Ids(f"s{index}c")
    slices: list[tuple[Message, ...]] = []
    planted: list[PlantedProbe] = []
    pending_answer: str | None = None
    for segment in range(rounds):
        messages: list[Message] = []
        todo = list(plans.get(segment, []))
        rng.shuffle(todo)
        turns = _TURNS_PER_SLICE + len(todo)
        slots_at = sorted(rng.sample(range(turns), len(todo)))
        for turn in range(turns):
            if todo and slots_at and turn == slots_at[0]:
                slots_at.pop(0)
                phrasing, filled, probe_id = todo.pop(0)
                block, at = _probe_messages(phrasing, filled, rng, domain, ids)
                if pending_answer and block[0]["role"] == "user":
                    _prefix_user(block[0], pending_answer)
                    pending_answer = None
                start = len(messages)
                messages += block
                probe = Probe(
                    id=probe_id,
                    kind=phrasing.kind,
                    values=tuple(filled[slot] for slot in phrasing.values),
                    text=phrasing.text.format(**filled) if phrasing.text else "",
                    phrasing=phrasing.key,
                    held_out=phrasing.held_out,
                    placement=phrasing.placement,
                    position=_position(segment, rounds),
                    segment=segment,
                )
                planted.append(PlantedProbe(probe, start + at))
                if phrasing.kind == "question":
                    pending_answer = None  # the user moves on without answering it
            else:
                ask = rng.random() < 0.25
                block = filler_turn(rng, domain, ids, ask=ask)
                if pending_answer:
                    _prefix_user(block[0], pending_answer)
                messages += block
                pending_answer = None
                if ask:
                    last = block[-1]["content"][0]["text"]
                    pending_answer = answer_for(domain, last)
        slices.append(tuple(messages))
    # Timestamps from the seed, not the clock: the same seed gives the same corpus.
    stamp = 1_760_000_000_000 + 86_400_000 * index
    for message in (m for piece in slices for m in piece):
        stamp += 7_000
        message["timestamp"] = stamp
    return EvalSession(f"{domain}-{index:02d}", domain, tuple(slices), tuple(planted))


def _slots(phrasing: Phrasing) -> set[str]:
    found = set(phrasing.values)
    for template in (phrasing.text, phrasing.command):
        found |= {name for _, name, _, _ in _FORMATTER.parse(template) if name}
    return found


def _prefix_user(message: Message, answer: str) -> None:
    block = message["content"][0]
    block["text"] = f"{answer} {block['text']}"


def _probe_messages(
    p: Phrasing, v: dict[str, str], rng: random.Random, domain: str, ids: _Ids
) -> tuple[list[Message], int]:
    """The messages that plant ``p`` and the index of the one that carries it."""
    text = p.text.format(**v)
    if p.tool in ("edit", "write"):
        cid = ids.next()
        path = v["path"]
        if p.tool == "edit":
            action = call(cid, "edit", path=path, oldText="retries = 3", newText="retries = 5")
            result = f"Successfully replaced text in {path}."
        else:
            action = call(cid, "write", path=path, content="# rewritten\n" + "x = 1\n" * 20)
            result = f"Successfully wrote 160 bytes to {path}"
        turn = filler_turn(rng, domain, ids)
        return [
            *turn[:-1],
            assistant(text, action),
            tool_result(cid, p.tool, result),
            turn[-1],
        ], len(turn) - 1
    if p.placement == "tool":
        cid = ids.next()
        command = p.command.format(**v)
        turn = filler_turn(rng, domain, ids)
        remark = "That failed; I'll look at why." if p.failed else "OK, that is what I needed."
        block = [
            *turn[:-1],
            assistant("", call(cid, "bash", command=command)),
            bash_result(cid, text, 1 if p.failed else 0),
            assistant(remark),
        ]
        # The values are in the command (``sed -i ... path``) or in its output.
        in_command = all(v[slot] in command for slot in p.values)
        return block, len(turn) - 1 if in_command else len(turn)
    if p.placement == "system":
        return [system(text, custom=rng.random() < 0.5)], 0
    if p.placement == "user":
        if rng.random() < 0.5:
            return [user(text), assistant(rng.choice(_ACKS))], 0
        turn = filler_turn(rng, domain, ids)
        _prefix_user(turn[0], text)
        return turn, 0
    # assistant prose: part of a turn's closing reply (a question ends it)
    turn = filler_turn(rng, domain, ids)
    reply = turn[-1]["content"][0]
    reply["text"] = f"{reply['text']} {text}" if p.kind == "question" else f"{text} {reply['text']}"
    return turn, len(turn) - 1


def corpus_phrasings(corpus: Sequence[EvalSession]) -> set[str]:
    """The phrasing keys a corpus uses."""
    return {planted.probe.phrasing for session in corpus for planted in session.probes}
