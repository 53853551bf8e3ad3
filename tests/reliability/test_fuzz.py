"""Bad input through the loader, the codec, ``contextree check``, every CLI command and the
``serve`` endpoint: a clear error or a reported skip, never a traceback, a hang or a changed
file (see :mod:`reliability.fuzzing` for the damage and the oracles).

Hypothesis bounds each example with a generous deadline, and a SIGALRM watchdog turns a real
hang into a failure instead of a stuck run.
"""

from __future__ import annotations

import copy
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from types import FrameType
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reliability import fuzzing
from reliability.fuzzing import (
    BASE,
    COMMANDS,
    check_cli,
    check_codec,
    check_round_trip,
    check_serve,
    damaged_sessions,
    encode,
    exercise_library,
    field_paths,
    fuzz_server,
    json_values,
    raw_requests,
    set_path,
)

FUZZ = settings(
    deadline=timedelta(seconds=30),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
WATCHDOG_S = 120


@contextmanager
def watchdog(seconds: int = WATCHDOG_S) -> Iterator[None]:
    """Fail (instead of hanging forever) when the block runs longer than ``seconds``."""

    def expire(signum: int, frame: FrameType | None) -> None:
        raise TimeoutError(f"no answer within {seconds} s: a hang")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


# -- codec -----------------------------------------------------------------------------------


@FUZZ
@given(st.binary(max_size=400) | damaged_sessions().map(lambda data: data[:400]))
def test_the_codec_decodes_any_bytes_or_says_why(line: bytes) -> None:
    check_codec(line)


@FUZZ
@given(st.dictionaries(st.text(max_size=8), json_values, max_size=6))
def test_the_codec_round_trips_any_object(value: dict[str, Any]) -> None:
    check_round_trip(value)


@pytest.mark.parametrize("depth", [999, 1000, 10_000, 100_000])
def test_nesting_beyond_the_recursion_limit_is_a_bad_line_not_a_crash(depth: int) -> None:
    line = b'{"type": "message", "id": "e1", "deep": ' + b"[" * depth + b"]" * depth + b"}"
    check_codec(line)


# -- loader and library ----------------------------------------------------------------------


@settings(FUZZ, max_examples=300)
@given(damaged_sessions())
def test_the_library_reads_any_damaged_session(data: bytes) -> None:
    with watchdog():
        exercise_library(data)


_WRONG: tuple[Any, ...] = (None, 7, -1.5, "x", [], {}, True, [{"type": 3}], {"role": []})


def _wrong_type_cases() -> Iterator[Any]:
    for index, line in enumerate(BASE):
        for path in field_paths(line):
            yield pytest.param(index, path, id=f"{index}:{'.'.join(map(str, path))}")


@pytest.mark.parametrize(("index", "path"), list(_wrong_type_cases()))
def test_a_wrong_type_in_any_field_is_read_or_rejected_clearly(
    index: int, path: tuple[Any, ...]
) -> None:
    for value in _WRONG:
        lines = copy.deepcopy(BASE)
        set_path(lines[index], path, value)
        exercise_library(encode(lines))


def test_every_truncation_of_a_session_is_read_or_rejected_clearly() -> None:
    data = encode(BASE)
    for end in range(0, len(data), 37):
        exercise_library(data[:end])


# -- the command line ------------------------------------------------------------------------


@settings(FUZZ, max_examples=120)
@given(damaged_sessions(), st.sampled_from(COMMANDS))
def test_every_command_on_a_damaged_session(
    tmp_path_factory: pytest.TempPathFactory, data: bytes, command: tuple[str, ...]
) -> None:
    with watchdog():
        check_cli(data, command, tmp_path_factory.mktemp("cli"))


def _huge() -> bytes:
    lines = copy.deepcopy(BASE)
    lines[3]["message"]["content"][0]["text"] = "word " * 1_200_000  # a 6 MB line
    return encode(lines)


def _deep() -> bytes:
    head = encode(BASE[:4])
    deep = b"[" * 10_000 + b"]" * 10_000
    return head + (
        b'{"type":"message","id":"e0000004","parentId":"e0000003","timestamp":"t",'
        b'"message":{"role":"user","content":' + deep + b"}}\n"
    )


def _invalid_utf8_in_a_body() -> bytes:
    # The quick index skips message bodies, so these bytes are only seen when it is decoded.
    lines = encode(BASE).split(b"\n")
    lines[3] = lines[3].replace(b"Fix the parser", b"Fix the \xff\xfe parser")
    return b"\n".join(lines)


def _number_out_of_range_in_a_body() -> bytes:
    # The quick index skips message bodies: this line only fails when it is decoded.
    lines = encode(BASE).split(b"\n")
    lines[3] = lines[3].replace(b'"timestamp":', b'"big":1e400,"timestamp":', 1)
    return b"\n".join(lines)


SPECIAL = {
    "huge line": _huge,
    "depth 10000": _deep,
    "invalid UTF-8": _invalid_utf8_in_a_body,
    "number out of range": _number_out_of_range_in_a_body,
}


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
@pytest.mark.parametrize("case", SPECIAL)
def test_every_command_on_huge_deep_and_invalid_input(
    tmp_path: Path, case: str, command: tuple[str, ...]
) -> None:
    with watchdog():
        check_cli(SPECIAL[case](), command, tmp_path)


def test_nesting_too_deep_is_a_reported_bad_line_that_repair_moves_away(tmp_path: Path) -> None:
    from contextree.session.tree import SessionTree

    tree = SessionTree.in_memory(_deep())
    assert [bad.line for bad in tree.report.bad_lines] == [5]
    path = tmp_path / "s.jsonl"
    path.write_bytes(_deep())
    assert fuzzing.run_cli(["check", str(path), "--repair"]).exit_code == 0
    assert SessionTree.open(path).report.clean


def test_an_undecodable_entry_gives_one_line_and_repair_fixes_it(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(_number_out_of_range_in_a_body())
    # The entry is not in the context and info reads only what it shows (msgspec skips the
    # bytes of fields it is not asked for); commands that need the entry stop with one line.
    outcome = fuzzing.run_cli(["info", str(path)])
    assert outcome.exit_code == 0
    assert "none found on load (contextree check validates every entry)" in outcome.stdout
    outcome = fuzzing.run_cli(["tree", str(path), "--fold", "0"])
    assert outcome.exit_code == 1
    assert outcome.stderr.count("\n") == 1
    assert "cannot be decoded" in outcome.stderr and "check --repair" in outcome.stderr
    assert fuzzing.run_cli(["check", str(path), "--repair"]).exit_code in (0, 1)
    assert fuzzing.run_cli(["info", str(path)]).exit_code == 0
    assert fuzzing.run_cli(["tree", str(path), "--fold", "0"]).exit_code == 0


# -- the serve endpoint ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def endpoint() -> Iterator[tuple[str, int, list[str]]]:
    with fuzz_server() as server:
        yield server
        assert not server[2], f"the handler raised:\n{server[2][0]}"


@settings(FUZZ, max_examples=150)
@given(request=raw_requests())
def test_the_endpoint_answers_every_request_with_json(
    endpoint: tuple[str, int, list[str]], request: fuzzing.RawRequest
) -> None:
    host, port, escaped = endpoint
    with watchdog():
        check_serve(host, port, request)
    assert not escaped, escaped[0]


@pytest.mark.parametrize(
    "raw",
    [
        b"GARBAGE\r\n\r\n",
        b"PUT /summarize HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        b"GET /" + b"a" * 70_000 + b" HTTP/1.1\r\n\r\n",
        b"POST /summarize HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 70_000 + b"\r\n\r\n",
    ],
    ids=["bad request line", "unsupported method", "long URI", "long header"],
)
def test_http_level_rejections_are_json_too(
    endpoint: tuple[str, int, list[str]], raw: bytes
) -> None:
    import json

    host, port, _ = endpoint
    reply = fuzzing.send_raw(host, port, raw)
    body = reply.partition(b"\r\n\r\n")[2] if reply.startswith(b"HTTP/") else reply
    assert isinstance(json.loads(body)["error"], str)


def test_invalid_utf8_in_a_body_is_read_as_pi_reads_it_and_never_repaired_away(
    tmp_path: Path,
) -> None:
    path = tmp_path / "s.jsonl"
    data = _invalid_utf8_in_a_body()
    path.write_bytes(data)
    outcome = fuzzing.run_cli(["tree", str(path), "--fold", "0"])
    assert outcome.exit_code == 0
    assert "Fix the \ufffd\ufffd parser" in outcome.stdout
    assert f"{path}:4: invalid UTF-8 read as U+FFFD" in outcome.stderr
    assert fuzzing.run_cli(["check", str(path)]).exit_code == 0
    assert fuzzing.run_cli(["check", str(path), "--repair"]).exit_code == 0
    assert path.read_bytes() == data
