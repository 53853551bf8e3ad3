"""Entry points for outside agent frameworks (each behind its own extra)."""
