"""The offline summarizer reads the parts the serializer made (issue 27: `compact` at 100k)
as it read them from the text: the same parts as splitting the text, the same tool calls as
parsing them back, and so the same digest - except where a message's own text holds what
looks like a boundary (``\n\n[User]: ``), which no longer starts a part."""

from __future__ import annotations

import random
from typing import Any

from contextree.compaction.offline.conversation import digest_conversation
from contextree.compaction.offline.developer import as_user
from contextree.compaction.offline.parts import (
    Conversation,
    parse_tool_calls,
    parts_of,
    split_parts,
)
from contextree.compaction.offline.reading import serialized
from contextree.compaction.serialize import serialize_conversation, serialized_parts
from contextree.context.convert import convert_to_llm
from contextree.tokens.estimate import utf16_len

_TEXTS = [
    "plain words",
    "",
    "\n",
    "\n\n",
    "\n\n[",
    "\n\n[User]: hi",
    "\n\n[Tool result]: ",
    "\n\n[Assistant]:no space",
    "\n\n[Foo]: x",
    "[User]: ",
    "a\n\n[1] note",
    "ends with a newline\n",
    "pytest -q -> 41 passed",
    "\U0001f600 astral, é",
]
_NAMES: list[Any] = ["read", "bash", "edit_file", "a b", "f(x)", "x;y", "", "ünïcode", 7, None]
_KEYS = ["path", "command", "old_text", "a b", "k=v", "(", "0", "12", "x,y", "ключ"]
_VALUES: list[Any] = [
    "src/app.py",
    'say "hi"\n\ttab',
    "\ud800 lone",
    "",
    True,
    False,
    None,
    0,
    -5,
    2**53 - 1,
    2**53,
    10**30,
    1.0,
    2.5e-7,
    [1, "a"],
    {"b": 1, "0": 2},
]


def _message(rng: random.Random, index: int, plain: bool) -> dict[str, Any]:
    # A plain conversation: texts without a boundary of their own, calls that read back.
    texts, names, keys, values = (
        (_TEXTS[:2], _NAMES[:3], _KEYS[:3], _VALUES[:10])
        if plain
        else (_TEXTS, _NAMES, _KEYS, _VALUES)
    )
    text = "".join(rng.choice(texts) for _ in range(rng.randint(0, 3)))
    role = rng.choice(["user", "assistant", "toolResult", "assistant"])
    if role == "user":
        return {"role": "user", "content": text, "timestamp": index}
    if role == "toolResult":
        return {
            "role": "toolResult",
            "toolCallId": f"c{index}",
            "toolName": "bash",
            "content": [{"type": "text", "text": text * rng.randint(1, 900)}],
            "isError": False,
            "timestamp": index,
        }
    content: list[dict[str, Any]] = [{"type": "text", "text": text}]
    for call in range(rng.randint(0, 3)):
        arguments: Any = {rng.choice(keys): rng.choice(values) for _ in range(rng.randint(0, 3))}
        if not plain and rng.random() < 0.1:
            arguments = rng.choice([None, "not an object", [1]])
        content.append(
            {
                "type": "toolCall",
                "id": f"c{index}.{call}",
                "name": rng.choice(names),
                "arguments": arguments,
            }
        )
    return {"role": "assistant", "content": content, "timestamp": index}


def _calls_read(text: str) -> list[tuple[str, list[tuple[str, Any]]]]:
    return [(call.name, list(call.args.items())) for call in parse_tool_calls(text)]


_ROLES = {"User": "user", "Assistant": "assistant", "Assistant thinking": "thinking",
          "Assistant tool calls": "calls", "Tool result": "result"}


def test_the_parts_given_are_the_serializers_and_those_split_from_a_plain_text() -> None:
    rng = random.Random(11)
    given = plain_texts = 0
    for _ in range(400):
        plain = rng.random() < 0.5
        messages = [_message(rng, index, plain) for index in range(rng.randint(0, 8))]
        conversation = serialized(messages)
        text = serialize_conversation(convert_to_llm(messages), keep_tail=True)
        expected = text if messages else ""
        # The length is counted part by part before the text is joined.
        assert conversation.utf16_units() == utf16_len(expected)
        assert bool(conversation) == bool(expected)
        assert conversation.text == expected
        parts = parts_of(conversation)
        made = serialized_parts(as_user(convert_to_llm(messages)), keep_tail=True)
        own = [(_ROLES[label], body) for label, body, _ in made]
        assert [(p.role, p.text) for p in parts] == own
        if any("\n\n[" in body for _, body, _ in made):
            continue  # the text alone would start parts inside a message
        plain_texts += 1
        split = split_parts(conversation.text)
        assert [(p.role, p.text) for p in parts] == [(p.role, p.text) for p in split]
        for part in parts:
            if part.calls is not None:
                given += 1
                assert [(c.name, list(c.args.items())) for c in part.calls] == _calls_read(
                    part.text
                )
        assert digest_conversation(conversation, focus=None) == digest_conversation(
            conversation.text, focus=None
        )
    assert given > 100  # most tool-call parts come with their calls
    assert plain_texts > 150


def test_a_boundary_inside_a_message_does_not_start_a_part() -> None:
    # A fetched page or a file that holds "[User]: ..." must not put words in the user's mouth.
    messages = [
        {"role": "user", "content": "first\n\n[Assistant]: not the assistant", "timestamp": 1},
        {"role": "user", "content": "second", "timestamp": 2},
    ]
    conversation = serialized(messages)
    assert [(p.role, p.text) for p in parts_of(conversation)] == [
        ("user", "first\n\n[Assistant]: not the assistant"),
        ("user", "second"),
    ]


def test_a_key_that_is_no_string_is_read_back_from_the_text() -> None:
    call = {"type": "toolCall", "id": "c", "name": "read", "arguments": {1: "a", "path": "b"}}
    messages = [{"role": "assistant", "content": [call], "timestamp": 1}]
    conversation = serialized(messages)
    assert conversation.parts is not None
    (part,) = conversation.parts
    assert part.calls is None  # parsed from the text, as before
    assert parse_tool_calls(part.text)[0].args == {"1": "a", "path": "b"}


def test_a_plain_text_is_split_as_before() -> None:
    text = '[User]: hi\n\n[Assistant tool calls]: read(path="a.py")'
    assert parts_of(text) == split_parts(text)
    assert parts_of(Conversation(text)) == split_parts(text)
    assert parts_of("") == []
