"""Files saved by code that a tool runs (a data analysis in a ``python`` tool) are files
changed, as a write call's are: the summary lists them under Done."""

from __future__ import annotations

import pytest

from contextree.compaction.offline.code_writes import code_written_paths
from summary_messages import _call, _result, _say, _user
from summary_sections import offline_summary as _summary
from summary_sections import section as _section


@pytest.mark.parametrize(
    ("code", "written"),
    [
        (
            "kept = rows[rows.ok]\nkept.to_csv('out/kept_rows.csv', index=False)",
            ["out/kept_rows.csv"],
        ),
        ('fig.savefig("plots/weekly.png", dpi=200)', ["plots/weekly.png"]),
        ("with open('notes/log.txt', 'a') as fh:\n    fh.write(line)", ["notes/log.txt"]),
        ("df.to_parquet(path='lake/day.parquet')", ["lake/day.parquet"]),
        ("write.csv(totals, 'tables/totals.csv', row.names = FALSE)", ["tables/totals.csv"]),
        ("saveRDS(fit, file = 'models/fit.rds')", ["models/fit.rds"]),
        ("fs.writeFileSync('build/meta.json', JSON.stringify(meta))", ["build/meta.json"]),
        ("np.save('arrays/w.npy', weights)", ["arrays/w.npy"]),
        ("Path('draft.md').write_text('hello world')", ["draft.md"]),
        ("torch.save(model.state_dict(), 'ckpt/best.pt')", ["ckpt/best.pt"]),
        ("writeLines(lines, 'out/notes.txt')", ["out/notes.txt"]),
        ("a.to_csv('x.csv'); b.to_csv('y.csv'); a.to_csv('x.csv')", ["x.csv", "y.csv"]),
    ],
)
def test_a_literal_path_given_to_a_writing_call_is_found(code: str, written: list[str]) -> None:
    assert code_written_paths(code) == written


@pytest.mark.parametrize(
    "code",
    [
        "with open('data/in.csv') as fh:\n    rows = fh.read()",
        "df = pd.read_csv('data/in.csv')",
        "df.to_csv(out_path)",  # built at run time: not known
        "Path('a.txt').read_text()",
        "open(f'out/{name}.csv', 'w')",  # an f-string: built at run time
        "df.to_csv(p, index=False, encoding='utf-8')",
        "report.to_excel(writer, sheet_name='Summary')",
        "rows.to_json(orient='records')",
        "fig.savefig(buffer, format='png')",
    ],
)
def test_reading_or_a_path_built_at_run_time_is_not_a_write(code: str) -> None:
    assert code_written_paths(code) == []


def test_a_file_saved_by_a_code_tool_is_a_file_changed() -> None:
    code = "clean = rows.dropna()\nclean.to_csv('results/clean_v2.csv', index=False)"
    summary = _summary(
        [
            _user("Clean the survey export and save it."),
            _say("", _call("python", code=code)),
            _result("saved 412 rows", tool="python"),
            _say("Saved the cleaned rows."),
        ]
    )
    assert "[x] Modified `results/clean_v2.csv` (python)" in _section(summary, "### Done")


def test_code_that_failed_saved_nothing() -> None:
    code = "clean = rows.dropna()\nclean.to_csv('results/clean_v2.csv')"
    summary = _summary(
        [
            _user("Clean the survey export and save it."),
            _say("", _call("python", code=code)),
            _result(
                "Traceback (most recent call last):\nNameError: name 'rows' is not defined",
                tool="python",
            ),
            _say("The frame was not loaded."),
        ]
    )
    assert "Modified `results/clean_v2.csv`" not in summary


def test_code_run_through_the_shell_is_read_too() -> None:
    command = (
        "cd /srv/feed && python - <<'EOF'\nimport pandas as pd\n"
        "pd.DataFrame(rows).to_json('api/feed.json')\nEOF"
    )
    summary = _summary(
        [
            _user("Write the feed file."),
            _say("", _call("bash", command=command)),
            _result("done: 42 items", tool="bash"),
            _say("Written."),
        ]
    )
    assert "Modified `api/feed.json` (bash)" in _section(summary, "### Done")


def test_a_script_only_saved_by_the_shell_or_a_failed_run_wrote_nothing() -> None:
    saved = "cat > tools/fix.py <<'EOF'\nwith open('web/app.ts', 'w') as fh:\n    fh.write(x)\nEOF"
    failed = "python3 -c \"open('web/app.ts', 'w').write(broken)\""
    summary = _summary(
        [
            _user("Fix the app file."),
            _say("", _call("bash", command=saved)),
            _result("", tool="bash"),
            _say("", _call("bash", command=failed)),
            _result("NameError: name 'broken' is not defined\nexit code 1", tool="bash"),
            _say("That failed."),
        ]
    )
    assert "Modified `tools/fix.py`" in summary  # the shell's redirection wrote the script
    assert "web/app.ts" not in _section(summary, "### Done")


def test_code_quoted_in_a_message_is_not_run() -> None:
    summary = _summary(
        [
            _user("Mail the analyst the snippet."),
            _say(
                "",
                _call(
                    "send_email",
                    to="analyst@example.org",
                    body="Try: df.to_csv('shared/final.csv', index=False)",
                ),
            ),
            _result("SENT", tool="send_email"),
            _say("Sent."),
        ]
    )
    assert "Modified `shared/final.csv`" not in summary


def test_a_code_tools_traceback_is_reported_by_its_exception_line() -> None:
    summary = _summary(
        [
            _user("Load the survey export."),
            _say(
                "", _call("python", code="rows = pd.read_csv('survey.csv')\nrows.groupby('ward')")
            ),
            _result(
                'Traceback (most recent call last):\n  File "<stdin>", line 2, in <module>\n'
                "KeyError: 'ward'",
                tool="python",
            ),
            _say("The column is named differently."),
        ]
    )
    assert "**Error**: KeyError: 'ward'" in summary
    assert "**Error**: Traceback" not in summary


def test_a_chained_traceback_is_reported_by_the_exception_raised_last() -> None:
    from contextree.compaction.offline.commands import failure_line

    text = (
        "Traceback (most recent call last):\n  File \"a.py\", line 1\nKeyError: 'ward'\n\n"
        "During handling of the above exception, another exception occurred:\n\n"
        'Traceback (most recent call last):\n  File "a.py", line 3\n'
        "RuntimeError: no ward column in survey.csv"
    )
    assert failure_line(text, "Traceback (most recent call last):") == (
        "RuntimeError: no ward column in survey.csv"
    )
