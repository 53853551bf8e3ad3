"""Load settings: defaults < user files < project files < environment < command-line flags.

Keys are pi's dotted camelCase names (``compaction.reserveTokens``). Files:

- user: pi's ``~/.pi/agent/settings.json``, then ``$CONTEXTREE_HOME/settings.toml``
  (``CONTEXTREE_HOME`` defaults to ``~/.config/contextree``);
- project: ``<cwd>/.pi/settings.json``, then ``<cwd>/.contextree/settings.toml``; these may
  not choose a model or endpoint, turn redaction off or let tools outside the project unless
  the user's own settings say ``security.trustProjectSettings = true`` (a cloned repository
  must not send the session anywhere on its own);
- environment: ``CONTEXTREE_<SECTION>_<KEY>`` in upper snake case, e.g.
  ``CONTEXTREE_COMPACTION_RESERVE_TOKENS=8000``, ``CONTEXTREE_MODEL=openai:gpt-4o-mini``.

Values are validated with errors that name the source and key. pi's files hold many keys we do
not use; those are ignored, except pi's ``defaultProvider`` and ``defaultModel``: when no source
sets ``model``, they give it (``<defaultProvider>:<defaultModel>``, for a provider we can call).
Unknown keys in our own files are reported as warnings.

What the keys are, where each lands and how it is parsed is :mod:`contextree.settings.schema`'s
(:data:`~contextree.settings.schema.KEYS`); this module only finds the sources, merges them and
hands the values to the schema.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from contextree.errors import SettingsError
from contextree.settings.schema import (
    KEYS,
    LoadedSettings,
    Settings,
    parse_bool,
    settings_from_values,
)

# The schema's types lived here (or were imported here) before settings.schema held them all:
# they stay importable from this module.
from contextree.settings.schema import BranchSummarySettings as BranchSummarySettings
from contextree.settings.schema import CompactionSettings as CompactionSettings
from contextree.settings.schema import PruneSettings as PruneSettings
from contextree.settings.schema import RedactionSettings as RedactionSettings
from contextree.settings.schema import RetrySettings as RetrySettings

__all__ = ["KEYS", "LoadedSettings", "Settings", "load_settings", "settings_files"]


def _env_name(key: str) -> str:
    snake = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", key).replace(".", "_")
    return "CONTEXTREE_" + snake.upper()


ENV_NAMES = {_env_name(key): key for key in KEYS}


def _flatten(data: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in data.items():
        name = f"{prefix}{_camel(str(key))}"
        if isinstance(value, dict) and name not in KEYS:
            flat.update(_flatten(value, name + "."))
        else:
            flat[name] = value
    return flat


def _camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def settings_files(cwd: Path, home: Path | None, env: Mapping[str, str]) -> list[tuple[str, Path]]:
    """``(kind, path)`` of every settings file, lowest precedence first."""
    user_home = Path(env.get("HOME", str(Path.home())))
    ct_home = Path(env["CONTEXTREE_HOME"]) if env.get("CONTEXTREE_HOME") else None
    ct_home = home or ct_home or user_home / ".config" / "contextree"
    return [
        ("pi", user_home / ".pi" / "agent" / "settings.json"),
        ("user", ct_home / "settings.toml"),
        ("pi", cwd / ".pi" / "settings.json"),
        ("project", cwd / ".contextree" / "settings.toml"),
    ]


_PI_DEFAULT_KEYS = ("defaultProvider", "defaultModel")
"""pi's default model, read from pi's settings files when contextree has no ``model``."""

PI_DEFAULT_PROVIDERS = ("openai", "anthropic", "vllm", "ollama", "llamacpp")
"""pi ``defaultProvider`` values we can call: ``contextree.llm.registry.PROVIDERS`` without
``offline``, ``remote`` and the providers' compaction (``openai-compact``, ``anthropic-compact``,
which write no chat replies); not imported here: it would load the HTTP clients."""


def _pi_default_model(found: Mapping[str, tuple[Any, str]]) -> tuple[str, str] | None:
    """``(provider:model, source)`` from pi's ``defaultProvider`` and ``defaultModel``, or
    ``None`` when either is missing or the provider is not one contextree can call."""
    if not all(key in found for key in _PI_DEFAULT_KEYS):
        return None
    (provider, provider_source), (model, model_source) = (found[k] for k in _PI_DEFAULT_KEYS)
    if not isinstance(provider, str) or not isinstance(model, str) or not model.strip():
        return None
    if provider.strip().lower() not in PI_DEFAULT_PROVIDERS:
        return None
    paths = dict.fromkeys((provider_source, model_source))  # one path, or both in order
    source = f"{' + '.join(paths)} (pi's defaultProvider, defaultModel)"
    return f"{provider.strip().lower()}:{model.strip()}", source


def _read_file(kind: str, path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SettingsError(str(path), None, f"cannot read ({exc.strerror})") from None
    try:
        if path.suffix == ".json":
            data = json.loads(text)
        else:
            # Imported for a TOML file only: its parser compiles its patterns on import, a
            # cost to every command run where no settings file is TOML.
            import tomllib

            data = tomllib.loads(text)
    except ValueError as exc:  # tomllib.TOMLDecodeError is a ValueError
        raise SettingsError(
            str(path), None, f"not valid {path.suffix[1:].upper()}: {exc}"
        ) from None
    if not isinstance(data, dict):
        raise SettingsError(str(path), None, "expected an object of settings")
    return _flatten(data)


def _unsafe_from_a_project(key: str, raw: Any) -> bool:
    """Whether a project file's value would send session data off the machine, turn
    redaction off or widen tool access: a cloned repository must not decide that alone."""
    if key in ("model",):
        return raw not in (None, "", "offline")
    if key in ("compaction.remoteEndpoint", "retry.fallbackModels", "recall.indexDir"):
        return bool(raw)
    # Through parse_bool, the validator itself: a list of exact spellings let "False" or
    # "OFF" (which the validator lowers) turn redaction off unheld.
    if key == "redaction.enabled":
        return raw in (0, "0") or _as_bool(raw) is False
    if key == "tools.allowOutsideCwd":
        return raw is not None and _as_bool(raw) is not False
    return key == "security.trustProjectSettings"


def _as_bool(raw: Any) -> bool | None:
    """``raw`` read as the validator reads a bool; ``None`` when it would refuse it."""
    try:
        return parse_bool(raw)
    except ValueError:
        return None


def _is_project_file(path: Path, cwd: Path) -> bool:
    return path.parent.parent == cwd and path.parent.name in (".pi", ".contextree")


Found = dict[str, tuple[Any, str]]
"""Raw values by key, each with its source (a path, ``env NAME`` or ``command line``)."""


@dataclass
class _Sources:
    """What the files, the environment and the command line say, before validation."""

    values: Found = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    held: list[tuple[str, Any, Path]] = field(default_factory=list)
    """Unsafe values from a project's files, honoured only if the user trusts projects."""
    pi_default: Found = field(default_factory=dict)
    project_pi_default: Found = field(default_factory=dict)
    """pi's default model from a project's file: held like the values above."""

    def read_file(self, kind: str, path: Path, *, project: bool) -> None:
        for key, value in _read_file(kind, path).items():
            if key in KEYS and project and _unsafe_from_a_project(key, value):
                self.held.append((key, value, path))
            elif key in KEYS:
                self.values[key] = (value, str(path))
            elif kind == "pi" and key in _PI_DEFAULT_KEYS:
                (self.project_pi_default if project else self.pi_default)[key] = (value, str(path))
            elif kind != "pi":
                self.warnings.append(f"{path}: unknown setting {key!r} ignored")

    def read_environment(self, env: Mapping[str, str]) -> None:
        for name, key in ENV_NAMES.items():
            if name in env:
                self.values[key] = (env[name], f"env {name}")

    def read_overrides(self, overrides: Mapping[str, Any]) -> None:
        for key, value in overrides.items():
            if key not in KEYS:
                raise SettingsError("command line", key, "unknown setting")
            if value is not None:
                self.values[key] = (value, "command line")

    def settle_project_values(self) -> None:
        """Apply or refuse the held project values; then pi's default model, if no ``model``."""
        trusted = self._trusted()
        for key, value, path in self.held:
            if key == "security.trustProjectSettings":
                self.warnings.append(f"{path}: {key} is read from user settings only; ignored")
            elif trusted:
                # Over the user's files, as any project value; the environment and the
                # command line still win.
                existing = self.values.get(key)
                if existing is None or not existing[1].startswith(("env ", "command line")):
                    self.values[key] = (value, str(path))
            else:
                self.warnings.append(
                    f"{path}: {key} = {value!r} ignored: a project's settings may not choose "
                    "where session data is sent, turn redaction off or widen tool access (set "
                    "security.trustProjectSettings = true in your user settings to allow it)"
                )
        if self.project_pi_default and trusted:
            self.pi_default.update(self.project_pi_default)
        elif self.project_pi_default:
            sources = (source for _, source in self.project_pi_default.values())
            self.warnings.append(
                f"{', '.join(dict.fromkeys(sources))}: pi's defaultProvider/defaultModel "
                "ignored: a project's settings may not choose where session data is sent (set "
                "security.trustProjectSettings = true in your user settings to allow it)"
            )
        found = _pi_default_model(self.pi_default) if "model" not in self.values else None
        if found is not None:
            self.values["model"] = found

    def _trusted(self) -> bool:
        raw = self.values.get("security.trustProjectSettings")
        try:
            return raw is not None and parse_bool(raw[0])
        except ValueError:
            return False


def _validated(values: Found) -> tuple[Settings, dict[str, str]]:
    """The settings ``values`` make and where each key's value came from."""
    valid: dict[str, Any] = {}
    origins = {key: "default" for key in KEYS}
    for key, (raw, source) in values.items():
        try:
            value = KEYS[key].validate(raw)
        except ValueError as exc:
            raise SettingsError(source, key, str(exc)) from None
        if value == -1 and type(value) is int:
            # -1 is "unset" for every integer key (pi's convention): the built-in default,
            # not a budget of -1 tokens (a keep budget of -1 kept one message).
            origins[key] = f"default (-1 from {source})"
            continue
        valid[key] = value
        origins[key] = source
    return settings_from_values(valid), origins


def load_settings(
    *,
    cwd: Path | None = None,
    home: Path | None = None,
    env: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
    files: list[tuple[str, Path]] | None = None,
) -> LoadedSettings:
    """Merge every source into one :class:`Settings`; raises :class:`SettingsError`."""
    env = os.environ if env is None else env
    cwd = cwd or Path.cwd()
    sources = _Sources()
    for kind, path in files if files is not None else settings_files(cwd, home, env):
        if path.is_file():
            sources.read_file(kind, path, project=_is_project_file(path, cwd))
    sources.read_environment(env)
    sources.read_overrides(overrides or {})
    sources.settle_project_values()
    settings, origins = _validated(sources.values)
    return LoadedSettings(settings, origins, sources.warnings)
