"""Connections shared by every PostgreSQL session a process opens (``psycopg_pool``).

A process that serves many sessions (one per conversation, say) would otherwise hold a
connection per open session: 64 sessions, 64 server backends. After
:func:`share_connections`, every :class:`~contextree.store.postgres.PostgresStore` of that
database borrows a connection from one pool for each read or write transaction and gives it
back at once; a session's write lock is a transaction-scoped advisory lock, so nothing of a
session stays tied to a connection between transactions. (Waiting for other workers' appends,
:meth:`~contextree.store.postgres.PostgresStore.wait_for_change`, still listens on a
connection of its own.)

A child made by ``fork()`` forgets the parent's pools without closing them: their connections
belong to the parent. It makes its own on first use after calling :func:`share_connections`.
"""

from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING, Any, Final

from contextree.errors import SessionFileError
from contextree.store.masking import mask_passwords

if TYPE_CHECKING:
    import psycopg
    from psycopg_pool import ConnectionPool

    from contextree.store.postgres_group import AppendGroup

__all__ = ["SESSION_SETTINGS", "group_for", "pool_for", "share_connections", "stop_sharing"]

SESSION_SETTINGS: Final = (
    "SET plan_cache_mode = force_custom_plan; SET max_parallel_workers_per_gather = 0"
)
"""What every connection of ours runs first (see ``PostgresStore._open`` for why)."""

_pools: dict[str, ConnectionPool[Any]] = {}
_groups: dict[str, AppendGroup] = {}
_guard = threading.Lock()


def _forget_in_child() -> None:
    global _guard
    _pools.clear()  # not closed: the connections are the parent's
    _groups.clear()
    _guard = threading.Lock()


os.register_at_fork(after_in_child=_forget_in_child)


def _configure(conn: psycopg.Connection[Any]) -> None:
    conn.execute(SESSION_SETTINGS)


def share_connections(
    conninfo: str, *, max_size: int = 10, min_size: int = 1, timeout: float = 30.0
) -> ConnectionPool[Any]:
    """From now on, sessions of the database at ``conninfo`` (the URL without ``#SESSION``)
    share at most ``max_size`` connections in this process; ``timeout`` is how long a
    transaction waits for a free one. Calling it again for the same database returns the
    pool already made."""
    try:
        from psycopg_pool import ConnectionPool
    except ImportError:
        raise SessionFileError(
            mask_passwords(conninfo),
            "sharing connections needs psycopg_pool: pip install 'contextree[postgres]'",
        ) from None
    if max_size < 1 or min_size < 0 or min_size > max_size:
        raise ValueError("need 0 <= min_size <= max_size and max_size >= 1")
    with _guard:
        pool = _pools.get(conninfo)
        if pool is None:
            pool = ConnectionPool(
                conninfo,
                min_size=min_size,
                max_size=max_size,
                timeout=timeout,
                kwargs={"autocommit": True},
                configure=_configure,
                name="contextree",
                open=True,
            )
            _pools[conninfo] = pool
            from contextree.store.postgres_group import AppendGroup

            _groups[conninfo] = AppendGroup(pool)
        return pool


def pool_for(conninfo: str) -> ConnectionPool[Any] | None:
    """The pool :func:`share_connections` made for ``conninfo`` in this process, if any."""
    return _pools.get(conninfo)


def group_for(conninfo: str) -> AppendGroup | None:
    """The group commit of the appends through :func:`pool_for`'s pool, if any."""
    return _groups.get(conninfo)


def stop_sharing(conninfo: str | None = None) -> None:
    """Close the pool of ``conninfo`` (every pool: ``None``); its sessions go back to a
    connection each."""
    with _guard:
        keys = list(_pools) if conninfo is None else [conninfo]
        pools = [_pools.pop(key) for key in keys if key in _pools]
        for key in keys:
            _groups.pop(key, None)
    for pool in pools:
        pool.close()
