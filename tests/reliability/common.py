"""Small pieces the reliability harnesses share: paths, child environments, builders."""

from __future__ import annotations

import hashlib
import os
import random
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
SRC = REPO / "src"
TESTS = REPO / "tests"

FAKE_KEY = "sk-proj-RELIABILITYfake0key0123456789abcdefXYZ"
"""An API key shaped like a real one (the built-in redaction pattern matches it)."""


def child_env(**extra: str) -> dict[str, str]:
    """The environment of a child Python: our sources importable, no keys, no user settings."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("CONTEXTREE_") and not key.endswith("_API_KEY")
    }
    env["PYTHONPATH"] = os.pathsep.join([str(SRC), str(TESTS)])
    env["PYTHONHASHSEED"] = "0"
    env.update(extra)
    return env


def python() -> str:
    return sys.executable


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def file_sha(path: Path) -> str:
    return sha(path.read_bytes()) if path.exists() else "absent"


def text_of(message: Any) -> str:
    """Every text a message (or a pruned one) holds, joined."""
    if not isinstance(message, dict):
        return ""
    parts: list[str] = []
    for key in ("content", "prunedContent"):
        content = message.get(key)
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts.extend(str(block.get("text", "")) for block in content if isinstance(block, dict))
    return "\n".join(parts)


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 0}


def assistant_call(call_id: str, command: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Running it."},
            {"type": "toolCall", "id": call_id, "name": "bash", "arguments": {"command": command}},
        ],
        "api": "openai-completions",
        "provider": "openai",
        "model": "gpt-4o-mini",
        "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
        "stopReason": "toolUse",
        "timestamp": 0,
    }


def tool_result(call_id: str, text: str) -> dict[str, Any]:
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": "bash",
        "content": [{"type": "text", "text": text}],
        "isError": False,
        "timestamp": 0,
    }


def filler(rng: random.Random, size: int) -> str:
    """``size`` characters of words (some non-ASCII), cheap to make."""
    words = ("alpha", "beta", "gamma", "delta", "grüße", "日本", "x=1;", '{"k": [1]}', "→")
    out: list[str] = []
    total = 0
    while total < size:
        word = rng.choice(words)
        out.append(word)
        total += len(word) + 1
    return " ".join(out)[:size]


def sized(rng: random.Random) -> int:
    """A message size: mostly small, sometimes tens of kilobytes, rarely a few hundred."""
    roll = rng.random()
    if roll < 0.6:
        return rng.randint(5, 400)
    if roll < 0.95:
        return rng.randint(1_000, 40_000)
    return rng.randint(100_000, 400_000)
