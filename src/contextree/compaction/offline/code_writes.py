"""Files that code run by a tool writes: an agent that analyses data runs Python, R or
JavaScript in a code tool (``python``, ``run_code``, a notebook cell) and saves its results
there (``df.to_csv('out/clean.csv')``, ``plt.savefig(...)``), with no write or edit call for
the summary to see. The same code may come through the shell (``python - <<EOF``).

Found by the call's shape: a known writing call with a quoted path as its first argument, or
as an argument named for a path (``path_or_buf='x'``); R's and a few libraries' calls take
the object first and the file second (``write.csv(df, 'x')``); ``open`` counts only with a
writing mode. A path built at run time (a variable, an f-string) is not found, nor a quoted
word that does not look like a file (no ``/`` and no extension).
"""

from __future__ import annotations

import re
from typing import Final

from contextree.compaction.offline.lazy_pattern import LazyPattern
from contextree.compaction.offline.text import add_once

__all__ = ["CODE_ARGUMENTS", "code_written_paths", "interpreter_code"]

CODE_ARGUMENTS: Final = frozenset({"code", "source", "script", "cell", "program", "snippet"})
"""The arguments of a tool call that hold code to run (other arguments, such as an email's
body, may quote code without running it)."""

_PATH_NAMES: Final = r"(?:path|path_or_buf|file|fname|filename|filepath|file_path|con)"
_QUOTED: Final = (
    rf"""\s*(?:{_PATH_NAMES}\s*=\s*)?[rbu]?(?P<q>['"])(?P<path>[^'"\n{{}}]{{1,300}})(?P=q)"""
)
"""A quoted path (never an f-string: ``f'...'`` is built at run time), perhaps named."""
_PATH_FIRST: Final = LazyPattern(
    r"(?:\.(?:to_csv|to_tsv|to_parquet|to_excel|to_json|to_feather|to_pickle|to_hdf|to_stata|"
    r"to_html|to_markdown|to_latex|to_file|to_netcdf|to_zarr|write_csv|write_parquet|"
    r"write_json|write_excel|write_ipc|savefig|write_image|write_html)"
    r"|\b(?:np\.save(?:txt|z|z_compressed)?|numpy\.save(?:txt|z)?|imwrite|imsave|ggsave|"
    r"writeFileSync|writeFile)"
    r")\(" + _QUOTED
)
"""Calls whose first argument is the file written."""
_PATH_SECOND: Final = LazyPattern(
    r"\b(?:write\.csv|write\.table|write_csv|write_tsv|saveRDS|writeLines|torch\.save|"
    r"joblib\.dump)\((?:[^()'\"\n]|\([^()'\"\n]{0,40}\)){1,80}," + _QUOTED
)
"""R's calls, ``torch.save`` and ``joblib.dump``: the object first, then the file."""
_OPEN_FOR_WRITING: Final = LazyPattern(
    r"\bopen\(" + _QUOTED + r"""\s*,\s*(?:mode\s*=\s*)?['"][wax]"""
)
_PATH_WRITES: Final = LazyPattern(
    r"\bPath\(" + _QUOTED + r"""\)\.(?:write_text|write_bytes|open\(\s*['"][wax])"""
)
"""``Path('notes.md').write_text(...)``: the path comes before the call."""
_FILE_LIKE: Final = LazyPattern(r"/|\.[A-Za-z][A-Za-z0-9]{0,7}$")
_INTERPRETER_HEREDOC: Final = LazyPattern(
    r"(?m)(?:^|[;&|])\s*(?:python3?|ipython|Rscript|node|deno|bun)\b[^\n<]*<<-?\s*['\"]?(\w+)['\"]?"
    r"[^\n]*\n(?P<body>.*?)^\s*\1\s*$",
    re.DOTALL,
)
_INLINE_CODE: Final = LazyPattern(
    r"(?:^|[;&|\s])(?:python3?|Rscript|node)\s+(?:-\w+\s+)*-[ce]\s+(?P<q>['\"])(?P<body>.*?)(?<!\\)(?P=q)",
    re.DOTALL,
)


def code_written_paths(code: str) -> list[str]:
    """The files ``code`` writes by a literal path, in order, each once."""
    found: list[str] = []
    if "(" not in code:
        return found
    for pattern in (_PATH_FIRST, _PATH_SECOND, _OPEN_FOR_WRITING, _PATH_WRITES):
        for match in pattern.finditer(code):
            path = match.group("path").strip()
            if not _FILE_LIKE.search(path) or path.startswith(("/dev/", "http://", "https://")):
                continue  # a sheet name, an encoding, a URL: not a file written
            add_once(found, path)
    return found


def interpreter_code(command: str) -> str:
    """The code a shell command gives an interpreter to run (``python - <<'EOF' ... EOF``,
    ``python -c "..."``); a heredoc that only saves a script (``cat > x.py <<EOF``) is not
    run."""
    if not any(name in command for name in ("python", "node", "Rscript", "deno", "bun")):
        return ""
    parts = [m.group("body") for m in _INTERPRETER_HEREDOC.finditer(command)]
    parts += [m.group("body") for m in _INLINE_CODE.finditer(command)]
    return "\n".join(parts)
