"""Recall: full-text search over what compactions folded out of the model's view.

The session file keeps every original entry; only the context shrinks. ``recall`` searches
those entries (BM25 in SQLite FTS5, ``tsvector`` in PostgreSQL, a plain scan without FTS5),
``expand_entry`` shows one in full with its neighbours. See docs/recall.md.
"""

from contextree.recall.base import Hit, IndexState
from contextree.recall.documents import Document, entry_text
from contextree.recall.expand import Expansion, expand_entry, expansion_json
from contextree.recall.index import RecallIndex, SyncReport, default_index_dir, index_path
from contextree.recall.query import (
    RecallResult,
    folded_entry_ids,
    open_recall_index,
    query_terms,
    recall,
    recall_json,
)

__all__ = [
    "Document",
    "Expansion",
    "Hit",
    "IndexState",
    "RecallIndex",
    "RecallResult",
    "SyncReport",
    "default_index_dir",
    "entry_text",
    "expand_entry",
    "expansion_json",
    "folded_entry_ids",
    "index_path",
    "open_recall_index",
    "query_terms",
    "recall",
    "recall_json",
]
