"""Build model clients for the command line from a ``provider:model`` spec."""

from __future__ import annotations

from contextree.llm.base import ModelClient

__all__ = [
    "DEFAULT_MODEL",
    "destination",
    "make_client",
]

DEFAULT_MODEL = "offline"


def _offline() -> ModelClient:
    from contextree.compaction.offline import OfflineSummarizer

    return OfflineSummarizer()


def make_client(
    spec: str | None,
    *,
    base_url: str | None = None,
    token: str | None = None,
    timeout: float | None = None,
) -> ModelClient:
    """The client for ``spec`` (default: the built-in offline summarizer)."""
    spec = spec or DEFAULT_MODEL
    if spec.strip().partition(":")[0].strip().lower() == "offline":
        # What create_client makes of it, without importing the HTTP clients (httpx: 0.1 s
        # of a compact command's start-up).
        return _offline()
    from contextree.llm.registry import create_client

    return create_client(
        spec,
        base_url=base_url,
        token=token,
        timeout=timeout,
        offline_factory=_offline,
    )


def destination(client: ModelClient) -> str | None:
    """The URL ``client`` sends the conversation to when that is off this machine (``None``
    for the offline summarizer and servers on the loopback interface)."""
    url = getattr(client, "url", None) or getattr(client, "endpoint", None)
    if not isinstance(url, str):
        return None  # before the imports: the offline summarizer's compact skips them (16 ms)
    from urllib.parse import urlsplit

    from contextree.serve import is_loopback

    host = urlsplit(url).hostname or ""
    return None if is_loopback(host) else url
