"""The index in PostgreSQL full-text search, in the store's own database.

Documents go to ``ct_recall_docs`` with a ``tsvector`` of the ``simple`` configuration (no
stemming, no stop words: identifiers and numbers stay as written), under a GIN index; each
query term is a ``phraseto_tsquery``, ranked by ``ts_rank_cd`` and cut into a snippet by
``ts_headline``. PostgreSQL's parser keeps a path or a file name (``src/app/main.py``) as one
token, so a path matches when asked for whole, not by its last part alone (FTS5 does both).
"""

from __future__ import annotations

from collections.abc import Container, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Final

from contextree.errors import SessionFileError
from contextree.recall.base import MARK_END, MARK_START, TIP_KEY, Hit, IndexState, marked_hit
from contextree.recall.documents import Document
from contextree.recall.forms import term_forms

if TYPE_CHECKING:
    import psycopg

    from contextree.store.postgres import PostgresStore

__all__ = ["PostgresFtsBackend"]

_SCHEMA_LOCK: Final = 0x63747266  # serializes creating the recall tables
_SCHEMA: Final = (
    "CREATE TABLE IF NOT EXISTS ct_recall_state (session text PRIMARY KEY, config text NOT NULL,"
    " identity text NOT NULL, size bigint NOT NULL, count bigint NOT NULL, last_id text)",
    "CREATE TABLE IF NOT EXISTS ct_recall_docs (id bigserial PRIMARY KEY, session text NOT NULL,"
    " entry_id text NOT NULL, role text NOT NULL, ts text NOT NULL, body text NOT NULL,"
    " tsv tsvector NOT NULL)",
    "CREATE INDEX IF NOT EXISTS ct_recall_docs_tsv ON ct_recall_docs USING gin (tsv)",
    "CREATE INDEX IF NOT EXISTS ct_recall_docs_session ON ct_recall_docs (session)",
    "CREATE TABLE IF NOT EXISTS ct_recall_scope (session text NOT NULL, key text NOT NULL,"
    " identity text NOT NULL, size bigint NOT NULL, scope bytea NOT NULL,"
    " PRIMARY KEY (session, key))",
)
_HEADLINE: Final = (
    f"StartSel={MARK_START}, StopSel={MARK_END}, MaxWords=24, MinWords=8, ShortWord=1"
)
"""Matches between MARK_START and MARK_END (``marked_hit`` makes brackets of them)."""
_BATCH: Final = 256


def _clean(text: str) -> str:
    return text.replace("\x00", "")  # PostgreSQL text cannot hold NUL


class PostgresFtsBackend:
    """The documents of one session in ``ct_recall_docs``."""

    kind = "postgres"

    def __init__(self, conn: psycopg.Connection[Any], session: str) -> None:
        self._conn = conn
        self._session = session
        self._ready = False

    @classmethod
    def for_store(cls, store: PostgresStore) -> PostgresFtsBackend:
        """A backend on its own connection to ``store``'s database."""
        import psycopg

        try:
            conn = psycopg.connect(store.conninfo, autocommit=True)
        except psycopg.Error as exc:
            raise SessionFileError(store.name, f"cannot connect to PostgreSQL: {exc}") from None
        return cls(conn, store.session)

    def identity(self) -> str | None:
        row = self._conn.execute(
            "SELECT generation FROM ct_sessions WHERE session = %s", (self._session,)
        ).fetchone()
        return f"rows:{row[0]}" if row is not None else None

    def _ensure(self) -> None:
        if self._ready:
            return
        with self._conn.transaction():
            self._conn.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
            for statement in _SCHEMA:
                self._conn.execute(statement)
        self._ready = True

    def load_state(self) -> IndexState | None:
        row = self._conn.execute("SELECT to_regclass('ct_recall_state') IS NOT NULL").fetchone()
        if row is None or not row[0]:
            return None
        found = self._conn.execute(
            "SELECT config, identity, size, count, last_id FROM ct_recall_state WHERE session = %s",
            (self._session,),
        ).fetchone()
        if found is None:
            return None
        return IndexState(str(found[0]), str(found[1]), int(found[2]), int(found[3]), found[4])

    def _write(
        self, documents: Iterable[Document], state: IndexState, previous: IndexState | None
    ) -> bool:
        self._ensure()
        conn, session = self._conn, self._session
        with conn.transaction():
            # One writer per session's index at a time (two syncs would both add the tail).
            conn.execute(
                "SELECT pg_advisory_xact_lock(hashtextextended('ct_recall:' || %s, 0))",
                (session,),
            )
            if previous is not None and self.load_state() != previous:
                return False  # another worker indexed the same tail meanwhile
            if previous is None:
                conn.execute("DELETE FROM ct_recall_docs WHERE session = %s", (session,))
                conn.execute("DELETE FROM ct_recall_scope WHERE session = %s", (session,))
            with conn.cursor() as cur:
                cur.executemany(
                    "INSERT INTO ct_recall_docs (session, entry_id, role, ts, body, tsv) "
                    "VALUES (%s, %s, %s, %s, %s, to_tsvector('simple', %s))",
                    [
                        (session, d.entry_id, d.role, d.timestamp, _clean(d.text), _clean(d.text))
                        for d in documents
                    ],
                )
            conn.execute(
                "INSERT INTO ct_recall_state (session, config, identity, size, count, last_id) "
                "VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (session) DO UPDATE SET "
                "config = EXCLUDED.config, identity = EXCLUDED.identity, size = EXCLUDED.size, "
                "count = EXCLUDED.count, last_id = EXCLUDED.last_id",
                (session, state.config, state.identity, state.size, state.count, state.last_id),
            )
        return True

    def replace(self, documents: Iterable[Document], state: IndexState) -> None:
        self._write(documents, state, None)

    def add(self, documents: Sequence[Document], state: IndexState, previous: IndexState) -> bool:
        return self._write(documents, state, previous)

    def load_scope(self, key: str, state: IndexState) -> bytes | None:
        row = self._conn.execute("SELECT to_regclass('ct_recall_scope') IS NOT NULL").fetchone()
        if row is None or not row[0]:
            return None  # an index made before scopes were kept
        found = self._conn.execute(
            "SELECT scope FROM ct_recall_scope WHERE session = %s AND key = %s "
            "AND identity = %s AND size = %s",
            (self._session, key, state.identity, state.size),
        ).fetchone()
        return bytes(found[0]) if found is not None else None

    def load_tip(self, identity: str) -> tuple[int, bytes] | None:
        row = self._conn.execute("SELECT to_regclass('ct_recall_scope') IS NOT NULL").fetchone()
        if row is None or not row[0]:
            return None  # an index made before scopes were kept
        found = self._conn.execute(
            "SELECT size, scope FROM ct_recall_scope WHERE session = %s AND key = %s "
            "AND identity = %s",
            (self._session, TIP_KEY, identity),
        ).fetchone()
        return (int(found[0]), bytes(found[1])) if found is not None else None

    def save_scope(self, key: str, state: IndexState, scope: bytes) -> None:
        self._ensure()
        conn, session = self._conn, self._session
        with conn.transaction():
            conn.execute(
                "DELETE FROM ct_recall_scope WHERE session = %s "
                "AND (identity != %s OR (size != %s AND key != %s))",
                (session, state.identity, state.size, TIP_KEY),
            )
            conn.execute(
                "INSERT INTO ct_recall_scope (session, key, identity, size, scope) "
                "VALUES (%s, %s, %s, %s, %s) ON CONFLICT (session, key) DO UPDATE SET "
                "identity = EXCLUDED.identity, size = EXCLUDED.size, scope = EXCLUDED.scope",
                (session, key, state.identity, state.size, scope),
            )

    def search(
        self, terms: Sequence[str], *, any_term: bool, allowed: Container[str] | None, limit: int
    ) -> list[Hit]:
        if not terms or limit <= 0:
            return []
        joiner = " || " if any_term else " && "
        # A term matches in any of its written forms ("july" or "jul").
        groups = [term_forms(t) for t in terms]
        query = joiner.join(
            "(" + " || ".join(["phraseto_tsquery('simple', %s)"] * len(forms)) + ")"
            for forms in groups
        )
        params: list[Any] = [_clean(form) for forms in groups for form in forms]
        chosen: list[tuple[int, float]] = []
        with self._conn.cursor() as cur:
            cur.execute(
                f"SELECT id, entry_id, ts_rank_cd(tsv, q) AS score FROM ct_recall_docs, "
                f"({'SELECT ' + query} AS q) AS x WHERE session = %s AND tsv @@ q "
                "ORDER BY score DESC",
                [*params, self._session],
            )
            rows: list[Any] = []
            while len(chosen) < limit:
                rows = cur.fetchmany(_BATCH)
                if not rows:
                    break
                for row_id, entry_id, score in rows:
                    if allowed is None or entry_id in allowed:
                        chosen.append((int(row_id), float(score)))
                        if len(chosen) == limit:
                            break
        if not chosen:
            return []
        found = self._conn.execute(
            f"SELECT id, entry_id, role, ts, ts_headline('simple', body, q, "
            f"'{_HEADLINE}') FROM ct_recall_docs, ({'SELECT ' + query} AS q) AS x "
            "WHERE id = ANY(%s)",
            [*params, [row_id for row_id, _ in chosen]],
        ).fetchall()
        details = {row[0]: row[1:] for row in found}
        return [
            marked_hit(str(d[0]), str(d[1]), str(d[2]), " ".join(str(d[3]).split()), score)
            for row_id, score in chosen
            if (d := details.get(row_id)) is not None
        ]

    def close(self) -> None:
        self._conn.close()
