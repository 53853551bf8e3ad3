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
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from contextree.errors import SettingsError
from contextree.security.redact import RedactionSettings, compile_pattern
from contextree.settings.prices import DEFAULT_PRICES, ModelPrice, parse_prices
from contextree.settings.schema import (
    BranchSummarySettings,
    CompactionSettings,
    PruneSettings,
    RetrySettings,
)

__all__ = ["KEYS", "LoadedSettings", "Settings", "load_settings", "settings_files"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Settings:
    """Every setting contextree reads, typed."""

    compaction: CompactionSettings = field(default_factory=CompactionSettings)
    branch_summary: BranchSummarySettings = field(default_factory=BranchSummarySettings)
    prune: PruneSettings = field(default_factory=PruneSettings)
    retry: RetrySettings = field(default_factory=RetrySettings)
    model: str | None = None
    """Default model spec (``provider:model``); ``None`` means the offline summarizer."""
    estimator: str = "pi"
    context_windows: dict[str, int] = field(default_factory=dict)
    prompts_dir: str | None = None
    fsync: bool = False
    prices: dict[str, ModelPrice] = field(default_factory=lambda: dict(DEFAULT_PRICES))
    """Model prices for the cost report (``prices``, merged over the built-in table)."""
    cost_turns: int = 10
    """``cost.turns``: how many coming requests the dry runs' cost report looks at."""
    keep_thinking_turns: int = -1
    """``context.keepThinkingTurns``: requests leave out the thinking of replies older than the
    last N turns (the file keeps it); -1 keeps all."""
    allow_outside_cwd: bool = False
    redaction: RedactionSettings = field(default_factory=RedactionSettings)
    """What is blanked out of text sent to a summarizer (``redaction.*``)."""
    recall_index_dir: str | None = None
    """``recall.indexDir``: where the recall indexes of session files are cached (default
    ``$XDG_CACHE_HOME/contextree/recall``)."""
    trust_project_settings: bool = False
    """``security.trustProjectSettings``, honoured from user files, the environment and the
    command line only: lets a project's files choose models and endpoints, turn redaction off
    and let tools outside the project."""


Validator = Callable[[Any], Any]


def _bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "1", "yes", "on"):
        return True
    if isinstance(value, str) and value.lower() in ("false", "0", "no", "off"):
        return False
    raise ValueError(f"expected true or false, found {value!r}")


def _bool_or_false(value: Any) -> bool:
    try:
        return _bool(value)
    except ValueError:
        return False


def _int(minimum: int | None = None) -> Validator:
    def check(value: Any) -> int:
        if isinstance(value, bool):
            raise ValueError(f"expected an integer, found {value!r}")
        try:
            number = int(value) if not isinstance(value, float) or value.is_integer() else None
        except (TypeError, ValueError):
            number = None
        if number is None:
            raise ValueError(f"expected an integer, found {value!r}")
        if minimum is not None and number < minimum and number != -1:
            raise ValueError(
                f"expected an integer >= {minimum} (or -1 for the default), found {number}"
            )
        return number

    return check


def _number(value: Any) -> float:
    if isinstance(value, bool):
        raise ValueError(f"expected a number, found {value!r}")
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ValueError(f"expected a number, found {value!r}") from None


def _str_or_none(value: Any) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise ValueError(f"expected a string, found {value!r}")
    return value


def _str_list(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [part.strip() for part in value.split(",") if part.strip()]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"expected a list of strings, found {value!r}")
    return tuple(value)


def _windows(value: Any) -> dict[str, int]:
    if isinstance(value, str):
        value = json.loads(value)
    if not isinstance(value, dict):
        raise ValueError(f"expected a table of model -> tokens, found {value!r}")
    return {str(k): _int(1)(v) for k, v in value.items()}


def _patterns(value: Any) -> tuple[str, ...]:
    # A string is one pattern, or a JSON list: regexes hold commas, so no comma splitting.
    if isinstance(value, str):
        value = json.loads(value) if value.lstrip().startswith("[") else [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"expected a list of regular expressions, found {value!r}")
    for pattern in value:
        compile_pattern(pattern)
    return tuple(value)


def _estimator(value: Any) -> str:
    if value not in ("pi", "utf8"):
        raise ValueError(f'expected "pi" or "utf8", found {value!r}')
    return str(value)


KEYS: dict[str, tuple[str, str, Validator]] = {
    # key: (section attribute or "", field name, validator)
    "compaction.enabled": ("compaction", "enabled", _bool),
    "compaction.reserveTokens": ("compaction", "reserve_tokens", _int(0)),
    "compaction.keepRecentTokens": ("compaction", "keep_recent_tokens", _int(0)),
    "compaction.thresholdPercent": ("compaction", "threshold_percent", _number),
    "compaction.thresholdTokens": ("compaction", "threshold_tokens", _int(0)),
    "compaction.autoContinue": ("compaction", "auto_continue", _bool),
    "compaction.remoteEndpoint": ("compaction", "remote_endpoint", _str_or_none),
    "compaction.adjustKeepRecentByUsage": ("compaction", "adjust_keep_recent_by_usage", _bool),
    "compaction.summaryTokens": ("compaction", "summary_tokens", _int(1)),
    "compaction.fallbackToOffline": ("compaction", "fallback_to_offline", _bool),
    "compaction.recordFacts": ("compaction", "record_facts", _bool),
    "branchSummary.enabled": ("branch_summary", "enabled", _bool),
    "branchSummary.reserveTokens": ("branch_summary", "reserve_tokens", _int(0)),
    "pruning.enabled": ("prune", "enabled", _bool),
    "pruning.protectTokens": ("prune", "protect_tokens", _int(0)),
    "pruning.minimumSavings": ("prune", "minimum_savings", _int(0)),
    "pruning.protectedTools": ("prune", "protected_tools", _str_list),
    "pruning.supersededReads": ("prune", "superseded_reads", _bool),
    "pruning.cacheAware": ("prune", "cache_aware", _bool),
    "pruning.cacheGuardTokens": ("prune", "cache_guard_tokens", _int(0)),
    "pruning.cacheTtlSeconds": ("prune", "cache_ttl_seconds", _int(1)),
    "retry.enabled": ("retry", "enabled", _bool),
    "retry.maxRetries": ("retry", "max_retries", _int(0)),
    "retry.baseDelayMs": ("retry", "base_delay_ms", _int(0)),
    "retry.maxDelayMs": ("retry", "max_delay_ms", _int(0)),
    "retry.fallbackModels": ("retry", "fallback_models", _str_list),
    "model": ("", "model", _str_or_none),
    "tokens.estimator": ("", "estimator", _estimator),
    "contextWindows": ("", "context_windows", _windows),
    "prompts.dir": ("", "prompts_dir", _str_or_none),
    "storage.fsync": ("", "fsync", _bool),
    "context.keepThinkingTurns": ("", "keep_thinking_turns", _int(1)),
    "prices": ("", "prices", parse_prices),
    "cost.turns": ("", "cost_turns", _int(1)),
    "tools.allowOutsideCwd": ("", "allow_outside_cwd", _bool),
    "redaction.enabled": ("redaction", "enabled", _bool),
    "redaction.patterns": ("redaction", "patterns", _patterns),
    "security.trustProjectSettings": ("", "trust_project_settings", _bool),
    "recall.indexDir": ("", "recall_index_dir", _str_or_none),
}
"""Every settings key we read, with where it lands and how it is validated."""


def _env_name(key: str) -> str:
    snake = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", key).replace(".", "_")
    return "CONTEXTREE_" + snake.upper()


ENV_NAMES = {_env_name(key): key for key in KEYS}


@dataclass(frozen=True, slots=True)
class LoadedSettings:
    """Effective settings, where each value came from, and warnings about the sources."""

    settings: Settings
    origins: dict[str, str]
    warnings: list[str]

    def value(self, key: str) -> Any:
        section, name, _ = KEYS[key]
        holder = getattr(self.settings, section) if section else self.settings
        return getattr(holder, name)


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
        data = json.loads(text) if path.suffix == ".json" else tomllib.loads(text)
    except (ValueError, tomllib.TOMLDecodeError) as exc:
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
    if key == "redaction.enabled":
        return raw in (False, "false", "0", 0, "no", "off")
    if key == "tools.allowOutsideCwd":
        return raw not in (False, "false", "0", 0, "no", "off", None)
    return key == "security.trustProjectSettings"


def _is_project_file(path: Path, cwd: Path) -> bool:
    return path.parent.parent == cwd and path.parent.name in (".pi", ".contextree")


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
    values: dict[str, tuple[Any, str]] = {}
    warnings: list[str] = []
    held: list[tuple[str, Any, Path]] = []  # unsafe project values, honoured only if trusted
    pi_default: dict[str, tuple[Any, str]] = {}
    project_pi_default: dict[str, tuple[Any, str]] = {}  # a model too: held like the above
    for kind, path in files if files is not None else settings_files(cwd, home, env):
        if not path.is_file():
            continue
        project = _is_project_file(path, cwd)
        for key, value in _read_file(kind, path).items():
            if key in KEYS and project and _unsafe_from_a_project(key, value):
                held.append((key, value, path))
            elif key in KEYS:
                values[key] = (value, str(path))
            elif kind == "pi" and key in _PI_DEFAULT_KEYS:
                (project_pi_default if project else pi_default)[key] = (value, str(path))
            elif kind != "pi":
                warnings.append(f"{path}: unknown setting {key!r} ignored")
    for name, key in ENV_NAMES.items():
        if name in env:
            values[key] = (env[name], f"env {name}")
    for key, value in (overrides or {}).items():
        if key not in KEYS:
            raise SettingsError("command line", key, "unknown setting")
        if value is not None:
            values[key] = (value, "command line")
    trusted = "security.trustProjectSettings" in values and _bool_or_false(
        values["security.trustProjectSettings"][0]
    )
    for key, value, path in held:
        if key == "security.trustProjectSettings":
            warnings.append(f"{path}: {key} is read from user settings only; ignored")
        elif trusted:
            # Over the user's files, as any project value; the environment and the command
            # line still win.
            existing = values.get(key)
            if existing is None or not existing[1].startswith(("env ", "command line")):
                values[key] = (value, str(path))
        else:
            warnings.append(
                f"{path}: {key} = {value!r} ignored: a project's settings may not choose where "
                "session data is sent, turn redaction off or widen tool access (set "
                "security.trustProjectSettings = true in your user settings to allow it)"
            )
    if project_pi_default:
        if trusted:
            pi_default.update(project_pi_default)
        else:
            where = ", ".join(dict.fromkeys(source for _, source in project_pi_default.values()))
            warnings.append(
                f"{where}: pi's defaultProvider/defaultModel ignored: a project's settings may "
                "not choose where session data is sent (set security.trustProjectSettings = "
                "true in your user settings to allow it)"
            )
    if "model" not in values:
        found = _pi_default_model(pi_default)
        if found is not None:
            values["model"] = found

    sections: dict[str, dict[str, Any]] = {}
    top: dict[str, Any] = {}
    origins = {key: "default" for key in KEYS}
    for key, (raw, source) in values.items():
        section, name, validate = KEYS[key]
        try:
            value = validate(raw)
        except ValueError as exc:
            raise SettingsError(source, key, str(exc)) from None
        if value == -1 and type(value) is int:
            # -1 is "unset" for every integer key (pi's convention): the built-in default,
            # not a budget of -1 tokens (a keep budget of -1 kept one message).
            origins[key] = f"default (-1 from {source})"
            continue
        (sections.setdefault(section, {}) if section else top)[name] = value
        origins[key] = source
    settings = Settings(
        compaction=CompactionSettings(**sections.get("compaction", {})),
        branch_summary=BranchSummarySettings(**sections.get("branch_summary", {})),
        prune=PruneSettings(**sections.get("prune", {})),
        retry=RetrySettings(**sections.get("retry", {})),
        redaction=RedactionSettings(**sections.get("redaction", {})),
        **top,
    )
    return LoadedSettings(settings, origins, warnings)
