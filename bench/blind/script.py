"""A blind session's script (``bench/blind/<split>/<name>.json``) made into pi messages and probes.

A script is readable JSON written by hand::

    {"title": "...", "domain": "...",
     "messages": [
        {"role": "system", "text": "..."},                    # a developer message
        {"role": "user", "text": "..."},
        {"role": "assistant", "text": "...",                   # text may be ""
         "tools": [{"name": "web_search", "arguments": {...}, "result": "...", "error": false}]}
     ],
     "probes": [{"kind": "fact", "values": ["..."], "text": "what the probe is"}]}

An assistant message's tools become tool calls in that message, each followed by its result.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from contextree.eval.messages import Message, assistant, system, tool_result, user
from contextree.eval.probes import Probe
from contextree.eval.probes_file import ProbesFileError, probe_from_object

__all__ = ["Script", "ScriptError", "load_script"]


class ScriptError(ValueError):
    """A script that cannot be used; the message names the file and the field."""


@dataclass(frozen=True)
class Script:
    """One blind session: its pi messages (oldest first) and its probes."""

    name: str
    domain: str
    messages: list[Message]
    probes: list[Probe]


def _text(item: dict[str, Any], where: str, *, empty: bool = False) -> str:
    text = item.get("text")
    if not isinstance(text, str) or not (empty or text.strip()):
        raise ScriptError(f'{where}: field "text": expected a non-empty string')
    return text


def _assistant(item: dict[str, Any], where: str, number: int) -> list[Message]:
    text = _text(item, where, empty=True)
    tools = item.get("tools", [])
    if not isinstance(tools, list):
        raise ScriptError(f'{where}: field "tools": expected a list')
    calls, results = [], []
    for k, tool in enumerate(tools):
        at = f"{where}.tools[{k}]"
        if not isinstance(tool, dict):
            raise ScriptError(f"{at}: expected an object with name, arguments and result")
        name, arguments, result = tool.get("name"), tool.get("arguments", {}), tool.get("result")
        if not isinstance(name, str) or not isinstance(arguments, dict):
            raise ScriptError(f'{at}: expected "name" (a string) and "arguments" (an object)')
        if not isinstance(result, str):
            raise ScriptError(f'{at}: field "result": expected a string')
        call_id = f"call_{number}_{k}"
        # Not call(): an argument may be called "name" or "call_id".
        calls.append({"type": "toolCall", "id": call_id, "name": name, "arguments": arguments})
        results.append(tool_result(call_id, name, result, is_error=bool(tool.get("error"))))
    if not text and not calls:
        raise ScriptError(f"{where}: an assistant message needs text or tools")
    return [assistant(text, *calls), *results]


def _messages(items: Any, path: Path) -> list[Message]:
    if not isinstance(items, list) or not items:
        raise ScriptError(f'{path}: field "messages": expected a non-empty list')
    messages: list[Message] = []
    for number, item in enumerate(items):
        where = f"{path}: messages[{number}]"
        role = item.get("role") if isinstance(item, dict) else None
        if role == "user":
            messages.append(user(_text(item, where)))
        elif role == "system":
            messages.append(system(_text(item, where), custom=False))
        elif role == "assistant":
            messages += _assistant(item, where, number)
        else:
            raise ScriptError(f'{where}: field "role": expected user, assistant or system')
    for stamp, message in enumerate(messages):
        message["timestamp"] = 1_760_000_000_000 + stamp * 45_000
    return messages


def _probes(items: Any, path: Path) -> list[Probe]:
    if not isinstance(items, list) or not items:
        raise ScriptError(f'{path}: field "probes": expected a non-empty list')
    try:
        return [
            probe_from_object(item, f"{path}: probes[{n}]", default_id=f"{path.stem}:{n}")
            for n, item in enumerate(items)
        ]
    except ProbesFileError as exc:
        raise ScriptError(str(exc)) from None


def load_script(path: Path) -> Script:
    """The script at ``path``.

    Raises:
        ScriptError: the file is not JSON or a field is missing or of the wrong type.
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ScriptError(f"{path}:{exc.lineno}: not JSON ({exc.msg})") from None
    if not isinstance(data, dict):
        raise ScriptError(f"{path}: expected an object with messages and probes")
    messages = _messages(data.get("messages"), path)
    return Script(
        path.stem, str(data.get("domain", "")), messages, _probes(data.get("probes"), path)
    )
