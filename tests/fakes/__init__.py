"""Test doubles shared by the test packages (import as ``fakes.<module>``)."""

from fakes.fake_llm import FakeLLMServer, RecordedRequest

__all__ = ["FakeLLMServer", "RecordedRequest"]
