"""The package surface: exports, and no SDK import on ``import contextree.llm``."""

from __future__ import annotations

import subprocess
import sys

import pytest

import contextree.llm
from contextree.llm import sdk_adapters


def test_all_names_exist() -> None:
    for name in contextree.llm.__all__:
        assert hasattr(contextree.llm, name), name


def test_import_does_not_load_the_sdks() -> None:
    code = (
        "import sys, contextree.llm, contextree.llm.sdk_adapters;"
        "assert 'openai' not in sys.modules and 'anthropic' not in sys.modules, sorted(sys.modules)"
    )
    subprocess.run([sys.executable, "-c", code], check=True, env={"PYTHONPATH": ":".join(sys.path)})


def test_missing_sdk_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "openai", None)  # makes "import openai" fail
    with pytest.raises(ImportError, match=r'pip install "contextree\[openai\]"'):
        sdk_adapters.OpenAISDKClient(object(), "gpt-4o")  # type: ignore[arg-type]
    monkeypatch.setitem(sys.modules, "anthropic", None)
    with pytest.raises(ImportError, match=r'pip install "contextree\[anthropic\]"'):
        sdk_adapters.AnthropicSDKClient(object(), "claude")  # type: ignore[arg-type]
