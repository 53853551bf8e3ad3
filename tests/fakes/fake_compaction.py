"""A fake of the providers' compaction endpoints on 127.0.0.1 (stdlib only, no sleeps).

- ``POST /v1/responses/compact`` answers like OpenAI's Responses API compaction: ``{id,
  object: "response.compaction", created_at, output: [...input user messages, {type:
  "compaction", id, encrypted_content}], usage}``.
- ``POST /v1/messages`` with a ``compact_20260112`` edit answers like Anthropic's compaction
  with ``pause_after_compaction``: ``content: [{type: "compaction", content: SUMMARY}]``,
  ``stop_reason: "compaction"``; below the trigger it answers an ordinary text reply.

The request's input tokens are counted as chars/4 of its JSON body; ``replies`` may script a
status and body instead.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["FakeCompactionServer"]


@dataclass
class FakeCompactionServer:
    summary: str = "Anthropic's summary of the work so far."
    requests: list[tuple[str, dict[str, str], Any]] = field(default_factory=list)
    replies: deque[tuple[int, Any]] = field(default_factory=deque)
    _server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> FakeCompactionServer:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length", "0")))
                body = json.loads(raw)
                headers = {k.lower(): v for k, v in self.headers.items()}
                fake.requests.append((self.path, headers, body))
                status, answer = (
                    fake.replies.popleft()
                    if fake.replies
                    else fake.answer(self.path, body, len(raw) // 4)
                )
                data = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def close(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def answer(self, path: str, body: Any, tokens: int) -> tuple[int, Any]:
        if path == "/v1/responses/compact":
            kept = [item for item in body["input"] if item.get("role") == "user"]
            compaction = {"type": "compaction", "id": "cmp_1", "encrypted_content": "gAAAA-opaque"}
            return 200, {
                "id": "resp_1",
                "object": "response.compaction",
                "created_at": 1_800_000_000,
                "output": [*kept, compaction],
                "usage": {
                    "input_tokens": tokens,
                    "output_tokens": 120,
                    "total_tokens": tokens + 120,
                },
            }
        if path == "/v1/messages":
            edits = body.get("context_management", {}).get("edits", [])
            trigger = edits[0]["trigger"]["value"] if edits else None
            usage = {"input_tokens": tokens, "output_tokens": 80}
            if trigger is None or tokens <= trigger:
                content = [{"type": "text", "text": "Sure, continuing."}]
                return 200, self._message(content, "end_turn", usage)
            content = [{"type": "compaction", "content": self.summary}]
            return 200, self._message(content, "compaction", usage)
        return 404, {"error": {"type": "not_found", "message": path}}

    @staticmethod
    def _message(content: list[Any], stop: str, usage: dict[str, int]) -> dict[str, Any]:
        return {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-6",
            "content": content,
            "stop_reason": stop,
            "usage": usage,
        }
