"""Entry points for outside agent frameworks, backed by a contextree session.

:class:`~contextree.integrations.core.ManagedSession` is the shared part: it stores the
conversation in a session, compacts it on the same triggers as our own agent and hands back
the context. The framework modules (``contextree.integrations.<framework>``) convert their
messages to pi's and back; each imports its framework only when it is itself imported, so
``import contextree`` never pulls one in.
"""

__all__: list[str] = []
