"""An append to a PostgreSQL session in one round trip (:meth:`PostgresStore.append_at_end`).

The locked way to append (:meth:`RowStore.transaction`) takes the session's lock and reads its
state in one round trip, then sends the lines and the COMMIT in another, and the lock is held
across both and across the worker's own work in between: with 8 workers on 2 cores, a worker
that lost the CPU while holding the lock stopped every other one. Here one statement calls a
server-side function (:data:`CREATE_FUNCTION`) in its own transaction: it takes the lock,
appends after whatever the session holds now when that is safe, and returns the lines other
workers added since this worker last looked, which the worker takes in afterwards, in front of
its own, exactly as it would have under the lock. The lock is held only while the server runs
the function. (A pipeline of the same statements also makes one round trip, but psycopg spends
about 0.1 ms of CPU per statement in it, and the CPU is what 8 workers on 2 cores run out of.)

"Safe" means the outcome is the one the locked way would have had: the session was not
rewritten since the worker read it (same generation), the line it last saw still ends where its
view ends; every line stored ends with a newline; and no line added since carries an id seen
before in the session or one of the new lines' ids, or names one of those as its parent (cycle
refusal and id checks, done by the worker on what it knew, stay true). When that does not hold
nothing is written and the caller appends the locked way.

Sessions that share a process's pooled connections send the appends their threads make at
the same moment in one statement (:data:`CREATE_MANY_FUNCTION`, one transaction: group commit,
:mod:`contextree.store.postgres_group`); each is the call above, made for its session.

The tables and their schema version do not change: an older contextree ignores the functions,
and this one creates them in a database that lacks them (``PostgresStore._has_append_function``).
A changed function gets a new name, so that workers of both versions can share a database while
they are upgraded.
"""

from __future__ import annotations

from typing import Final

from contextree.errors import SessionFileError

__all__ = [
    "APPEND_FUNCTION",
    "BUSY",
    "CALL_APPEND",
    "CALL_MANY",
    "CREATE_FUNCTION",
    "CREATE_MANY_FUNCTION",
    "FUNCTION_EXISTS",
    "MANY_FUNCTION",
    "TakenIn",
]

APPEND_FUNCTION: Final = "ct_append_v1"
"""The server-side function's name (a changed function gets a new one: ``_v2``)."""

_SIGNATURE: Final = (
    f"{APPEND_FUNCTION}(text, bigint, bigint, bigint, text, bytea[], text[], text[], text[], text)"
)

MANY_FUNCTION: Final = "ct_append_many_v1"
"""The server-side function that makes several sessions' appends in one statement (a changed
one gets a new name too)."""

_MANY_SIGNATURE: Final = (
    f"{MANY_FUNCTION}(text[], bigint[], bigint[], bigint[], integer[], bytea[], text[], text[], "
    "text[], text[])"
)

FUNCTION_EXISTS: Final = (
    f"SELECT to_regprocedure('{_SIGNATURE}') IS NOT NULL "
    f"AND to_regprocedure('{_MANY_SIGNATURE}') IS NOT NULL"
)
"""Whether the database has both functions."""

_DECLARED: Final = """DECLARE
  v_generation bigint;
  v_size bigint;
  v_lines bigint;
  v_added bigint;
"""

_APPEND: Final = r"""  SELECT s.generation, s.size, s.lines INTO v_generation, v_size, v_lines
    FROM ct_sessions s WHERE s.session = p_session;
  IF NOT FOUND OR v_generation <> p_generation OR v_size < p_known THEN
    {decline};  -- gone, or rewritten since the worker read it
  END IF;
  IF NOT EXISTS (
      SELECT 1 FROM ct_lines l WHERE l.session = p_session AND l.byte_offset = p_seen
        AND l.byte_offset + length(l.line) = p_known
        AND substr(l.line, length(l.line)) = '\x0a'::bytea)
    OR (SELECT substr(l.line, length(l.line)) FROM ct_lines l
        WHERE l.session = p_session AND l.seq = v_lines) IS DISTINCT FROM '\x0a'::bytea
    OR EXISTS (
      SELECT 1 FROM ct_lines f
      WHERE f.session = p_session AND f.byte_offset >= p_known AND f.byte_offset < v_size
        AND (f.id = ANY(p_ids) OR f.parent_id = ANY(p_ids)
             OR EXISTS (SELECT 1 FROM ct_lines e WHERE e.session = p_session
                        AND e.id = f.id AND e.byte_offset < f.byte_offset))) THEN
    {decline};  -- the worker's view changed, a line is unfinished, or ids meet: take the lock
  END IF;
  RETURN QUERY SELECT {request}v_size, l.byte_offset, l.line FROM ct_lines l
    WHERE l.session = p_session AND l.byte_offset >= p_seen AND l.byte_offset < v_size
    ORDER BY l.byte_offset;
  INSERT INTO ct_lines (session, seq, byte_offset, line, type, id, parent_id)
    SELECT p_session, v_lines + r.n,
           v_size + sum(length(r.line)) OVER (ORDER BY r.n) - length(r.line),
           r.line, r.type, r.id, r.parent
    FROM unnest(p_lines, p_types, p_ids, p_parents) WITH ORDINALITY AS r(line, type, id, parent, n);
  v_added := (SELECT sum(length(x)) FROM unnest(p_lines) AS x);
  UPDATE ct_sessions SET size = v_size + v_added, lines = v_lines + cardinality(p_lines)
    WHERE session = p_session;
  PERFORM pg_notify('contextree', json_build_object(
    'session', p_session, 'size', v_size + v_added, 'generation', v_generation,
    'writer', p_writer)::text);
"""
"""The body shared by the two functions, after the session's lock: the checks (``{decline}``
when one fails: nothing written) and the append, reading the variables ``p_session``,
``p_generation``, ``p_known``, ``p_seen``, ``p_lines``, ``p_types``, ``p_ids``, ``p_parents``
and ``p_writer``; ``{request}`` goes in front of each row it returns."""

CREATE_FUNCTION: Final = (
    rf"""
CREATE OR REPLACE FUNCTION {APPEND_FUNCTION}(
  p_session text, p_generation bigint, p_known bigint, p_seen bigint, p_lock_timeout text,
  p_lines bytea[], p_types text[], p_ids text[], p_parents text[], p_writer text)
RETURNS TABLE (o_before bigint, o_offset bigint, o_line bytea)
LANGUAGE plpgsql SET plan_cache_mode = auto AS $fn$
#variable_conflict use_column
{_DECLARED}BEGIN
  PERFORM set_config('lock_timeout', p_lock_timeout, true);
  PERFORM pg_advisory_xact_lock(hashtextextended(p_session, 0));
"""
    + _APPEND.format(decline="RETURN", request="")
    + "END\n$fn$\n"
)
"""Appends the lines after the session's current end when the checks of the module's
docstring hold, in the statement's own transaction (lock wait limit, the session's lock, the
lines, the new size and line count, the announcement); returns the size before the append
with each line from the one at ``p_seen`` to that end, or no row when it wrote nothing."""

CALL_APPEND: Final = (
    f"SELECT o_before, o_offset, o_line FROM {APPEND_FUNCTION}"
    "(%b::text, %b::bigint, %b::bigint, %b::bigint, %b::text, %b::bytea[], %b::text[], "
    "%b::text[], %b::text[], %b::text)"
)
"""The call of :data:`CREATE_FUNCTION`. The parameters go in binary: psycopg spent more CPU
escaping the lines for the text format than on the rest of the call."""


CREATE_MANY_FUNCTION: Final = (
    rf"""
CREATE OR REPLACE FUNCTION {MANY_FUNCTION}(
  a_sessions text[], a_generations bigint[], a_known bigint[], a_seen bigint[],
  a_ends integer[], a_lines bytea[], a_types text[], a_ids text[], a_parents text[],
  a_writers text[])
RETURNS TABLE (o_request integer, o_before bigint, o_offset bigint, o_line bytea)
LANGUAGE plpgsql SET plan_cache_mode = auto AS $fn$
#variable_conflict use_column
{_DECLARED}  v_start integer;
  p_session text;
  p_generation bigint;
  p_known bigint;
  p_seen bigint;
  p_lines bytea[];
  p_types text[];
  p_ids text[];
  p_parents text[];
  p_writer text;
BEGIN
  FOR i IN 1 .. cardinality(a_sessions) LOOP
    v_start := CASE WHEN i = 1 THEN 1 ELSE a_ends[i - 1] + 1 END;
    p_session := a_sessions[i];
    p_generation := a_generations[i];
    p_known := a_known[i];
    p_seen := a_seen[i];
    p_lines := a_lines[v_start:a_ends[i]];
    p_types := a_types[v_start:a_ends[i]];
    p_ids := a_ids[v_start:a_ends[i]];
    p_parents := a_parents[v_start:a_ends[i]];
    p_writer := a_writers[i];
    -- Never wait for a lock while holding another session's: no deadlock between two such
    -- statements, and an append is not held up behind a session whose lock is busy.
    IF NOT pg_try_advisory_xact_lock(hashtextextended(p_session, 0)) THEN
      RETURN QUERY SELECT i, -1::bigint, NULL::bigint, NULL::bytea;
      CONTINUE;
    END IF;
"""
    + _APPEND.format(decline="CONTINUE", request="i, ")
    + "  END LOOP;\nEND\n$fn$\n"
)
"""The appends of several sessions in one statement, so in one transaction and one commit:
request ``i`` (1-based) appends the lines ``a_ends[i-1]+1 .. a_ends[i]`` of the flat arrays
with the same checks and writes as :data:`CREATE_FUNCTION` (the same text, :data:`_APPEND`).
Its rows carry ``o_request = i``; it has none when the checks declined it, and one with
``o_before = -1`` (:data:`BUSY`) when another transaction held the session's lock: nothing was
written for it, and it is appended alone, waiting for the lock there (so no lock wait limit
is needed here)."""

CALL_MANY: Final = (
    f"SELECT o_request, o_before, o_offset, o_line FROM {MANY_FUNCTION}"
    "(%b::text[], %b::bigint[], %b::bigint[], %b::bigint[], %b::integer[], %b::bytea[], "
    "%b::text[], %b::text[], %b::text[], %b::text[])"
)
"""The call of :data:`CREATE_MANY_FUNCTION`, in binary as :data:`CALL_APPEND`."""

BUSY: Final = -1
"""``o_before`` of a request whose session's lock another transaction held (see
:data:`CREATE_MANY_FUNCTION`)."""


class TakenIn:
    """The session as it was just before an append in one round trip: its size (where the
    appended lines begin) and the bytes from the start of the last line the worker had seen
    (what others appended since, in front of ours). A read-only
    :class:`~contextree.store.base.StoreTransaction` for taking those lines in."""

    replaced = False

    def __init__(self, name: str, size: int, tail_start: int, tail: bytes) -> None:
        self._name = name
        self._size = size
        self._tail_start = tail_start
        self._tail = tail

    @property
    def size(self) -> int:
        return self._size

    def read_from(self, offset: int) -> bytes:
        if offset >= self._size:
            return b""
        if offset < self._tail_start:
            raise ValueError(f"only bytes from {self._tail_start} on were read with the append")
        return self._tail[offset - self._tail_start : self._size - self._tail_start]

    def append(self, data: bytes) -> None:
        raise SessionFileError(self._name, "the append is done; this view only reads")

    def replace(self, data: bytes, *, keep_from: int | None = None) -> None:
        raise SessionFileError(self._name, "the append is done; this view only reads")
