"""Sessions written without sight of the summarizer's rules, for a retention figure we did not
tune on (``python -m bench.blind``). See ``bench/blind/README.md``."""
