"""The ``contextree`` command's entry point, with fast paths for ``contextree --help`` and for
``contextree context SESSION`` into a pipe (:mod:`contextree.cli.context_fast`).

Building the command line means importing typer (with its own copy of click), which alone takes
most of the 150 ms that ``contextree --help`` may cost. The top-level help text never changes
between runs of one installed version, so it is kept in ``top_help.txt`` beside this module and
printed as it is when the whole command line is ``--help`` and the terminal is at least as wide
as click's 80 columns (narrower terminals wrap differently: typer renders those).
``tests/cli/test_help.py`` checks that the file is exactly what typer prints; after changing a
command's name or first help line, regenerate it with ``python -m contextree.cli.entry``.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

__all__ = ["exit_now", "main", "render_top_help"]

TOP_HELP = Path(__file__).with_name("top_help.txt")
_CLICK_MAX_WIDTH = 80
_RENDER = "from contextree.cli.app import app; app(prog_name='contextree')"


def main() -> None:
    """Console-script entry point."""
    if sys.argv[1:] == ["--help"] and shutil.get_terminal_size().columns >= _CLICK_MAX_WIDTH:
        try:
            text = TOP_HELP.read_text(encoding="utf-8")
        except OSError:
            text = ""
        if text:
            sys.stdout.write(text)
            return
    if len(sys.argv) == 3 and sys.argv[1] == "context":
        from contextree.cli.context_fast import print_context

        if print_context(sys.argv[2]):
            exit_now()
            return
    import gc

    # Importing the commands makes tens of thousands of objects and no garbage: the
    # collector's passes over them are time lost (3 ms of every command's start-up).
    paused = gc.isenabled()
    gc.disable()
    try:
        from contextree.cli.app import main as run
        from contextree.cli.common import state
    finally:
        if paused:
            gc.enable()

    state.ends_process = True
    try:
        run()
    except SystemExit as end:
        if state.held_to_exit and end.code in (0, None):
            exit_now()  # a command that wrote and is done (see State.held_to_exit)
        raise
    finally:
        # Still here (exit_now did not end the process): as after any command.
        state.ends_process = False
        if state.collector_held:
            import gc

            state.collector_held = False
            gc.enable()


def exit_now() -> None:
    """End the process at once, output flushed: a command that only read has nothing to clean
    up, and the interpreter's teardown would free every decoded object one by one (45 ms of
    the 0.37 s that ``contextree context`` took on the 100k bench session)."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except OSError:
        return  # a closed pipe, say: the interpreter's own exit deals with it as always
    os._exit(0)


def render_top_help() -> str:
    """What typer itself prints for ``contextree --help`` on an 80-column terminal (in a
    fresh process, as a user would run it)."""
    import os
    import subprocess

    done = subprocess.run(
        [sys.executable, "-c", _RENDER, "--help"],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": str(_CLICK_MAX_WIDTH)},
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"contextree --help exited {done.returncode}: {done.stderr}")
    return done.stdout


if __name__ == "__main__":
    TOP_HELP.write_text(render_top_help(), encoding="utf-8")
    print(f"wrote {TOP_HELP}")
