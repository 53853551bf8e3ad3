"""Conversion between pydantic-ai messages and pi messages: the field mapping, and round trips
both ways (hypothesis) that give back what went in, to pi's millisecond."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

pytest.importorskip("pydantic_ai")

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic_ai.messages import (
    BinaryContent,
    CompactionPart,
    ImageUrl,
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    RetryFeedbackPart,
    RetryInfo,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models import ModelRequestParameters
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider
from pydantic_ai.usage import RequestUsage

from contextree.context import convert_to_llm, provider_messages
from contextree.integrations.pydantic_ai import (
    EXTRA_KEY,
    METADATA_KEY,
    model_messages_to_pi,
    pi_to_model_messages,
)
from contextree.integrations.pydantic_ai.convert_shared import normalized as _normalized
from contextree.llm.openai_compat import to_openai_messages
from provider_conversations import from_messages, from_tree, message_ops, tree_ops
from provider_rules import openai_problems

Json = dict[str, Any]
T0 = datetime(2026, 1, 5, 9, 30, tzinfo=UTC)


def dumped(messages: list[ModelMessage]) -> Any:
    """What a round trip must preserve: the messages' JSON, timestamps to the millisecond."""
    return _normalized(ModelMessagesTypeAdapter.dump_python(messages, mode="json"))


# -- the mapping, by example -----------------------------------------------------------------


def test_a_tool_using_exchange_maps_field_to_field() -> None:
    messages: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart("Read a.py", timestamp=T0)]),
        ModelResponse(
            parts=[
                ThinkingPart("look first", signature="sig-1", provider_name="anthropic"),
                TextPart("Reading it."),
                ToolCallPart("read", '{"path": "a.py"}', "call_1"),
            ],
            usage=RequestUsage(
                input_tokens=1200, output_tokens=30, cache_read_tokens=1000, cache_write_tokens=50
            ),
            model_name="claude-sonnet-4-5",
            provider_name="anthropic",
            finish_reason="tool_call",
            timestamp=T0 + timedelta(seconds=1),
        ),
        ModelRequest(
            parts=[
                ToolReturnPart("read", "print(1)", "call_1", timestamp=T0 + timedelta(seconds=2))
            ]
        ),
    ]
    pi = model_messages_to_pi(messages)
    assert [m["role"] for m in pi] == ["user", "assistant", "toolResult"]
    user, reply, result = pi
    assert user["content"] == "Read a.py"
    assert user["timestamp"] == int(T0.timestamp() * 1000)
    assert reply["content"][:2] == [
        {"type": "thinking", "thinking": "look first", "thinkingSignature": "sig-1"},
        {"type": "text", "text": "Reading it."},
    ]
    call = reply["content"][2]
    assert {k: call[k] for k in ("type", "id", "name", "arguments")} == {
        "type": "toolCall",
        "id": "call_1",
        "name": "read",
        "arguments": {"path": "a.py"},
    }
    # pi's input excludes cached tokens; totalTokens is the whole context of that request.
    assert reply["usage"] == {
        "input": 150,
        "output": 30,
        "cacheRead": 1000,
        "cacheWrite": 50,
        "totalTokens": 1230,
    }
    assert (reply["provider"], reply["model"], reply["api"]) == (
        "anthropic",
        "claude-sonnet-4-5",
        "anthropic-messages",
    )
    assert reply["stopReason"] == "toolUse"
    assert result == {
        "role": "toolResult",
        "toolCallId": "call_1",
        "toolName": "read",
        "content": [{"type": "text", "text": "print(1)"}],
        "isError": False,
        "timestamp": int(T0.timestamp() * 1000) + 2000,
    }
    # What contextree would send from these is provider-valid as it stands.
    assert len(provider_messages(convert_to_llm(pi))) == 3
    assert dumped(pi_to_model_messages(pi)) == dumped(messages)


def test_retries_map_to_error_results_and_user_feedback() -> None:
    retried = ToolReturnPart(
        "read", "path must be relative", "call_9", outcome="retried", timestamp=T0
    )
    failed = ToolReturnPart("bash", "exit 1", "call_8", outcome="failed", timestamp=T0)
    feedback = RetryFeedbackPart("Answer in JSON", retry=RetryInfo(cause="model_retry"))
    messages: list[ModelMessage] = [ModelRequest(parts=[retried, failed, feedback])]
    pi = model_messages_to_pi(messages)
    assert [(m["role"], m.get("isError")) for m in pi] == [
        ("toolResult", True),
        ("toolResult", True),
        ("user", None),
    ]
    assert pi[2]["content"] == feedback.model_response()  # what the model is shown
    back = pi_to_model_messages(pi)
    assert dumped(back) == dumped(messages)
    assert isinstance(back[0], ModelRequest)
    assert [type(p).__name__ for p in back[0].parts] == [
        "ToolReturnPart",
        "ToolReturnPart",
        "RetryFeedbackPart",
    ]
    assert [getattr(p, "outcome", None) for p in back[0].parts] == ["retried", "failed", None]


def test_system_prompts_ride_on_their_request_and_come_back_in_place() -> None:
    messages: list[ModelMessage] = [
        ModelRequest(
            parts=[SystemPromptPart("You are terse."), UserPromptPart("hi")],
            instructions="Answer briefly.",
        ),
        ModelResponse(parts=[TextPart("hello")]),
        ModelRequest(parts=[SystemPromptPart("Budget: 3 calls left", scope="request")]),
        ModelRequest(parts=[UserPromptPart("bye"), SystemPromptPart("late")]),
    ]
    pi = model_messages_to_pi(messages)
    assert [m["role"] for m in pi] == ["user", "assistant", "user"]
    assert all("You are terse." not in json.dumps(m.get("content")) for m in pi)
    assert dumped(pi_to_model_messages(pi)) == dumped(messages)


def test_a_summary_is_a_request_side_compaction_part() -> None:
    pi_summary = {
        "role": "compactionSummary",
        "summary": "We fixed the parser.",
        "tokensBefore": 52000,
        "timestamp": "2026-01-05T09:30:00.000Z",
    }
    converted = pi_to_model_messages([pi_summary, {"role": "user", "content": "go on"}])
    assert len(converted) == 1 and isinstance(converted[0], ModelRequest)
    part = converted[0].parts[0]
    assert isinstance(part, CompactionPart) and part.content == "We fixed the parser."
    assert model_messages_to_pi(converted) == [pi_summary, {"role": "user", "content": "go on"}]


def test_pi_roles_without_a_part_become_what_contextree_sends() -> None:
    bash = {
        "role": "bashExecution",
        "command": "ls",
        "output": "a.py",
        "exitCode": 0,
        "cancelled": False,
        "truncated": False,
        "timestamp": 1767605400000,
    }
    hidden = {"role": "someFutureRole", "data": 1, "timestamp": 1767605400001}
    converted = pi_to_model_messages([bash, hidden])
    assert len(converted) == 1 and isinstance(converted[0], ModelRequest)
    (part,) = converted[0].parts
    assert isinstance(part, UserPromptPart)
    assert part.content == [convert_to_llm([bash])[0]["content"][0]["text"]]
    assert model_messages_to_pi(converted) == [bash, hidden]


def test_json_tool_returns_come_back_as_json_and_redacted_text_as_text() -> None:
    part = ToolReturnPart("stat", {"size": 12, "names": ["a", "b"]}, "c1", timestamp=T0)
    (pi,) = model_messages_to_pi([ModelRequest(parts=[part])])
    assert pi["content"] == [{"type": "text", "text": '{"size": 12, "names": ["a", "b"]}'}]
    (back,) = pi_to_model_messages([pi])
    assert isinstance(back, ModelRequest) and back.parts[0].content == part.content  # type: ignore[union-attr]
    redacted = {**pi, "content": [{"type": "text", "text": '{"size": [REDACTED]'}]}
    (back,) = pi_to_model_messages([redacted])
    assert back.parts[0].content == '{"size": [REDACTED]'  # type: ignore[union-attr]


def test_media_pi_cannot_hold_rides_along_and_images_map_to_image_blocks() -> None:
    image = BinaryContent(data=b"\x89PNG", media_type="image/png")
    url = ImageUrl(url="https://example.com/cat.png")
    part = UserPromptPart(["look", image, url], timestamp=T0)
    (pi,) = model_messages_to_pi([ModelRequest(parts=[part])])
    assert pi["content"][0] == {"type": "text", "text": "look"}
    assert pi["content"][1] == {"type": "image", "data": "iVBORw==", "mimeType": "image/png"}
    assert pi["content"][2]["text"] == "[image-url: https://example.com/cat.png]"
    assert dumped(pi_to_model_messages([pi])) == dumped([ModelRequest(parts=[part])])


def test_bad_input_is_named() -> None:
    with pytest.raises(TypeError, match="ModelRequest or ModelResponse"):
        model_messages_to_pi(["hello"])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="message 1: expected a pi message"):
        pi_to_model_messages([{"role": "user", "content": "a"}, {"content": "no role"}])


def test_the_text_of_a_message_is_never_copied_into_the_extra_data() -> None:
    """Redaction of stored text reaches everything: nothing under pydanticAi repeats it."""
    secret = "sk-proj-abcdefghijklmnopqrstuvwxyz012345"
    messages: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart(f"key {secret}")]),
        ModelResponse(parts=[TextPart(f"echo {secret}"), ThinkingPart(f"t {secret}")]),
        ModelRequest(parts=[ToolReturnPart("env", f"KEY={secret}", "c1")]),
    ]
    for message in model_messages_to_pi(messages):
        extra = json.dumps(message.get(EXTRA_KEY, {}))
        blocks = message["content"] if isinstance(message["content"], list) else []
        extra += json.dumps([b.get(EXTRA_KEY) for b in blocks])
        assert secret not in extra


# -- round trips (hypothesis) ----------------------------------------------------------------

texts = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=20)
names = st.sampled_from(["read", "bash", "edit", "search"])
ids = st.text("abcdef0123456789", min_size=4, max_size=8).map(lambda s: f"call_{s}")
moments = st.integers(0, 10**12).map(lambda us: T0 + timedelta(microseconds=us))
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-1000, 1000) | texts,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=6,
)


@st.composite
def user_parts(draw: st.DrawFn) -> UserPromptPart:
    items = st.one_of(
        texts,
        st.binary(min_size=1, max_size=8).map(
            lambda b: BinaryContent(data=b, media_type="image/png")
        ),
        st.just(ImageUrl(url="https://example.com/x.png")),
    )
    content = draw(texts | st.lists(items, max_size=3))
    return UserPromptPart(content, timestamp=draw(moments))


@st.composite
def request_parts(draw: st.DrawFn) -> Any:
    kind = draw(st.sampled_from(["user", "system", "return", "feedback", "summary"]))
    when = draw(moments)
    if kind == "user":
        return draw(user_parts())
    if kind == "system":
        return SystemPromptPart(draw(texts), timestamp=when)
    if kind == "return":
        return ToolReturnPart(
            draw(names),
            draw(texts | json_values),
            draw(ids),
            timestamp=when,
            outcome=draw(st.sampled_from(["success", "failed", "retried", "denied"])),
        )
    if kind == "feedback":
        return RetryFeedbackPart(draw(texts), retry=RetryInfo(cause="model_retry"), timestamp=when)
    return CompactionPart(content=draw(texts))


@st.composite
def response_parts(draw: st.DrawFn) -> Any:
    kind = draw(st.sampled_from(["text", "thinking", "call"]))
    if kind == "text":
        return TextPart(draw(texts))
    if kind == "thinking":
        signed = draw(st.booleans())
        return ThinkingPart(
            draw(texts),
            signature=draw(texts) if signed else None,
            provider_name="openai" if signed else None,
        )
    args = draw(st.dictionaries(names, json_values, max_size=2))
    as_string = draw(st.booleans())
    return ToolCallPart(draw(names), json.dumps(args) if as_string else args, draw(ids))


@st.composite
def model_histories(draw: st.DrawFn) -> list[ModelMessage]:
    out: list[ModelMessage] = []
    for index in range(draw(st.integers(1, 6))):
        if index % 2 == 0:
            out.append(
                ModelRequest(
                    parts=draw(st.lists(request_parts(), min_size=1, max_size=4)),
                    instructions=draw(st.none() | texts),
                    run_id=draw(st.none() | st.just("run-1")),
                )
            )
        else:
            cached = draw(st.integers(0, 500))
            out.append(
                ModelResponse(
                    parts=draw(st.lists(response_parts(), max_size=4)),
                    usage=RequestUsage(
                        input_tokens=cached + draw(st.integers(0, 5000)),
                        output_tokens=draw(st.integers(0, 900)),
                        cache_read_tokens=cached,
                    ),
                    model_name=draw(st.none() | st.just("gpt-4o")),
                    provider_name=draw(st.none() | st.just("openai")),
                    finish_reason=draw(st.none() | st.sampled_from(["stop", "length"])),
                    timestamp=draw(moments),
                )
            )
    # A history that holds nothing pi has a message for cannot be stored: make sure it has one.
    out.append(ModelRequest(parts=[UserPromptPart("last")]))
    return out


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(model_histories())
def test_pydantic_ai_to_pi_and_back_gives_the_same_messages(history: list[ModelMessage]) -> None:
    pi = model_messages_to_pi(history)
    json.dumps(pi)  # what a session file can store
    back = pi_to_model_messages(pi)
    assert dumped(back) == dumped(history)
    assert model_messages_to_pi(back) == pi


def pi_text(draw: st.DrawFn) -> Json:
    return {"type": "text", "text": draw(texts)}


@st.composite
def pi_histories(draw: st.DrawFn) -> list[Json]:
    out: list[Json] = []
    ms = st.integers(1_700_000_000_000, 1_800_000_000_000)
    for _ in range(draw(st.integers(1, 8))):
        role = draw(
            st.sampled_from(
                ["user", "assistant", "toolResult", "bashExecution", "custom", "branchSummary"]
            )
        )
        if role == "user":
            content: Any = draw(
                texts
                | st.lists(
                    st.builds(lambda t: {"type": "text", "text": t}, texts)
                    | st.just({"type": "image", "data": "iVBORw==", "mimeType": "image/png"}),
                    max_size=3,
                )
            )
            out.append({"role": "user", "content": content, "timestamp": draw(ms)})
        elif role == "assistant":
            blocks = draw(
                st.lists(
                    st.builds(lambda t: {"type": "text", "text": t}, texts)
                    | st.builds(lambda t: {"type": "thinking", "thinking": t}, texts)
                    | st.builds(
                        lambda t, s: {"type": "thinking", "thinking": t, "thinkingSignature": s},
                        texts,
                        st.text("abc", min_size=1, max_size=4),
                    )
                    | st.builds(
                        lambda i, n, a: {"type": "toolCall", "id": i, "name": n, "arguments": a},
                        ids,
                        names,
                        st.dictionaries(names, json_values, max_size=2),
                    ),
                    max_size=3,
                )
            )
            message = {
                "role": "assistant",
                "content": blocks,
                "api": draw(st.sampled_from(["openai-completions", "anthropic-messages"])),
                "provider": draw(st.sampled_from(["openai", "anthropic"])),
                "model": "m",
                "usage": {
                    "input": draw(st.integers(0, 900)),
                    "output": 3,
                    "cacheRead": draw(st.integers(0, 90)),
                    "cacheWrite": 0,
                    "totalTokens": draw(st.integers(0, 999)),
                    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
                },
                "stopReason": draw(st.sampled_from(["stop", "toolUse", "length", "error"])),
                "timestamp": draw(ms),
            }
            if message["stopReason"] == "error":
                message["errorMessage"] = "boom"
            out.append(message)
        elif role == "toolResult":
            message = {
                "role": "toolResult",
                "toolCallId": draw(ids),
                "toolName": draw(names),
                "content": [{"type": "text", "text": draw(texts)}],
                "isError": draw(st.booleans()),
                "timestamp": draw(ms),
            }
            if draw(st.booleans()):
                message["details"] = {"diff": draw(texts)}
            out.append(message)
        elif role == "bashExecution":
            out.append(
                {
                    "role": "bashExecution",
                    "command": draw(texts),
                    "output": draw(texts),
                    "exitCode": 0,
                    "cancelled": False,
                    "truncated": False,
                    "timestamp": draw(ms),
                }
            )
        elif role == "custom":
            out.append(
                {
                    "role": "custom",
                    "customType": "note",
                    "content": draw(texts),
                    "display": True,
                    "timestamp": draw(ms),
                }
            )
        else:
            out.append(
                {
                    "role": "branchSummary",
                    "summary": draw(texts),
                    "fromId": "abcd1234",
                    "timestamp": draw(ms),
                }
            )
    return out


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pi_histories())
def test_pi_to_pydantic_ai_and_back_gives_the_same_messages(history: list[Json]) -> None:
    converted = pi_to_model_messages(history)
    assert model_messages_to_pi(converted) == history
    # pi-only fields live in metadata, which pydantic-ai never sends.
    for message in converted:
        if message.metadata:
            assert set(message.metadata) == {METADATA_KEY}


# -- tool-call pairing, both ways -------------------------------------------------------------

_openai_chat = OpenAIChatModel("gpt-4o", provider=OpenAIProvider(api_key="sk-test"))


def sent(messages: list[ModelMessage]) -> list[Json]:
    """The ``messages`` of the chat-completions request pydantic-ai's OpenAI model makes for
    ``messages`` (nothing is sent)."""
    parameters = ModelRequestParameters()
    prepared = _openai_chat.prepare_messages(list(messages), parameters)  # as Agent does
    mapped = asyncio.run(_openai_chat._map_messages(prepared, parameters))
    return [dict(message) for message in mapped]


_pairing = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@given(message_ops)
@_pairing
def test_any_provider_view_becomes_messages_pydantic_ai_sends_validly(
    ops: list[tuple[Any, ...]],
) -> None:
    # Whatever the session holds (calls without results, orphans, failed replies, messages
    # between a call and its results, reused ids), what SessionHistory hands the model is a
    # request OpenAI takes once pydantic-ai's OpenAI model has made it.
    view = provider_messages(convert_to_llm(from_messages(ops)))
    assert openai_problems(sent(pi_to_model_messages(view))) == []


@given(tree_ops)
@_pairing
def test_any_session_context_becomes_messages_pydantic_ai_sends_validly(
    ops: list[tuple[Any, ...]],
) -> None:
    view = provider_messages(from_tree(ops))  # compactions cutting turns, branches, !bash
    assert openai_problems(sent(pi_to_model_messages(view))) == []


@st.composite
def agent_histories(draw: st.DrawFn) -> list[ModelMessage]:
    """Histories pydantic-ai's agent loop makes: a prompt, responses whose calls (ids unique in
    the history) are all answered - returned, failed or retried, in any order - at the start
    of the next request, which may go on with retry feedback or a new prompt."""
    history: list[ModelMessage] = []
    calls = 0
    for run in range(draw(st.integers(1, 3))):
        history.append(ModelRequest(parts=[UserPromptPart(draw(texts), timestamp=T0)]))
        for _ in range(draw(st.integers(0, 3))):
            count = draw(st.integers(0, 3))
            ids = [f"call_{calls + n}" for n in range(count)]
            calls += count
            parts: list[Any] = []
            if draw(st.booleans()):
                parts.append(ThinkingPart(draw(texts)))
            parts.append(TextPart(draw(texts)))
            parts.extend(ToolCallPart("read", {"n": n}, i) for n, i in enumerate(ids))
            history.append(ModelResponse(parts=parts, timestamp=T0))
            if not ids:
                break
            answers: list[Any] = [
                ToolReturnPart(
                    "read",
                    draw(texts),
                    i,
                    timestamp=T0,
                    outcome=draw(st.sampled_from(["success", "failed", "retried"])),
                )
                for i in draw(st.permutations(ids))
            ]
            after = draw(st.sampled_from(["none", "feedback", "prompt"]))
            if after == "feedback":
                retry = RetryInfo(cause="model_retry")
                answers.append(RetryFeedbackPart(draw(texts), retry=retry, timestamp=T0))
            elif after == "prompt":
                answers.append(UserPromptPart(f"and then {run}", timestamp=T0))
            history.append(ModelRequest(parts=answers))
    return history


@given(agent_histories())
@_pairing
def test_a_paired_pydantic_ai_history_stays_paired_in_pi(history: list[ModelMessage]) -> None:
    assert openai_problems(sent(history)) == []  # valid as pydantic-ai sends it
    llm = convert_to_llm(model_messages_to_pi(history))
    # Paired as stored: nothing for the provider view to repair (results may only be put in
    # the order of their calls), and every result is kept.
    assert openai_problems(to_openai_messages("", llm)) == []
    view = provider_messages(llm)
    assert not any(message.get("synthetic") for message in view)
    assert sorted(map(repr, view)) == sorted(map(repr, llm))
    assert openai_problems(sent(pi_to_model_messages(view))) == []
