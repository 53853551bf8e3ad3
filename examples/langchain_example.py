"""A LangChain agent (create_agent) whose history lives in a contextree session file.

    pip install "contextree[langchain]" langchain-openai
    python examples/langchain_example.py [SESSION.jsonl]

Offline by default: the model is the test suite's fake OpenAI-compatible server (tests/fakes,
started here on 127.0.0.1) with a scripted tool-using conversation, so the example runs from a
source checkout without a key. Set OPENAI_BASE_URL (and OPENAI_API_KEY) to use a real server;
then the questions go to that model instead of the script.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from langchain.agents import create_agent
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from pydantic import SecretStr

from contextree.integrations.langchain import ContextreeMiddleware
from contextree.settings.load import Settings
from contextree.settings.schema import CompactionSettings

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))


@tool
def read_file(path: str) -> str:
    """Read a file of the project."""
    return f"# {path}\n" + "".join(f"value_{n} = compute({n})\n" for n in range(80))


def main() -> None:
    session_file = Path(sys.argv[1] if len(sys.argv) > 1 else "langchain-session.jsonl")
    # A small window so that this short demo compacts; real use: leave context_window out
    # and the model name ("openai:gpt-4o") gives it.
    settings = Settings(
        compaction=CompactionSettings(reserve_tokens=4_000, keep_recent_tokens=2_000)
    )
    middleware = ContextreeMiddleware(
        session_file,
        model="openai:gpt-4o",
        context_window=16_000,
        settings=settings,
        listener=lambda event: print(f"  [contextree] {event.type}"),
    )
    server = None
    base_url = os.environ.get("OPENAI_BASE_URL")
    if base_url is None:
        from fakes.langchain_server import MeasuringFakeServer

        server = MeasuringFakeServer().start()
        base_url = f"{server.url}/v1"
    api_key = SecretStr(os.environ.get("OPENAI_API_KEY", "sk-offline"))
    model = ChatOpenAI(model="gpt-4o", base_url=base_url, api_key=api_key)
    agent = create_agent(
        model, tools=[read_file], system_prompt="Be brief.", middleware=[middleware]
    )
    try:
        for turn in range(8):
            if server is not None:
                for call in range(3):
                    server.enqueue_tool_call(
                        "read_file",
                        {"path": f"src/m{turn}_{call}.py"},
                        call_id=f"call_{turn}_{call}",
                        usage={"measured": 1, "output": 20},
                    )
                server.enqueue_text(f"Module {turn} reviewed.", usage={"measured": 1, "output": 8})
            result = agent.invoke(
                {"messages": [{"role": "user", "content": f"Review module {turn}."}]}
            )
            print(f"turn {turn}: {result['messages'][-1].content}")
    finally:
        if server is not None:
            server.close()
    compactions = [e for e in middleware.session.tree.get_entries() if e["type"] == "compaction"]
    count = len(compactions)
    print(
        f"{session_file}: {len(middleware.session.tree.get_entries())} entries, "
        f"{count} compaction{'' if count == 1 else 's'}; the model now sees "
        f"{len(middleware.context())} messages"
    )
    print(f"see what the model sees: contextree context {session_file}")


if __name__ == "__main__":
    main()
