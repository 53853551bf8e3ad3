"""``contextree serve``: the remote summarization endpoint (see :mod:`.server`).

:mod:`.intake` collects request heads without holding a worker, :mod:`.stream` reads a
connection under a deadline.
"""

from contextree.serve.server import ServerConfig, SummaryServer, is_loopback

__all__ = ["ServerConfig", "SummaryServer", "is_loopback"]
