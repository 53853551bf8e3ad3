"""Reliability and security: crash safety, concurrent writers, bad input, model faults, secrets.

The harness modules here (``crash``, ``concurrency``, ``fuzzing``, ``faults``) are shared by the
tests (small, fast runs) and by ``python -m bench.reliability`` (the long runs behind
``docs/reliability.md``).
"""
