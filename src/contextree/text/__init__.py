"""Plain text's own structure, read the same way by the offline summarizer and by recall:
the rows of a table that stand out (:mod:`contextree.text.tables`)."""
