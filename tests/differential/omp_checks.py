"""The comparison with oh-my-pi 18.2.3: per leaf, its ``buildSessionContext`` equals ours seen
through its documented differences (``compare.omp_view`` / ``from_omp``)."""

from __future__ import annotations

from typing import Any

from contextree.session import SessionTree
from differential.compare import (
    first_difference,
    from_omp,
    omp_default_model,
    omp_view,
    resolve,
)

Json = dict[str, Any]


def check_omp_contexts(tree: SessionTree, answer: Json) -> int:
    """Every leaf oh-my-pi reported: its context is ours as ``omp_view`` describes; its
    thinking level is ours; its model is ours where no pi-style ``model_change`` is on the path
    (oh-my-pi reads only its own ``model`` field). Returns how many leaves were compared."""
    assert answer["version"] == "18.2.3"
    assert answer["ids"] == [e["id"] for e in tree.get_entries()]
    assert answer["leafId"] == tree.leaf_id
    stored = answer["messages"]
    for leaf, theirs in answer["contexts"].items():
        context = tree.build_session_context(leaf)
        ours = omp_view(context.messages)
        expected = from_omp(resolve(theirs["messages"], stored))
        assert ours == expected, f"context of {leaf}: {first_difference(ours, expected)}"
        assert context.thinking_level == theirs["thinkingLevel"], leaf
        path = tree.get_branch(leaf)
        default = theirs["models"].get("default")
        assert default == omp_default_model(path), leaf
        if not any(e["type"] == "model_change" and "modelId" in e for e in path):
            assert (context.model.spec if context.model else None) == default, leaf
    return len(answer["contexts"])
