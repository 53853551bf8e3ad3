"""A search that lands in a table shows the rows that stand out from their column, under the
table's header, though they hold none of the search's words."""

from __future__ import annotations

from contextree.recall.excerpt import excerpt
from contextree.text.tables import standout_rows

_ENTRIES = [
    "Spring regatta - entries (12)",
    "#   Class     Sail no     Helm               Club              Paid   Cert",
    *(
        f"{n:<3} {'ILCA 7' if n % 2 else 'Optimist':<9} NED {2000 + n:<7} Helm {n:<13} "
        f"{'WV Veerhaven' if n % 3 else 'WSV Zierikzee':<17} yes    ok"
        for n in range(1, 13)
    ),
    "Paid: 12/12   Certificates missing: 1",
]
_ENTRIES[9] = _ENTRIES[9].replace(" ok", " MISSING")  # row 8


def test_a_rare_value_in_a_column_of_kinds_marks_its_row() -> None:
    found = standout_rows(_ENTRIES)
    assert list(found) == [9]
    assert found[9].header == 1 and found[9].columns == ("Cert",)


def test_a_row_with_a_cell_more_than_the_others_stands_out() -> None:
    lines = [f"08:{n:02d}  APPT-{600 + n}  Patient {n}  Exam  20m" for n in range(10, 20)]
    lines[4] += "   NOTE: female clinician only"
    found = standout_rows(lines)
    assert list(found) == [4] and found[4].header is None  # a digit in the first row: no header


def test_no_row_stands_out_of_a_uniform_table_a_column_of_names_or_a_short_run() -> None:
    uniform = [f"{n} | Optimist | paid" for n in range(12)]
    names = [f"{n} | Sailor {n} | club {n}" for n in range(12)]
    short = ["a | b | c", "1 | 2 | 3", "4 | 5 | x"]
    prose = ["The regatta starts at ten.", "Bring a lifejacket."] * 6
    for lines in (uniform, names, short, prose):
        assert standout_rows(lines) == {}


def test_the_row_that_stands_out_is_shown_under_the_header() -> None:
    text = "\n".join(_ENTRIES)
    shown = excerpt(text, ["certificate", "sail", "club"], 260)
    assert "NED 2008" in shown and "MISSING" in shown
    assert "Sail no" in shown  # the header names the row's cells
    assert len(shown) <= 260
    # Without the search's words in its header, a row that stands out still comes after
    # the lines that hold them.
    plain = excerpt(text, ["entries"], 260)
    assert "MISSING" in plain and plain.index("entries") < plain.index("MISSING")


def test_a_pipe_table_row_with_a_note_is_found_by_its_column() -> None:
    rows = [
        f"{n:<2} | Patient {n:<10} | 2025-0{n % 9 + 1}-10 | {'SMS' if n % 2 else 'Phone'} |"
        for n in range(1, 25)
    ]
    rows[14] = "15 | Patient 15         | 2025-03-25 | -     | complaint open, do not contact"
    text = "\n".join(["#  | Patient | Due | Contact | Notes", *rows])
    shown = excerpt(text, ["contacted", "overdue", "sheet"], 160)
    assert "complaint open" in shown and "Contact" in shown


def test_a_header_with_a_figure_in_it_is_still_the_header() -> None:
    rows = [f"{n} | Pupil {n} | Y | paid" for n in range(1, 13)]
    rows[6] = "7 | Pupil 7 | Y* | paid"
    found = standout_rows(["# | Pupil | Consent | Deposit (£50)", *rows])
    assert list(found) == [7] and found[7].header == 0 and found[7].columns == ("Consent",)


def test_a_short_table_of_six_rows_shows_its_one_odd_status() -> None:
    lines = [
        "Volunteer        Shift status               Hours",
        *(f"Helper {n}         CONFIRMED                  {n + 2}" for n in range(5)),
        "Helper 5         ON HOLD - DBS check open   4",
    ]
    found = standout_rows(lines)
    assert list(found) == [6]
    assert found[6].columns == ("Shift status",) and found[6].table == range(0, 7)


def test_an_even_split_in_a_short_table_marks_no_row() -> None:
    lines = [f"Stall {n}   {'paid' if n % 2 else 'unpaid'}   {n * 3} m" for n in range(6)]
    assert standout_rows(lines) == {}


def test_a_rule_under_the_header_is_no_row_and_the_header_is_still_found() -> None:
    lines = [
        "Name        | Role        | Sep 20    | Notes",
        "------------|-------------|-----------|------",
        *(f"Helper {n}    | desk        | yes       |" for n in range(8)),
        "Dev Patel   | electronics | yes 10-12 | leaves at 12",
    ]
    found = standout_rows(lines)
    assert list(found) == [10]
    assert found[10].header == 0 and found[10].table == range(0, 11)
