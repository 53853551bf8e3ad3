"""Plain text's own structure, read the same way by the offline summarizer and by recall:
the rows of a table that stand out (:func:`standout_rows`); and control characters written as
escapes where the CLI prints and ``serve`` logs (:mod:`contextree.text.escapes`); lone
surrogates made U+FFFD (:mod:`contextree.text.surrogates`)."""

from contextree.text.tables import Standout, standout_rows

__all__ = ["Standout", "standout_rows"]
