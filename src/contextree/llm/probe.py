"""Is anything listening at a local model server? Asked once before a conversation starts.

A refused connection on this machine means the server is not running; a request would fail at
once, and writing the user's prompt and an error reply to the session first helps nobody.
Only loopback addresses are probed: no name lookup, nothing sent off the machine.
"""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit

from contextree.errors import ModelUnreachableError
from contextree.llm.base import ModelClient

__all__ = ["is_loopback", "refused_connection"]


def is_loopback(host: str) -> bool:
    """Whether ``host`` only accepts connections from this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def refused_connection(
    client: ModelClient, *, timeout: float = 2.0
) -> ModelUnreachableError | None:
    """The error a request of ``client`` would end in when its server is on this machine and
    refuses connections; ``None`` when it accepts them, is elsewhere, or the client has no
    URL (the offline summarizer)."""
    url = getattr(client, "url", None)
    if not isinstance(url, str):
        return None
    parts = urlsplit(url)
    host = parts.hostname or ""
    if not is_loopback(host):
        return None
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
        with socket.create_connection((host, port), timeout=timeout):
            return None
    except ConnectionRefusedError:
        # Here, not at the top: _http imports httpx, and serve imports is_loopback from this
        # module without needing a client.
        from contextree.llm._http import origin

        return ModelUnreachableError(
            client.name,
            f"connection error: cannot reach {origin(url)} (connection refused); is the server "
            "running?",
        )
    except (OSError, ValueError):
        return None  # anything else is for the request itself to report
