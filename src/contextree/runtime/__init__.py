"""The agent runtime."""
