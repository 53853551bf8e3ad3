"""``python -m contextree``."""

from contextree.cli.app import main

main()
