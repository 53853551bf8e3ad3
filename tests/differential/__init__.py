"""Differential tests: contextree against the real pi 0.73.1 and oh-my-pi 18.2.3."""
