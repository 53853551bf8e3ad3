"""Every public exception of contextree.

```
ContextreeError
  SessionFileError(path, line)        a session file cannot be read or written as asked
    UnsupportedVersionError           the header names a format version we do not know
    ParentCycleError(entry_id, cycle) writing under an entry whose parent chain loops
  SessionLockedError(path)            another process holds the session's write lock too long
  TreeError                           the tree cannot do what was asked
    EntryNotFoundError(entry_id)      no entry with that id
  ToolError                           a built-in tool cannot do what the model asked
  SettingsError(source, key)          a settings file or value is invalid
  HookError(hook, cause)              a hook handler failed in a way that must stop the operation
  CompactionError                     a compaction could not be produced
    CompactionCancelledError          a hook or the caller cancelled it; nothing written
  BranchSummaryError(reason)          a branch summary could not be generated; leaf unchanged
  ModelSpecError(spec)                a "provider:model" string is malformed (also a ValueError)
  ModelError(model)                   a model call failed
    ContextOverflowError              the provider says the prompt does not fit
    ModelHTTPError(status, retry_after)
    ModelTimeoutError
    ModelUnreachableError             connection refused, or no API key: retrying cannot help
    ModelResponseError                the provider answered with something we cannot use
```

Messages are one sentence: location first, then what was expected and found, then what to do.
They never contain API keys or request bodies.
"""

from __future__ import annotations

from pathlib import Path

__all__ = [
    "BranchSummaryError",
    "CompactionCancelledError",
    "CompactionError",
    "ContextOverflowError",
    "ContextreeError",
    "EntryNotFoundError",
    "HookError",
    "ModelError",
    "ModelHTTPError",
    "ModelResponseError",
    "ModelSpecError",
    "ModelTimeoutError",
    "ModelUnreachableError",
    "ParentCycleError",
    "SessionFileError",
    "SessionLockedError",
    "SettingsError",
    "ToolError",
    "TreeError",
    "UnsupportedVersionError",
    "cycle_text",
]


class ContextreeError(Exception):
    """Base class of every error contextree raises on purpose."""


class SessionFileError(ContextreeError):
    """A session file cannot be read or written as asked."""

    def __init__(self, path: str | Path, message: str, *, line: int | None = None) -> None:
        self.path = str(path)
        self.line = line
        self.reason = message
        where = f"{self.path}:{line}" if line is not None else self.path
        super().__init__(f"{where}: {message}")


class UnsupportedVersionError(SessionFileError):
    """The header names a session format version newer than we understand."""


def cycle_text(cycle: list[str]) -> str:
    """``a -> b -> a``: a parent cycle as every message shows it (at most six ids)."""
    return " -> ".join([*cycle[:6], *(["..."] if len(cycle) > 6 else []), cycle[0]])


class ParentCycleError(SessionFileError):
    """The parent chain of an entry loops back on itself, so no command reads the path to it or
    writes under it: pi walks a branch from its last entry with no guard against cycles and
    would hang."""

    def __init__(
        self, path: str | Path, entry_id: str, cycle: list[str], *, line: int | None = None
    ) -> None:
        self.entry_id = entry_id
        self.cycle = cycle
        super().__init__(
            path,
            f"entry {entry_id}: its parent chain loops back on itself ({cycle_text(cycle)}); "
            "nothing was read or written, since pi would hang on the file; run contextree check",
            line=line,
        )


class SessionLockedError(SessionFileError):
    """The write lock of a session file could not be taken in time."""


class TreeError(ContextreeError):
    """The session tree cannot do what was asked."""


class EntryNotFoundError(TreeError):
    """No entry with the given id exists in the session."""

    def __init__(self, entry_id: str) -> None:
        self.entry_id = entry_id
        super().__init__(f"Entry {entry_id} not found")


class SettingsError(ContextreeError):
    """A settings source holds an invalid value."""

    def __init__(self, source: str, key: str | None, message: str) -> None:
        self.source = source
        self.key = key
        where = f"{source}: {key}" if key else source
        super().__init__(f"{where}: {message}")


class HookError(ContextreeError):
    """A hook handler failed in a way that must stop the operation."""

    def __init__(self, hook: str, cause: BaseException) -> None:
        self.hook = hook
        self.cause = cause
        super().__init__(f"hook {hook} failed: {cause}")


class CompactionError(ContextreeError):
    """A compaction could not be produced."""


class ModelSpecError(ContextreeError, ValueError):
    """A ``provider:model`` string is malformed or names an unknown provider."""

    def __init__(self, spec: str, message: str) -> None:
        self.spec = spec
        super().__init__(message)


class ModelError(ContextreeError):
    """A model call failed."""

    def __init__(self, model: str, message: str) -> None:
        self.model = model
        super().__init__(message)


class ContextOverflowError(ModelError):
    """The provider reports that the prompt does not fit the model's context window."""


class ModelHTTPError(ModelError):
    """The provider answered with a non-2xx status."""

    def __init__(
        self,
        model: str,
        message: str,
        *,
        status: int,
        retry_after: float | None = None,
        body: str | None = None,
    ) -> None:
        self.status = status
        self.retry_after = retry_after
        self.body = body
        super().__init__(model, message)


class ModelTimeoutError(ModelError):
    """The provider did not answer in time."""


class ModelUnreachableError(ModelError):
    """Nothing accepts connections at the model's address (connection refused), or the client
    has no API key for its provider's service: no request was answered, and retrying the same
    call cannot help until the user acts (starts the server, sets the key)."""


class ModelResponseError(ModelError):
    """The provider answered with a body we cannot use (malformed, empty, wrong shape)."""


class CompactionCancelledError(CompactionError):
    """A hook or the caller cancelled the compaction; nothing was written."""

    def __init__(self, message: str = "Compaction cancelled") -> None:
        super().__init__(message)


class BranchSummaryError(ContextreeError):
    """A branch summary could not be generated; nothing was written and the leaf did not move."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(f"branch summary failed: {reason}; the leaf did not move")


class ToolError(ContextreeError):
    """A tool cannot do what its arguments ask; the message is shown to the model as an error."""
