"""The README stays true to the code: its configuration reference is generated from
what vouch reads (scripts/config_reference.py), so a key added, renamed or given a new
default fails here until the README is regenerated; its walkthrough shows what the
commands print today (scripts/readme_walkthrough.py). (The quick start runs in
`.ci/run`, in a fresh environment where pip may build nothing from source.)"""

from __future__ import annotations

import re
from pathlib import Path

from conftest import script

README = Path(__file__).resolve().parents[1] / "README.md"
SEARCH_DOC = README.parent / "docs" / "search.md"


def test_the_configuration_reference_is_generated_from_what_vouch_reads() -> None:
    reference = script("config_reference")
    text = README.read_text(encoding="utf-8")
    assert reference.rewritten(text) == text, "run: python scripts/config_reference.py"
    doc = SEARCH_DOC.read_text(encoding="utf-8")
    assert reference.rewritten_search(doc) == doc, "run: python scripts/config_reference.py"
    block, expert = reference.block(), reference.expert_block()
    for key in ("review.approver_role", "index.auto_refresh", "embedding.model"):
        assert f"| `{key}` |" in block and f"| `{key}` |" not in expert
    for key in ("search.similarity_floor", "search.fts_share", "search.prior.KIND"):
        assert f"`{key}`" in expert and f"`{key}`" not in block


def test_the_walkthrough_shows_what_the_commands_print() -> None:
    walk = script("readme_walkthrough")
    shown = walk.normalise(walk.shown(README.read_text(encoding="utf-8")))
    assert "<proposal-1>" in shown and "<commit-1>" in shown
    # the review screen's diff is counted, not shown; the cited lines are shown
    assert re.search(r"\[… the diff: 2 new files, \d+ lines, left out here\]", shown)
    assert "4 > Every deploy needs a green CI run" in shown and "diff --git" not in shown
    # on failure: python scripts/readme_walkthrough.py (and read the diff it makes)
    assert walk.normalise(walk.walkthrough()) == shown


def test_the_walkthrough_normalises_only_what_changes_between_runs() -> None:
    walk = script("readme_walkthrough")
    one = "20260101-120000-0123abcd"
    run = f"$ vouch approve {one}\napproved {one} (merge 1a2b3c4)"
    again = run.replace(one, "20261231-235959-feedbeef")
    assert walk.normalise(run) == walk.normalise(again.replace("1a2b3c4", "9f8e7d6c5b4a"))
    mixed = run.replace(f"approved {one}", "approved 20261231-235959-feedbeef")
    assert walk.normalise(run) != walk.normalise(mixed)  # one proposal shown as two
    assert walk.normalise("b655dd4c5bd2  docs/x.md") == "b655dd4c5bd2  docs/x.md"
    # two steps may fall in one second or in two: times are all alike
    a, b = "2026-11-26T11:32:16+00:00", "2026-11-26T11:32:17+00:00"
    assert walk.normalise(f"at {a}, then at {b}") == walk.normalise(f"at {a}, then at {a}")


def test_the_set_up_section_has_exactly_the_two_commands() -> None:
    """What a newcomer copies: install and demo, then the test suite; .ci/run runs the
    first as written."""
    section = README.read_text(encoding="utf-8").split("## Set up on a fresh machine", 1)[1]
    section = section.split("\n## ", 1)[0]
    blocks = re.findall(r"```(\w*)\n(.*?)```", section, re.S)
    assert [(lang, body.count("\n")) for lang, body in blocks] == [("sh", 1), ("sh", 1)]
    assert blocks[0][1].strip() == "pip install . && vouch demo"
