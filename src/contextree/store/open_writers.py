"""Whether some process still holds a file open for writing only (Linux ``/proc``).

A rewrite renames a new file over the session; a writer that takes no lock (pi appends with
``appendFileSync``: open, write, close) and opened the old file just before the rename writes its
line into the old inode. The rewrite copies such lines over, and this tells it when no such
writer is left. Our own stores open sessions read-write and lock them, so only write-only
descriptors count: those are what ``appendFileSync``, a shell's ``>>`` and Python's ``open(path,
"a")`` make.
"""

from __future__ import annotations

import os
from collections.abc import Collection
from pathlib import Path
from typing import Final

__all__ = ["count_write_only_holders"]

_PROC: Final = "/proc"
_DELETED: Final = " (deleted)"


def count_write_only_holders(
    path: Path, identity: tuple[int, int], *, own: Collection[int] = ()
) -> int | None:
    """How many descriptors, in any process we may inspect, have the file ``identity``
    (``(st_dev, st_ino)``, last linked at ``path``) open write-only; ``None`` when this system
    cannot tell (no ``/proc``). ``own``: descriptors of this process that are not counted (the
    store's own write-only descriptor is not another writer)."""
    try:
        pids = [name for name in os.listdir(_PROC) if name.isdigit()]
    except OSError:
        return None
    # A descriptor's link names the file's path (with " (deleted)" after it once the rename
    # unlinked it). Comparing the file name first spares a stat of every descriptor on the
    # system; the stat then decides (the same name may live in other folders).
    endings = (f"/{path.name}", f"/{path.name}{_DELETED}")
    count = 0
    me = str(os.getpid())
    for pid in pids:
        folder = f"{_PROC}/{pid}/fd/"
        try:
            descriptors = os.listdir(folder)
        except OSError:  # gone, or not ours to inspect (then it cannot write our 0600 file)
            continue
        for fd in descriptors:
            try:
                link = os.readlink(folder + fd)
            except OSError:
                continue
            if not link.endswith(endings) or (pid == me and int(fd) in own):
                continue
            if _same_file(folder + fd, identity) and _write_only(pid, fd):
                count += 1
    return count


def _same_file(fd_link: str, identity: tuple[int, int]) -> bool:
    try:
        st = os.stat(fd_link)
    except OSError:
        return False
    return (st.st_dev, st.st_ino) == identity


def _write_only(pid: str, fd: str) -> bool:
    try:
        with open(f"{_PROC}/{pid}/fdinfo/{fd}", encoding="ascii") as info:
            for line in info:
                if line.startswith("flags:"):
                    return int(line.split()[1], 8) & os.O_ACCMODE == os.O_WRONLY
    except (OSError, ValueError, IndexError):
        return False
    return False
