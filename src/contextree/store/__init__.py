"""Persistence of sessions: JSONL files and memory, with lazy indexing and migrations."""

from contextree.store.base import SessionStore, StoreTransaction
from contextree.store.index import BadLine, LoadReport, ParsedSession, Record
from contextree.store.jsonl import JsonlFileStore
from contextree.store.lines import parse_session
from contextree.store.memory import MemoryStore
from contextree.store.migrations import migrate
from contextree.store.postgres_pool import share_connections, stop_sharing

__all__ = [
    "BadLine",
    "JsonlFileStore",
    "LoadReport",
    "MemoryStore",
    "ParsedSession",
    "Record",
    "SessionStore",
    "StoreTransaction",
    "migrate",
    "parse_session",
    "share_connections",
    "stop_sharing",
]
