"""``python -m contextree``."""

from contextree.cli.entry import main

main()
