"""``contextree chat``: an interactive terminal agent on a session file.

The loop reads a line, runs it through :class:`~contextree.runtime.agent.AgentSession` and
renders the session's events; slash commands manage the session. Ctrl-C aborts a running turn
(the aborted reply is persisted as such); at the prompt, ``/quit`` or Ctrl-D leaves.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console
from rich.text import Text

from contextree.cli.preview import message_text, printable
from contextree.entries.types import (
    is_assistant_message,
    is_text_content,
    is_tool_call_content,
    is_tool_result_message,
)
from contextree.errors import ContextreeError
from contextree.runtime.agent import AgentSession
from contextree.runtime.events import (
    AUTO_COMPACTION_END,
    AUTO_COMPACTION_START,
    COMPACTION_END,
    COMPACTION_START,
    MESSAGE,
    PRUNE,
    RETRY,
    AgentEvent,
)
from contextree.tokens.usage import estimate_current_tokens

__all__ = ["HELP", "ChatApp"]

HELP = """\
/compact [instructions]   summarize old history now
/tree                     show the session tree
/navigate ID [--summarize] move to another entry (optionally summarizing the branch left)
/model SPEC               switch model (provider:model)
/settings                 show the effective settings
/status                   show context usage
/help                     this help
/quit                     leave (Ctrl-D works too)"""


@dataclass
class ChatApp:
    """Renders an :class:`AgentSession` in a terminal and dispatches slash commands."""

    session: AgentSession
    console: Console
    make_client: Callable[[str], Any]
    show_settings: Callable[[], None]
    show_tree: Callable[[], None]
    _last_error: str | None = field(default=None, init=False, repr=False)
    """The error last printed from an event, so that the same error raised afterwards by the
    command is not printed a second time."""

    def __post_init__(self) -> None:
        self.session.subscribe(self.render_event)

    # -- rendering ----------------------------------------------------------------------------

    def render_event(self, event: AgentEvent) -> None:
        data = event.data
        kind = event.type
        if kind == MESSAGE:
            self._render_message(data["message"])
        elif kind == AUTO_COMPACTION_START:
            self.console.print(
                Text(
                    f"⟳ context {data['reason']}: compacting...{self._where_summaries_go()}",
                    style="ct.compaction",
                )
            )
        elif kind in (AUTO_COMPACTION_END, COMPACTION_END):
            self._render_compaction_end(data)
        elif kind == COMPACTION_START:
            self.console.print(
                Text(f"⟳ compacting...{self._where_summaries_go()}", style="ct.compaction")
            )
        elif kind == RETRY:
            self.console.print(
                Text(
                    f"model call failed; retrying in {data['delayMs'] / 1000:.1f} s",
                    style="ct.warning",
                )
            )
        elif kind == PRUNE:
            self.console.print(
                Text(
                    f"pruned {data['prunedCount']} old tool output(s), "
                    f"~{data['tokensSaved']:,} tokens",
                    style="ct.meta",
                )
            )

    def _where_summaries_go(self) -> str:
        """Where the summarizer sends the conversation when that is off this machine (as
        `compact` notes it): the first summary candidate, which the fallbacks only follow."""
        from contextree.cli.models import destination

        if self.session.client is None and self.session.summarizer is None:
            return ""
        first = self.session.summary_candidates()[0]
        url = destination(first)
        return "" if url is None else f" (the conversation is sent to {first.name} at {url})"

    def _render_message(self, message: dict[str, Any]) -> None:
        # printable(): a reply or a tool's output may hold escape sequences (a file the agent
        # read), which rich passes through to the terminal; context and expand strip them too.
        if is_assistant_message(message):
            if message.get("stopReason") in ("error", "aborted"):
                error = str(message.get("errorMessage") or message.get("stopReason"))
                self._last_error = error
                # soft_wrap: one line, however narrow the terminal (README: errors are one line)
                self.console.print(Text(f"✗ {printable(error)}", style="ct.error"), soft_wrap=True)
                return
            content = message.get("content")
            for block in content if isinstance(content, list) else []:
                if is_text_content(block) and block.get("text"):
                    self.console.print(Text(printable(str(block["text"]))))
                elif is_tool_call_content(block):
                    self.console.print(
                        Text(printable(message_text({"content": [block]})), style="ct.role.tool")
                    )
        elif is_tool_result_message(message):
            first = printable(message_text(message)).strip().splitlines()
            line = first[0][:120] if first else ""
            style = "ct.error" if message.get("isError") else "ct.meta"
            self.console.print(Text(f"  ⎿ {line}", style=style))

    def _render_compaction_end(self, data: dict[str, Any]) -> None:
        if data.get("errorMessage"):
            self._last_error = str(data["errorMessage"])
            error = printable(str(data["errorMessage"]))
            self.console.print(Text(f"✗ {error}", style="ct.error"), soft_wrap=True)
        elif data.get("aborted"):
            self.console.print(
                Text("compaction cancelled; nothing was written", style="ct.warning")
            )
        elif data.get("skipped"):
            self.console.print(Text("nothing to compact", style="ct.meta"))
        elif data.get("result") is not None:
            result = data["result"]
            self.console.print(
                Text(
                    f"✓ compacted: {result.tokens_before:,} → ~{result.tokens_after:,} tokens",
                    style="ct.ok",
                )
            )

    def status_line(self) -> Text:
        tokens = estimate_current_tokens(self.session.context_messages()).tokens
        window = self.session.context_window
        share = f" ({100 * tokens / window:.0f}%)" if window else ""
        return Text(
            f"[{self.session.model_spec}] context {tokens:,} / {window:,} tokens{share}",
            style="ct.meta",
        )

    # -- running ------------------------------------------------------------------------------

    async def run_turn(self, action: Callable[[], Awaitable[Any]]) -> Any:
        """Run ``action`` with Ctrl-C bound to aborting the turn."""
        loop = asyncio.get_running_loop()
        installed = False
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(signal.SIGINT, self._interrupt)
            installed = True
        try:
            return await action()
        finally:
            if installed:
                loop.remove_signal_handler(signal.SIGINT)

    def _interrupt(self) -> None:
        if self.session.is_compacting:
            self.session.abort_compaction()
        self.session.abort()
        self.console.print(Text("aborting...", style="ct.warning"))

    async def handle_line(self, line: str) -> bool:
        """Handle one input line; returns False when the user wants to leave."""
        text = line.strip()
        if not text:
            return True
        if not text.startswith("/"):
            outcome = await self.run_turn(lambda: self.session.prompt(text))
            if outcome.aborted:
                self.console.print(Text("turn aborted", style="ct.warning"))
            self.console.print(self.status_line())
            return True
        command, _, rest = text[1:].partition(" ")
        rest = rest.strip()
        self._last_error = None
        try:
            return await self._command(command, rest)
        except ContextreeError as exc:
            if str(exc) != self._last_error:  # else its event printed it already
                self.console.print(Text(f"error: {printable(str(exc))}", style="ct.error"))
            return True

    async def _command(self, command: str, rest: str) -> bool:
        if command in ("quit", "exit", "q"):
            return False
        if command == "help":
            self.console.print(Text(HELP))
        elif command == "compact":
            await self.run_turn(lambda: self.session.compact(rest or None))
            self.console.print(self.status_line())
        elif command == "tree":
            self.show_tree()
        elif command == "navigate":
            await self._navigate(rest)
        elif command == "model":
            if not rest:
                self.console.print(Text(f"model: {self.session.model_spec}"))
            else:
                self.session.client = self.make_client(rest)
                self.session.model_spec = rest
                self.session._context_window = None
                self.console.print(Text(f"model: {rest}"))
        elif command == "settings":
            self.show_settings()
        elif command == "status":
            self.console.print(self.status_line())
        else:
            self.console.print(
                Text(f"unknown command /{command}; /help lists them", style="ct.error")
            )
        return True

    async def run_once(self, text: str) -> int:
        """``chat --prompt``: one turn; the exit code (1 when it failed or was aborted)."""
        outcome = await self.run_turn(lambda: self.session.prompt(text))
        return 1 if outcome.error or outcome.aborted else 0

    async def run_interactive(self, greeting: str) -> None:
        """Read and handle lines until ``/quit`` or the end of input."""
        self.console.print(Text(greeting, style="ct.meta"))
        while True:
            line = await read_line("› ")
            if line is None or not await self.handle_line(line):
                return

    async def _navigate(self, rest: str) -> None:
        from contextree.branching.navigate import resolve_entry_id

        words = rest.split()
        summarize = "--summarize" in words
        targets = [w for w in words if not w.startswith("--")]
        if not targets:
            self.console.print(Text("usage: /navigate ID [--summarize]"))
            return
        target = resolve_entry_id(self.session.tree, targets[0])
        result = await self.run_turn(
            lambda: self.session.navigate_tree(target, summarize=summarize, persist=True)
        )
        if result.cancelled:
            self.console.print(Text("navigation cancelled", style="ct.warning"))
            return
        self.console.print(Text(f"leaf: {self.session.tree.leaf_id}"))
        if result.editor_text:
            self.console.print(
                Text(f"(your earlier message, to edit and resend)\n{result.editor_text}")
            )


async def read_line(prompt: str) -> str | None:
    """One line from the terminal (prompt-toolkit when installed); ``None`` at end of input."""
    import sys

    try:
        if not sys.stdin.isatty():
            raise ImportError  # piped input: plain lines, no line editor
        from prompt_toolkit import PromptSession

        session: Any = PromptSession()
        try:
            return str(await session.prompt_async(prompt))
        except EOFError:
            return None
    except ImportError:
        pass
    try:
        return await asyncio.to_thread(input, prompt)
    except EOFError:
        return None
