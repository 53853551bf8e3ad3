"""The key table ``contextree.settings.schema.KEYS`` is the one source of the settings keys:
docs/settings.md lists exactly its keys (with their environment names and defaults), every key
the docs mention is in it, and it reaches every field of ``Settings`` exactly once."""

from __future__ import annotations

import re
from dataclasses import fields, is_dataclass
from pathlib import Path
from typing import Any

from contextree.settings.load import ENV_NAMES, load_settings
from contextree.settings.schema import KEYS, LoadedSettings, Settings

ROOT = Path(__file__).resolve().parents[2]
SETTINGS_DOC = ROOT / "docs" / "settings.md"
ROW = re.compile(r"^\| `([^`]+)` \| `([^`]+)` \| ([^|]+) \|", re.MULTILINE)


def _documented_rows() -> dict[str, tuple[str, str]]:
    rows = ROW.findall(SETTINGS_DOC.read_text(encoding="utf-8"))
    assert len(rows) == len({key for key, _, _ in rows}), "a key is listed twice"
    return {key: (env, default.strip()) for key, env, default in rows}


def _default_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None or value == () or value == {}:
        return "(none)"
    if isinstance(value, tuple):
        return ", ".join(value)
    if isinstance(value, dict):
        return "built-in table"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def test_the_settings_page_lists_exactly_the_keys_of_the_table() -> None:
    documented = _documented_rows()
    assert sorted(documented) == sorted(KEYS)


def test_the_settings_page_gives_each_keys_environment_name_and_default() -> None:
    defaults = LoadedSettings(Settings(), {}, [])
    environment = {key: name for name, key in ENV_NAMES.items()}
    for key, (env, default) in _documented_rows().items():
        assert env == environment[key], key
        assert default == _default_text(defaults.value(key)), key


def _section_names() -> set[str]:
    return {key.split(".")[0] for key in KEYS if "." in key}


def test_every_key_the_docs_mention_is_in_the_table() -> None:
    # A backquoted `section.key` of a known section (`compaction.reserveTokens`,
    # `pruning.cacheAware=false`) anywhere in the docs or the README.
    sections = "|".join(sorted(_section_names()))
    mention = re.compile(rf"`((?:{sections})\.[a-z][A-Za-z]*)\b(?![\w.(/])")
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    found: dict[str, str] = {}
    for page in pages:
        for key in mention.findall(page.read_text(encoding="utf-8")):
            found.setdefault(key, page.name)
    assert "compaction.reserveTokens" in found  # the scan finds keys at all
    unknown = {key: page for key, page in found.items() if key not in KEYS}
    assert unknown == {}


def test_the_table_reaches_every_settings_field_once() -> None:
    reached = [(key.section, key.name) for key in KEYS.values()]
    assert len(reached) == len(set(reached)), "two keys set one field"
    expected: set[tuple[str, str]] = set()
    for top in fields(Settings):
        section = getattr(Settings(), top.name)
        if is_dataclass(section):
            expected.update((top.name, inner.name) for inner in fields(section))
        else:
            expected.add(("", top.name))
    assert set(reached) == expected


def test_each_key_lands_in_its_field(tmp_path: Path) -> None:
    # Through the environment, the way every key can be given: a value other than the
    # default must come out in the field the table names.
    samples = {
        "compaction.reserveTokens": ("9000", 9000),
        "pruning.protectedTools": ("bash,grep", ("bash", "grep")),
        "redaction.patterns": ("ACME-[0-9]+", ("ACME-[0-9]+",)),
        "recall.indexDir": ("/tmp/recall", "/tmp/recall"),
        "recall.auto": ("false", False),
        "tokens.estimator": ("utf8", "utf8"),
    }
    environment = {name: samples[key][0] for name, key in ENV_NAMES.items() if key in samples}
    loaded = load_settings(cwd=tmp_path, home=tmp_path, env=environment, files=[])
    for key, (_, value) in samples.items():
        assert loaded.value(key) == value, key
        assert loaded.origins[key].startswith("env CONTEXTREE_"), key
    assert loaded.settings.redaction.patterns == ("ACME-[0-9]+",)
    assert loaded.settings.compaction.reserve_tokens == 9000
