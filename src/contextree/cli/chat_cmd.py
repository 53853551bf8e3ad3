"""Registers ``contextree chat`` on the app (kept apart so ``app.py`` stays small)."""

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Any

import typer

from contextree.cli.options import BaseUrlOpt, ChatModelOpt

__all__ = ["register"]


def register(app: typer.Typer) -> None:
    from contextree.cli.common import effective_settings, fail, handles_errors, state

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

        from contextree.cli.chat import ChatApp
        from contextree.cli.models import make_client
        from contextree.entries.ids import new_session_id
        from contextree.runtime.coding import coding_agent
        from contextree.session.paths import latest_session, new_session_path
        from contextree.session.request import check_context_shapes
        from contextree.session.tree import SessionTree

        loaded = effective_settings(model=model)
        settings = loaded.settings
        spec = _conversation_model(settings.model, fail)
        client = make_client(spec, base_url=base_url)
        fallbacks = [make_client(s) for s in settings.retry.fallback_models]
        _require_usable(spec, client, settings.retry.fallback_models, fallbacks, fail)
        cwd = Path.cwd()
        session_id = new_session_id()
        path = session if session is not None or not continue_ else latest_session(cwd)
        path = path if path is not None else new_session_path(cwd, session_id)
        tree = SessionTree.open(path, cwd=str(cwd), fsync=settings.fsync, session_id=session_id)
        check_context_shapes(tree, tree.build_session_context())  # one line, not a traceback
        agent = coding_agent(
            tree,
            client,
            cwd=cwd,
            settings=settings,
            model_spec=spec,
            system_prompt=system,
            fallback_clients=fallbacks,
        )
        ui = ChatApp(
            agent,
            state.console,
            make_client=lambda s: make_client(s, base_url=base_url),
            show_settings=lambda: _show_settings(state.console, loaded),
            show_tree=lambda: _show_tree(state.console, tree),
        )
        if prompt is not None:
            code = asyncio.run(ui.run_once(prompt))
            if code:
                raise typer.Exit(code)
            return
        asyncio.run(ui.run_interactive(f"session {path} - {spec} - /help for commands"))


def _conversation_model(spec: str | None, fail: Callable[[str], typer.Exit]) -> str:
    """The chat's model: one that can hold a conversation (not offline, not remote)."""
    from contextree.llm.registry import parse_model_spec

    if not spec or parse_model_spec(spec)[0] in ("offline", "remote"):
        raise fail(
            "chat needs a model that can hold a conversation: pass --model provider:model "
            "(e.g. openai:gpt-4o-mini, anthropic:claude-sonnet-4-5, ollama:llama3.1) or set "
            '"model" in settings'
        )
    return spec


def _require_usable(
    spec: str,
    client: Any,
    fallback_specs: Sequence[str],
    fallbacks: Sequence[Any],
    fail: Callable[[str], typer.Exit],
) -> None:
    """Before any request, so nothing is written to the session: without a key every call
    would fail (the fallbacks' too, only later); a local server that refuses connections is
    not running (unless a fallback model can answer instead)."""
    from contextree.llm.probe import refused_connection
    from contextree.llm.registry import missing_api_key

    refused = None if fallbacks else refused_connection(client)
    if refused is not None:
        raise fail(f"{spec}: {refused}")

    env = missing_api_key(client)
    if env:
        raise fail(
            f"{spec} needs an API key: set {env} (or pass --base-url for a server that needs "
            "none, e.g. a local one)"
        )
    for fallback_spec, fallback in zip(fallback_specs, fallbacks, strict=True):
        env = missing_api_key(fallback)
        if env:
            raise fail(
                f"fallback model {fallback_spec} (retry.fallbackModels) needs an API key: "
                f"set {env}, or remove it from retry.fallbackModels"
            )


def _show_tree(console: Any, tree: Any) -> None:
    from contextree.cli import render

    console.print(render.entry_tree(tree, width=console.width))


def _show_settings(console: Any, loaded: Any) -> None:
    from contextree.cli import render

    console.print(render.settings_table(loaded))
