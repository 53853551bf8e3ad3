"""A rebuild's documents made on a worker thread: the same documents, errors raised to the
consumer, and a consumer that stops early stops the worker."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from contextree.recall import build as build_module
from contextree.recall.build import documents_in_background, record_documents
from contextree.recall.documents import entry_document
from contextree.session.tree import SessionTree
from contextree.store.index import Record
from recall.recall_session import compacted_file


def _records(tmp_path: Path) -> list[Record]:
    compacted_file(tmp_path / "s.jsonl")
    return list(SessionTree.open(tmp_path / "s.jsonl").records())


def test_the_same_documents_as_one_entry_at_a_time(tmp_path: Path) -> None:
    records = _records(tmp_path)
    upper: Callable[[str], str] = str.upper
    expected = [
        document
        for seq, record in enumerate(records)
        if (document := entry_document(record.entry, seq, upper)) is not None
    ]
    assert len(expected) > 4
    assert list(record_documents(records, 0, upper)) == expected
    assert list(documents_in_background(records, 0, upper)) == expected


def test_many_batches_arrive_in_order(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(build_module, "_BATCH", 2)
    monkeypatch.setattr(build_module, "_QUEUED_BATCHES", 1)
    records = _records(tmp_path)
    made = list(documents_in_background(records, 10, None))
    assert [d.seq for d in made] == sorted(d.seq for d in made)
    assert made == list(record_documents(records, 10, None))


def test_an_error_while_making_documents_reaches_the_consumer(tmp_path: Path) -> None:
    def broken(text: str) -> str:
        raise ValueError("bad pattern")

    with pytest.raises(ValueError, match="bad pattern"):
        list(documents_in_background(_records(tmp_path), 0, broken))


def test_a_consumer_that_stops_early_stops_the_worker(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(build_module, "_BATCH", 1)
    monkeypatch.setattr(build_module, "_QUEUED_BATCHES", 1)
    before = threading.active_count()
    documents = documents_in_background(_records(tmp_path), 0, None)
    next(documents)
    documents.close()  # what a failed transaction does to the generator it was reading
    assert threading.active_count() == before
