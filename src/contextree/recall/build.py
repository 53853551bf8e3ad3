"""The documents of a whole session, made on a second thread while the index takes them in.

A rebuild has two halves of similar cost: making the documents (decoding each entry, redacting
its text: Python code that holds the interpreter lock) and indexing them (SQLite's FTS5 or
PostgreSQL, which run with the lock released). Making the next batch while the database
indexes the last one runs the halves side by side on two cores instead of one after the other.
"""

from __future__ import annotations

import contextlib
import queue
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Final

from contextree.recall.documents import Document, entry_document
from contextree.recall.line_text import UnusualLine, line_text
from contextree.store.index import Record

__all__ = ["TEXT_ENTRY_TYPES", "documents_in_background", "record_documents"]

TEXT_ENTRY_TYPES: Final = frozenset({"message", "compaction", "branch_summary", "custom_message"})
"""Entry types that can carry words (``entry_text`` reads no other): records of other types
are skipped without decoding their lines."""

_BATCH: Final = 512
_QUEUED_BATCHES: Final = 8  # bounds the documents held in memory ahead of the database

_Item = list[Document] | BaseException | None


def record_documents(
    records: Sequence[Record], first_seq: int, redact: Callable[[str], str] | None
) -> Iterator[Document]:
    """The documents of ``records`` in order, ``first_seq`` being the first one's position.

    A stored line is read for its text fields only (:func:`line_text`), an unusual one or an
    entry without a line decoded without being kept (:meth:`Record.peek`): a rebuild of a
    large session holds one decoded entry at a time, not all of them."""
    text_types, read, make = TEXT_ENTRY_TYPES, line_text, Document  # locals: 100k turns
    for seq, record in enumerate(records, first_seq):
        if record.type not in text_types:
            continue
        line = record.raw if record.cached is None else None
        try:
            if line is None or not (line.isascii() or _utf8(line)):
                raise UnusualLine
            found = read(line)
        except UnusualLine:
            document = entry_document(record.peek(), seq, redact)
            if document is not None:
                yield document
            continue
        if found is not None:
            entry_id, role, stamp, text = found
            yield make(seq, entry_id, role, stamp, redact(text) if redact is not None else text)


def _utf8(line: bytes) -> bool:
    """Whether ``line`` is valid UTF-8. The line reader skips the fields it does not read;
    one with invalid UTF-8 goes to :meth:`Record.peek`, which reads it as pi does and marks
    the record (``utf8_replaced``) as the general way always did."""
    try:
        line.decode()
    except UnicodeDecodeError:
        return False
    return True


def documents_in_background(
    records: Sequence[Record], first_seq: int, redact: Callable[[str], str] | None
) -> Iterator[Document]:
    """:func:`record_documents`, made on a worker thread in batches ahead of the consumer.

    An error while making them is raised here, in the consumer; a consumer that stops early
    (its transaction failed) stops the worker before this generator finishes."""
    batches: queue.Queue[_Item] = queue.Queue(maxsize=_QUEUED_BATCHES)
    stop = threading.Event()

    def produce() -> None:
        try:
            batch: list[Document] = []
            for document in record_documents(records, first_seq, redact):
                batch.append(document)
                if len(batch) == _BATCH:
                    if stop.is_set():
                        return
                    batches.put(batch)
                    batch = []
            batches.put(batch)
            batches.put(None)
        except BaseException as exc:  # handed to the consumer, which raises it
            batches.put(exc)

    worker = threading.Thread(target=produce, name="contextree-recall-documents", daemon=True)
    worker.start()
    try:
        while (item := batches.get()) is not None:
            if isinstance(item, BaseException):
                raise item
            yield from item
    finally:
        stop.set()
        while worker.is_alive():  # a worker blocked on a full queue needs room to notice
            with contextlib.suppress(queue.Empty):
                batches.get(timeout=0.05)
        worker.join()
