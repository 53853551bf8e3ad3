"""Plain text's own structure, read the same way by the offline summarizer and by recall:
the rows of a table that stand out (:func:`standout_rows`)."""

from contextree.text.tables import Standout, standout_rows

__all__ = ["Standout", "standout_rows"]
