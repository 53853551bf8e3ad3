"""The two small dialogs of the interactive tree: summarize before moving, and set a label."""

from __future__ import annotations

from typing import ClassVar, Final

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label

__all__ = ["CANCEL", "JUST_MOVE", "SUMMARIZE", "LabelPrompt", "SummaryChoice"]

SUMMARIZE: Final = "summarize"
JUST_MOVE: Final = "move"
CANCEL: Final = "cancel"


class SummaryChoice(ModalScreen[str]):
    """Asks whether to summarize the branch being left: ``summarize``, ``move`` or ``cancel``."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("s", f"choose('{SUMMARIZE}')", "Summarize"),
        Binding("m", f"choose('{JUST_MOVE}')", "Just move"),
        Binding("escape,c", f"choose('{CANCEL}')", "Cancel"),
    ]

    def __init__(self, target_id: str) -> None:
        super().__init__()
        self.target_id = target_id

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(
                f"Move the leaf to {self.target_id}. Summarize the branch you leave?",
                markup=False,
            )
            with Horizontal(classes="choices"):
                yield Button("Summarize", id=SUMMARIZE, variant="primary")
                yield Button("Just move", id=JUST_MOVE)
                yield Button("Cancel", id=CANCEL)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id or CANCEL)

    def action_choose(self, choice: str) -> None:
        self.dismiss(choice)


class LabelPrompt(ModalScreen[str | None]):
    """Asks for a label: the text typed (empty clears it), or ``None`` when cancelled."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, entry_id: str, current: str | None) -> None:
        super().__init__()
        self.entry_id = entry_id
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(
                f"Label for {self.entry_id} (enter saves, empty clears, escape cancels)",
                markup=False,
            )
            yield Input(value=self.current or "", placeholder="label")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)
