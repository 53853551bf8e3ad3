"""contextree benchmarks: ``python -m bench`` (``--quick`` for the 10k session only).

``generate`` writes deterministic synthetic sessions; ``core`` measures opening them, building
the LLM context, walking the leaf path, preparing a compaction, deciding what to prune,
appending, and peak memory. See docs/performance.md for what each row means.
"""
