"""LangChain <-> pi message conversion (contextree.integrations.langchain.convert)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_openai.chat_models.base import ChatOpenAI

from contextree.context import convert_to_llm, provider_messages
from contextree.entries.types import AgentMessage
from contextree.integrations.langchain import (
    MessageConversionError,
    from_langchain,
    from_langchain_messages,
    to_langchain,
    to_langchain_messages,
)
from contextree.llm.openai_compat import to_openai_messages
from provider_conversations import from_messages, from_tree, message_ops, tree_ops
from provider_rules import openai_problems

PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9a"
    "wAAAABJRU5ErkJggg=="
)


def fixed_now() -> int:
    return 1_765_000_000_000


# -- LangChain -> pi -----------------------------------------------------------------------------


def test_an_openai_reply_with_a_tool_call_becomes_a_pi_assistant_message() -> None:
    reply = AIMessage(
        content="",
        tool_calls=[{"id": "call_a", "name": "read_file", "args": {"path": "a.py"}}],
        usage_metadata={
            "input_tokens": 120,
            "output_tokens": 7,
            "total_tokens": 127,
            "input_token_details": {"cache_read": 20},
        },
        response_metadata={
            "model_provider": "openai",
            "model_name": "gpt-4o",
            "finish_reason": "tool_calls",
        },
        id="lc_run--1",
    )

    assert from_langchain(reply, now=fixed_now) == {
        "role": "assistant",
        "content": [
            {"type": "toolCall", "id": "call_a", "name": "read_file", "arguments": {"path": "a.py"}}
        ],
        "api": "openai-completions",
        "provider": "openai",
        "model": "gpt-4o",
        # LangChain counts cached input inside input_tokens; pi's input is the uncached part.
        "usage": {"input": 100, "output": 7, "cacheRead": 20, "cacheWrite": 0, "totalTokens": 127},
        "stopReason": "toolUse",
        "timestamp": fixed_now(),
        "langchain": {"id": "lc_run--1"},
    }


def test_reasoning_blocks_become_thinking_with_their_signature() -> None:
    reply = AIMessage(
        content=[
            {"type": "thinking", "thinking": "Check the tests first.", "signature": "sig-1"},
            {"type": "text", "text": "Running the tests."},
        ],
        response_metadata={"model_provider": "anthropic", "model_name": "claude-sonnet-4-5"},
    )

    message = from_langchain(reply, now=fixed_now)

    assert message["content"] == [
        {"type": "thinking", "thinking": "Check the tests first.", "thinkingSignature": "sig-1"},
        {"type": "text", "text": "Running the tests."},
    ]
    assert message["api"] == "anthropic-messages"
    assert message["stopReason"] == "stop"


def test_a_length_stop_and_a_missing_usage() -> None:
    reply = AIMessage(content="partial", response_metadata={"finish_reason": "length"})

    message = from_langchain(reply, now=fixed_now)

    assert message["stopReason"] == "length"
    assert message["usage"] == {
        "input": 0,
        "output": 0,
        "cacheRead": 0,
        "cacheWrite": 0,
        "totalTokens": 0,
    }
    assert (message["provider"], message["model"]) == ("langchain", "unknown")


def test_user_text_and_base64_images() -> None:
    human = HumanMessage(
        content=[
            {"type": "text", "text": "What is in this picture?"},
            {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
            {"type": "image", "base64": PNG, "mime_type": "image/png"},
        ],
        id="h1",
    )

    message = from_langchain(human, now=fixed_now)

    assert message["content"] == [
        {"type": "text", "text": "What is in this picture?"},
        {"type": "image", "data": PNG, "mimeType": "image/png"},
        {"type": "image", "data": PNG, "mimeType": "image/png"},
    ]
    assert from_langchain(HumanMessage("plain"), now=fixed_now)["content"] == "plain"


def test_tool_messages_keep_status_name_and_json_artifacts() -> None:
    failed = ToolMessage(
        "boom", tool_call_id="c1", name="bash", status="error", artifact={"exitCode": 1}
    )
    opaque = ToolMessage("ok", tool_call_id="c2", artifact=object())

    assert from_langchain(failed, now=fixed_now) == {
        "role": "toolResult",
        "toolCallId": "c1",
        "toolName": "bash",
        "content": [{"type": "text", "text": "boom"}],
        "details": {"exitCode": 1},
        "isError": True,
        "timestamp": fixed_now(),
    }
    stored = from_langchain(opaque, now=fixed_now, tool_names={"c2": "read"})
    assert stored["toolName"] == "read"  # from the call, when the message has no name
    assert "details" not in stored  # an object that is not JSON is not stored


def test_tool_names_come_from_the_calls_before_them() -> None:
    messages = from_langchain_messages(
        [
            AIMessage(content="", tool_calls=[{"id": "c1", "name": "grep", "args": {}}]),
            ToolMessage("hit", tool_call_id="c1"),
        ],
        now=fixed_now,
    )
    assert messages[1]["toolName"] == "grep"


def test_an_invalid_tool_call_is_kept_as_a_call() -> None:
    reply = AIMessage(
        content="",
        invalid_tool_calls=[
            {"type": "invalid_tool_call", "id": "c9", "name": "edit", "args": "{oops", "error": "x"}
        ],
    )
    message = from_langchain(reply, now=fixed_now)
    assert message["content"] == [
        {"type": "toolCall", "id": "c9", "name": "edit", "arguments": {}, "rawArguments": "{oops"}
    ]
    back = to_langchain(message)
    assert isinstance(back, AIMessage)
    assert back.invalid_tool_calls[0]["args"] == "{oops"
    assert back.tool_calls == []


@pytest.mark.parametrize(
    ("message", "words"),
    [
        (SystemMessage("be brief"), "SystemMessage"),
        (HumanMessage(content=[{"type": "image", "url": "https://x/y.png"}]), "URL"),
        (
            AIMessage(content=[{"type": "server_tool_call", "id": "s", "name": "web", "args": {}}]),
            "'server_tool_call'",
        ),
    ],
)
def test_what_pi_cannot_store_is_an_error_not_a_silent_loss(
    message: BaseMessage, words: str
) -> None:
    with pytest.raises(MessageConversionError, match=words):
        from_langchain(message, now=fixed_now)


def test_roles_without_a_langchain_counterpart_are_an_error() -> None:
    with pytest.raises(MessageConversionError, match="convert_to_llm"):
        to_langchain({"role": "compactionSummary", "summary": "s", "timestamp": 1})


# -- pi -> LangChain -----------------------------------------------------------------------------


def test_pi_messages_become_langchain_messages_chat_openai_can_send() -> None:
    pi: list[AgentMessage] = [
        {"role": "user", "content": "fix it", "timestamp": 1},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "look first", "thinkingSignature": "s"},
                {"type": "text", "text": "Reading."},
                {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "a"}},
            ],
            "api": "openai-completions",
            "provider": "openai",
            "model": "gpt-4o",
            "usage": {"input": 5, "output": 3, "cacheRead": 2, "cacheWrite": 0, "totalTokens": 10},
            "stopReason": "toolUse",
            "timestamp": 2,
        },
        {
            "role": "toolResult",
            "toolCallId": "c1",
            "toolName": "read",
            "content": [
                {"type": "text", "text": "x = 1"},
                {"type": "image", "data": PNG, "mimeType": "image/png"},
            ],
            "isError": False,
            "timestamp": 3,
        },
    ]

    messages = to_langchain_messages(pi)

    human, ai, tool = messages
    assert isinstance(human, HumanMessage) and human.content == "fix it"
    assert isinstance(ai, AIMessage)
    assert ai.tool_calls == [
        {"type": "tool_call", "id": "c1", "name": "read", "args": {"path": "a"}}
    ]
    assert ai.usage_metadata == {
        "input_tokens": 7,
        "output_tokens": 3,
        "total_tokens": 10,
        "input_token_details": {"cache_read": 2},
    }
    assert [block["type"] for block in ai.content_blocks] == ["reasoning", "text", "tool_call"]
    assert isinstance(tool, ToolMessage) and tool.tool_call_id == "c1" and tool.status == "success"
    # What ChatOpenAI sends for them: reasoning left out, the call answered right after it.
    model = ChatOpenAI(model="gpt-4o", api_key="sk-test")  # type: ignore[arg-type]
    body = model._get_request_payload(messages)
    assert openai_problems(body["messages"]) == []
    assert body["messages"][1]["content"] == [{"type": "text", "text": "Reading."}]
    assert body["messages"][1]["tool_calls"][0]["function"]["name"] == "read"


# -- round trips ---------------------------------------------------------------------------------

_text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40)
_ids = st.text(st.sampled_from("abcdef0123456789_-"), min_size=1, max_size=12)
_json_scalar = st.none() | st.booleans() | st.integers(-1000, 1000) | _text
_json = st.recursive(
    _json_scalar,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_ids, inner, max_size=3),
    max_leaves=8,
)
_arguments = st.dictionaries(_ids, _json, max_size=3)
_timestamps = st.integers(0, 2**45)
_counts = st.integers(0, 10**7)

_text_block = st.builds(lambda t: {"type": "text", "text": t}, _text) | st.builds(
    lambda t, s: {"type": "text", "text": t, "textSignature": s}, _text, _ids
)
_image_block = st.builds(
    lambda mime: {"type": "image", "data": PNG, "mimeType": mime},
    st.sampled_from(["image/png", "image/jpeg"]),
)
_thinking_block = st.fixed_dictionaries(
    {"type": st.just("thinking"), "thinking": _text},
    optional={"thinkingSignature": _ids, "redacted": st.booleans()},
)
_call_block = st.fixed_dictionaries(
    {
        "type": st.just("toolCall"),
        "id": _ids,
        "name": _ids,
        "arguments": _arguments,
    },
    optional={"thoughtSignature": _ids},
)
_bad_call_block = st.builds(
    lambda i, n, raw: {
        "type": "toolCall",
        "id": i,
        "name": n,
        "arguments": {},
        "rawArguments": raw,
    },
    _ids,
    _ids,
    _text,
)
_identity = st.fixed_dictionaries({"id": _ids}, optional={"name": _ids})


def _usage() -> st.SearchStrategy[dict[str, Any]]:
    def build(fresh: int, out: int, read: int, write: int, cost: float | None) -> dict[str, Any]:
        usage: dict[str, Any] = {
            "input": fresh,
            "output": out,
            "cacheRead": read,
            "cacheWrite": write,
            "totalTokens": fresh + out + read + write,
        }
        if cost is not None:
            usage["cost"] = {
                "input": cost,
                "output": 0,
                "cacheRead": 0,
                "cacheWrite": 0,
                "total": cost,
            }
        return usage

    return st.builds(build, _counts, _counts, _counts, _counts, st.none() | st.floats(0, 5))


_user = st.fixed_dictionaries(
    {
        "role": st.sampled_from(["user", "developer"]),
        "content": _text | st.lists(_text_block | _image_block, max_size=4),
        "timestamp": _timestamps,
    },
    optional={"langchain": _identity},
)
_assistant = st.fixed_dictionaries(
    {
        "role": st.just("assistant"),
        "content": st.lists(
            _text_block | _thinking_block | _call_block | _bad_call_block, max_size=5
        ),
        "api": st.sampled_from(["openai-completions", "anthropic-messages", "openai-responses"]),
        "provider": st.sampled_from(["openai", "anthropic", "llamacpp"]),
        "model": _ids,
        "usage": _usage(),
        "stopReason": st.sampled_from(["stop", "length", "toolUse", "error", "aborted"]),
        "timestamp": _timestamps,
    },
    optional={"errorMessage": _text, "responseId": _ids, "langchain": _identity},
)
_tool_result = st.fixed_dictionaries(
    {
        "role": st.just("toolResult"),
        "toolCallId": _ids,
        "toolName": _ids,
        "content": st.lists(_text_block | _image_block, max_size=3),
        "isError": st.booleans(),
        "timestamp": _timestamps,
    },
    optional={
        "details": st.dictionaries(_ids, _json, max_size=3),
        "prunedAt": _timestamps,
        "langchain": st.fixed_dictionaries({"id": _ids}),
    },
)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(_user, _assistant, _tool_result))
def test_pi_to_langchain_and_back_is_lossless(message: AgentMessage) -> None:
    assert from_langchain(to_langchain(message), now=fixed_now) == message


def _langchain_view(message: BaseMessage) -> dict[str, Any]:
    """What a LangChain message means, independent of how its content is spelled."""
    view: dict[str, Any] = {
        "type": message.type,
        "id": message.id,
        "name": message.name,
        "blocks": [
            {key: value for key, value in block.items() if key != "extras"}
            for block in message.content_blocks
        ],
    }
    if isinstance(message, AIMessage):
        view["tool_calls"] = [
            {key: call[key] for key in ("id", "name", "args")}  # type: ignore[literal-required]
            for call in message.tool_calls
        ]
        usage = message.usage_metadata
        details = dict(usage.get("input_token_details") or {}) if usage else {}
        view["usage"] = (
            (
                usage["input_tokens"],
                usage["output_tokens"],
                details.get("cache_read", 0),
                details.get("cache_creation", 0),
            )
            if usage
            else None
        )
    if isinstance(message, ToolMessage):
        view.update(
            tool_call_id=message.tool_call_id, status=message.status, artifact=message.artifact
        )
    return view


_lc_call = st.builds(
    lambda i, n, a: {"id": i, "name": n, "args": a, "type": "tool_call"}, _ids, _ids, _arguments
)
_lc_usage = st.builds(
    lambda i, o, r: {
        "input_tokens": i + r,
        "output_tokens": o,
        "total_tokens": i + r + o,
        "input_token_details": {"cache_read": r},
    },
    _counts,
    _counts,
    _counts,
)
_lc_human = st.builds(
    lambda content, ident: HumanMessage(content=content, id=ident),
    _text | st.lists(st.builds(lambda t: {"type": "text", "text": t}, _text), max_size=3),
    _ids,
)
_lc_ai = st.builds(
    lambda text, calls, usage, ident: AIMessage(
        content=text,
        tool_calls=calls,
        usage_metadata=usage,
        response_metadata={"model_provider": "openai", "model_name": "gpt-4o"},
        id=ident,
    ),
    _text,
    st.lists(_lc_call, max_size=3, unique_by=lambda c: c["id"]),
    _lc_usage,
    _ids,
)
_lc_tool = st.builds(
    lambda text, call, name, error, artifact, ident: ToolMessage(
        content=text,
        tool_call_id=call,
        name=name,
        status="error" if error else "success",
        artifact=artifact,
        id=ident,
    ),
    _text,
    _ids,
    _ids,
    st.booleans(),
    st.none() | st.dictionaries(_ids, _json, max_size=2),
    _ids,
)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(_lc_human, _lc_ai, _lc_tool))
def test_langchain_to_pi_and_back_keeps_what_langchain_meant(message: BaseMessage) -> None:
    back = to_langchain(from_langchain(message, now=fixed_now))
    assert _langchain_view(back) == _langchain_view(message)


# -- tool-call pairing, both ways -----------------------------------------------------------------

_chat_openai = ChatOpenAI(model="gpt-4o", api_key="sk-test")  # type: ignore[arg-type]


def _sent(messages: list[BaseMessage]) -> list[dict[str, Any]]:
    """The ``messages`` of the request ChatOpenAI makes for ``messages`` (nothing is sent)."""
    body = _chat_openai._get_request_payload(messages)
    return list(body["messages"])


@given(message_ops)
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_any_provider_view_becomes_langchain_messages_chat_openai_sends_validly(
    ops: list[tuple[Any, ...]],
) -> None:
    # Whatever the session holds (calls without results, orphans, failed replies, messages
    # between a call and its results, reused ids), what the middleware hands the model is a
    # request OpenAI takes once ChatOpenAI has made it.
    view = provider_messages(convert_to_llm(from_messages(ops)))
    assert openai_problems(_sent(to_langchain_messages(view))) == []


@given(tree_ops)
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_any_session_context_becomes_langchain_messages_chat_openai_sends_validly(
    ops: list[tuple[Any, ...]],
) -> None:
    view = provider_messages(from_tree(ops))  # compactions cutting turns, branches, !bash
    assert openai_problems(_sent(to_langchain_messages(view))) == []


@st.composite
def _lc_conversations(draw: st.DrawFn) -> list[BaseMessage]:
    """Conversations create_agent's loop makes: a question, replies whose calls (ids unique in
    the conversation) are all answered, in any order, before the next reply."""
    messages: list[BaseMessage] = []
    calls = 0
    for turn in range(draw(st.integers(1, 4))):
        messages.append(HumanMessage(draw(_text), id=f"h{turn}"))
        for step in range(draw(st.integers(0, 3))):
            count = draw(st.integers(0, 3))
            ids = [f"call_{calls + n}" for n in range(count)]
            calls += count
            messages.append(
                AIMessage(
                    content=draw(_text),
                    tool_calls=[
                        {"id": i, "name": "read", "args": {"n": n}, "type": "tool_call"}
                        for n, i in enumerate(ids)
                    ],
                    id=f"a{turn}_{step}",
                )
            )
            for i in draw(st.permutations(ids)):
                error = draw(st.booleans())
                status = "error" if error else "success"
                messages.append(ToolMessage(draw(_text), tool_call_id=i, status=status, id=f"t{i}"))
    return messages


@given(_lc_conversations())
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_a_paired_langchain_conversation_stays_paired_in_pi(messages: list[BaseMessage]) -> None:
    assert openai_problems(_sent(messages)) == []  # valid as LangChain sends it
    pi = from_langchain_messages(messages, now=fixed_now)
    llm = convert_to_llm(pi)
    # Paired as stored: nothing for the provider view to repair (results may only be put
    # in the order of their calls), and every result is kept.
    assert openai_problems(to_openai_messages("", llm)) == []
    view = provider_messages(llm)
    assert not any(message.get("synthetic") for message in view)
    assert sorted(map(repr, view)) == sorted(map(repr, llm))
    assert openai_problems(_sent(to_langchain_messages(llm))) == []
