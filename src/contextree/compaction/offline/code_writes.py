"""Files that code run by a tool writes: an agent that analyses data runs Python, R or
JavaScript in a code tool (``python``, ``run_code``, a notebook cell) and saves its results
there (``df.to_csv('out/clean.csv')``, ``plt.savefig(...)``), with no write or edit call for
the summary to see. The same code may come through the shell (``python - <<EOF``).

Found by the call's shape: a known writing call with a quoted path as its first argument
(``open`` only with a writing mode). A path built at run time is not found.
"""

from __future__ import annotations

import re
from typing import Final

from contextree.compaction.offline.text import add_once

__all__ = ["code_written_paths"]

_QUOTED: Final = r"""\s*(?:[\w.]+\s*=\s*)?[rfbu]?(?P<q>['"])(?P<path>[^'"\n]{1,300})(?P=q)"""
"""A quoted path as a call's first argument, perhaps named (``path_or_buf='x'``)."""
_WRITERS: Final = re.compile(
    r"(?:\.(?:to_csv|to_tsv|to_parquet|to_excel|to_json|to_feather|to_pickle|to_hdf|to_stata|"
    r"to_html|to_markdown|to_latex|to_file|to_netcdf|to_zarr|write_csv|write_parquet|"
    r"write_json|write_excel|write_ipc|savefig|write_text|write_bytes|write_image|write_html)"
    r"|\b(?:np\.save(?:txt|z|z_compressed)?|numpy\.save(?:txt|z)?|imwrite|imsave|"
    r"torch\.save|joblib\.dump|ggsave|writeFileSync|writeFile|"
    r"write\.csv|write\.table|write_csv|write_tsv|saveRDS|save\.image|writeLines)"
    r")\((?:[^()'\"\n]{0,80},)?" + _QUOTED
)
"""Calls whose first (or, for R's ``write.csv(df, 'x')`` and ``saveRDS(obj, 'x')``, second)
argument is the file written."""
_OPEN_FOR_WRITING: Final = re.compile(
    r"\bopen\(" + _QUOTED + r"""\s*,\s*(?:mode\s*=\s*)?['"][wax]"""
)
_PATH_WRITES: Final = re.compile(
    r"\bPath\(" + _QUOTED + r"""\)\.(?:write_text|write_bytes|open\(\s*['"][wax])"""
)
"""``Path('notes.md').write_text(...)``: the path comes before the call."""


def code_written_paths(code: str) -> list[str]:
    """The files ``code`` writes by a literal path, in order, each once."""
    found: list[str] = []
    if "(" not in code:
        return found
    for pattern in (_WRITERS, _OPEN_FOR_WRITING, _PATH_WRITES):
        for match in pattern.finditer(code):
            path = match.group("path").strip()
            if path and not path.startswith(("/dev/", "http://", "https://")):
                add_once(found, path)
    return found
