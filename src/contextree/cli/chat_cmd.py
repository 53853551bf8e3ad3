"""Registers ``contextree chat`` on the app (kept apart so ``app.py`` stays small)."""

from pathlib import Path
from typing import Annotated, Any

import typer

from contextree.cli.options import BaseUrlOpt, ChatModelOpt

__all__ = ["register"]


def register(app: typer.Typer) -> None:
    from contextree.cli.app import _fail, _settings, handles_errors, state

    @app.command()
    @handles_errors
    def chat(
        model: ChatModelOpt = None,
        base_url: BaseUrlOpt = None,
        session: Annotated[
            str | None,
            typer.Option(
                "--session",
                "-s",
                help="Session to use or create: a file, or sqlite:///path/file.db#NAME or "
                "postgresql://user@host/db#NAME.",
            ),
        ] = None,
        continue_: Annotated[
            bool, typer.Option("--continue", "-c", help="Continue the latest session here.")
        ] = False,
        prompt: Annotated[
            str | None, typer.Option("--prompt", "-p", help="Run one prompt, print the answer.")
        ] = None,
        system: Annotated[str | None, typer.Option(help="System prompt (default: ours).")] = None,
    ) -> None:
        """An interactive agent that compacts its own context as it goes."""
        import asyncio

        from rich.text import Text

        from contextree.cli.chat import ChatApp, read_line
        from contextree.cli.models import make_client, missing_api_key
        from contextree.entries.ids import new_session_id
        from contextree.llm.registry import parse_model_spec
        from contextree.runtime.agent import AgentSession
        from contextree.runtime.system_prompt import default_system_prompt
        from contextree.runtime.tools import builtin_tools
        from contextree.runtime.tools.base import ToolContext
        from contextree.session.paths import latest_session, new_session_path
        from contextree.session.tree import SessionTree

        loaded = _settings(model=model)
        settings = loaded.settings
        spec = settings.model
        if not spec or parse_model_spec(spec)[0] in ("offline", "remote"):
            raise _fail(
                "chat needs a model that can hold a conversation: pass --model provider:model "
                "(e.g. openai:gpt-4o-mini, anthropic:claude-sonnet-4-5, ollama:llama3.1) or set "
                '"model" in settings'
            )
        client = make_client(spec, base_url=base_url)
        # Before any request: without a key every call would fail, after three retries and
        # ~15 s, as "cannot reach".
        env = missing_api_key(client)
        if env:
            raise _fail(
                f"{spec} needs an API key: set {env} (or pass --base-url for a server that needs "
                "none, e.g. a local one)"
            )
        # The fallbacks too: a retry that falls back to a model without its key fails the same
        # way, only later.
        fallbacks = [make_client(s) for s in settings.retry.fallback_models]
        for fallback_spec, fallback in zip(settings.retry.fallback_models, fallbacks, strict=True):
            env = missing_api_key(fallback)
            if env:
                raise _fail(
                    f"fallback model {fallback_spec} (retry.fallbackModels) needs an API key: "
                    f"set {env}, or remove it from retry.fallbackModels"
                )
        cwd = Path.cwd()
        path: str | Path | None = session
        if path is None and continue_:
            path = latest_session(cwd)
        session_id = new_session_id()
        if path is None:
            path = new_session_path(cwd, session_id)
        tree = SessionTree.open(path, cwd=str(cwd), fsync=settings.fsync, session_id=session_id)
        tools = builtin_tools()
        summarizer: Any = None
        if settings.compaction.remote_endpoint:
            summarizer = make_client(f"remote:{settings.compaction.remote_endpoint}")
        agent = AgentSession(
            tree,
            client,
            model_spec=spec,
            settings=settings,
            tools=tools,
            tool_context=ToolContext(cwd=cwd, allow_outside_cwd=settings.allow_outside_cwd),
            system_prompt=system or default_system_prompt(cwd, tools),
            fallback_clients=fallbacks,
            summarizer=summarizer,
        )

        def show_tree() -> None:
            from contextree.cli import render

            state.console.print(render.entry_tree(tree))

        def show_settings() -> None:
            from contextree.cli import render

            state.console.print(render.settings_table(loaded))

        ui = ChatApp(
            agent,
            state.console,
            make_client=lambda s: make_client(s, base_url=base_url),
            show_settings=show_settings,
            show_tree=show_tree,
        )

        async def one_shot(text: str) -> int:
            outcome = await ui.run_turn(lambda: agent.prompt(text))
            return 1 if outcome.error or outcome.aborted else 0

        async def interactive() -> None:
            state.console.print(
                Text(f"session {path} - {spec} - /help for commands", style="ct.meta")
            )
            while True:
                line = await read_line("› ")
                if line is None or not await ui.handle_line(line):
                    return

        if prompt is not None:
            code = asyncio.run(one_shot(prompt))
            if code:
                raise typer.Exit(code)
            return
        asyncio.run(interactive())
