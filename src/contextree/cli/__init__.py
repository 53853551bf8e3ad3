"""The ``contextree`` command line (typer + rich)."""
