"""The latest request is shown whole once: the next step that answers it, and an In Progress
line when the request is also among the facts, show its head (the room goes to other lines)."""

from __future__ import annotations

from summary_messages import _say, _user
from summary_sections import offline_summary as _summary
from summary_sections import section as _section

_LONG_REQUEST = (
    "Please move the Thursday pottery class to the small studio and tell the nine people "
    "booked on it, the big kiln is being serviced that afternoon and the small studio has "
    "its own wheel room."
)


def test_the_next_step_shows_the_head_of_a_long_request_shown_whole_elsewhere() -> None:
    summary = _summary(
        [_user("Help me run the studio this week."), _say("Sure."), _user(_LONG_REQUEST)]
    )
    steps = _section(summary, "## Next Steps")
    assert "Respond to the latest user request: Please move the Thursday pottery class" in steps
    assert "its own wheel room" not in steps
    assert summary.count(_LONG_REQUEST) == 1  # among the facts (it states one) or in progress


def test_in_progress_shows_the_head_of_a_request_kept_whole_among_the_facts() -> None:
    statement = (
        "The kiln at the back is booked by the school on Tuesdays until 3 pm, so the glaze "
        "firing for the 14 students goes in on Wednesday at 9 am."
    )
    summary = _summary([_user("Help me plan the firings."), _say("Sure."), _user(statement)])
    assert statement in _section(summary, "## Key Facts")
    progress = _section(summary, "### In Progress")
    assert "- [ ] The kiln at the back is booked by the school" in progress
    assert "Wednesday at 9 am" not in progress
