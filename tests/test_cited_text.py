"""The reviewer's text is never cut silently (issue 36, item 3): a long cited span is cut
on the review screen (`vouch show`, `vouch review`, the pull-request description) and in
`vouch why` with a marker saying how many cited lines were left out and the command
that prints them — which prints exactly those — and the lines holding the citation's
quote are always shown. `why` quotes each evidence span, gives the whole title, and
shows the whole review thread: every revision, every comment, the decision."""

from __future__ import annotations

import re
from typing import Any

import pytest
from gate_support import ALICE, BOB, call

from vouch.history.citations import MAX_CITED
from vouch.store.kb import KB

LINES = [f"Step {n}: the deploy tool checks gate number {n}." for n in range(1, 101)]
LONG_TITLE = (
    "Every deploy passes all gates of the deploy tool in order, and the sixty-fifth gate "
    "is the one that checks the release notes."
)


@pytest.fixture
def manual(kb: KB) -> str:
    """A 100-line source, registered."""
    (kb.root / "manual.md").write_text("\n".join(LINES) + "\n")
    return str(call(kb, "kb.register_source_from_path", {"path": "manual.md"})["id"])


def _cited_rows(citation: dict[str, Any]) -> list[int]:
    return [r["n"] for r in citation["excerpt"] if r["cited"]]


def _marker(out: str) -> list[tuple[int, int, int, str]]:
    """(count, first, last, command) of each `… N more cited lines (LA-LB): CMD`."""
    found = re.findall(
        r"… (\d+) more cited lines? \(L(\d+)(?:-L(\d+))?\): (vouch show [^\n]+)", out
    )
    return [(int(n), int(a), int(b or a), cmd) for n, a, b, cmd in found]


def test_a_long_span_is_cut_with_a_marker_naming_the_command_that_shows_the_rest(
    kb: KB, manual: str, run_cli
) -> None:
    ev = call(
        kb,
        "kb.register_evidence",
        {"source_id": manual, "locator": "L10-L90", "quote": "checks gate number 65."},
    )["id"]
    made = call(kb, "kb.propose_claim", {"text": LONG_TITLE, "evidence": [ev]}, actor=ALICE)
    [c] = call(kb, "kb.read_proposal", {"id": made["proposal_id"]})["citations"]
    first_part = list(range(10, 10 + MAX_CITED))
    assert _cited_rows(c) == [*first_part, 65]  # the quote's line, though past the cut
    left_out = [n for n in range(10, 91) if n not in first_part and n != 65]
    assert c["omitted"] == len(left_out)
    assert [(h["start"], h["end"]) for h in c["hidden"]] == [(10 + MAX_CITED, 64), (66, 90)]
    assert c["hidden"][0]["show"] == f"vouch show {manual[:12]} --content --lines 50-64"
    # every cited line is either shown or named by a marker: nothing is lost
    assert sorted(_cited_rows(c) + left_out) == list(range(10, 91))

    screen = run_cli("show", made["proposal_id"], cwd=kb.root)
    assert screen.code == 0, screen.err
    markers = _marker(screen.out)
    assert [(n, a, b) for n, a, b, _ in markers] == [(15, 50, 64), (25, 66, 90)]
    assert f"65 > {LINES[64]}" in screen.out
    assert " 68 > " not in screen.out and " 49 > " in screen.out  # the cut is where it says
    # the command the marker names prints exactly the lines left out, numbered
    rest = run_cli(*markers[1][3].split()[1:], cwd=kb.root)
    assert rest.code == 0, rest.err
    assert rest.out.splitlines() == [f"{n}  {LINES[n - 1]}" for n in range(66, 91)]
    md = run_cli("show", made["proposal_id"], "--format", "markdown", cwd=kb.root).out
    assert [(n, a, b) for n, a, b, _ in _marker(md)] == [(15, 50, 64), (25, 66, 90)]


def test_a_span_that_ends_the_source_is_never_cut_silently(kb: KB, manual: str, run_cli) -> None:
    """The screen used to mark a cut only before a context line after it; a span that
    ends at the source's last line has none, and its tail vanished without a word."""
    made = call(
        kb, "kb.propose_claim", {"text": "Gate 100 is last.", "evidence": [f"{manual}:L40-L100"]}
    )
    out = run_cli("show", made["proposal_id"], cwd=kb.root).out
    assert [(n, a, b) for n, a, b, _ in _marker(out)] == [(61 - MAX_CITED, 40 + MAX_CITED, 100)]


def test_a_short_span_is_shown_whole_without_a_marker(kb: KB, manual: str, run_cli) -> None:
    made = call(kb, "kb.propose_claim", {"text": "Gates 7-9.", "evidence": [f"{manual}:L7-L9"]})
    [c] = call(kb, "kb.read_proposal", {"id": made["proposal_id"]})["citations"]
    assert _cited_rows(c) == [7, 8, 9] and "hidden" not in c and "omitted" not in c
    assert "more cited line" not in run_cli("show", made["proposal_id"], cwd=kb.root).out


def test_why_quotes_each_span_gives_the_whole_title_and_the_whole_thread(
    kb: KB, manual: str, run_cli
) -> None:
    made = call(
        kb,
        "kb.propose_claim",
        {"text": "A draft", "evidence": [f"{manual}:L60-L70"], "rationale": "first reading"},
        actor=ALICE,
    )
    pid = made["proposal_id"]
    said = call(kb, "kb.comment_proposal", {"proposal_id": pid, "text": "cite L65 only"}, BOB)
    assert said["proposal_id"] == pid
    revised = call(
        kb,
        "kb.revise_proposal",
        {"proposal_id": pid, "text": LONG_TITLE, "rationale": "narrowed",
         "evidence": [f"{manual}:L65", f"{manual}:L1-L99"]},
        actor=ALICE,
    )  # fmt: skip
    assert revised["valid"], revised
    call(kb, "kb.read_proposal", {"id": pid}, actor=BOB)  # the reviewer's look pins it
    call(kb, "kb.approve", {"proposal_id": pid, "reason": "line 65 says so"}, actor=BOB)

    data = call(kb, "kb.why", {"id": revised["claim_id"]})
    assert data["title"] == LONG_TITLE  # not cut at 80 characters
    assert [r["revision"] for r in data["revisions"]] == [1, 2]
    assert [r["rationale"] for r in data["revisions"]] == ["first reading", "narrowed"]
    assert data["revisions"][0]["object_id"] == made["claim_id"] != revised["claim_id"]
    assert [c["text"] for c in data["comments"]] == ["cite L65 only"]
    one, long = data["evidence"]
    assert one["cite_path"] == "manual.md:L65"
    assert [(r["n"], r["text"]) for r in one["excerpt"]] == [(65, LINES[64])]
    assert long["omitted"] == 99 - MAX_CITED
    assert long["hidden"] == [
        {
            "start": 1 + MAX_CITED,
            "end": 99,
            "show": f"vouch show {manual[:12]} --content --lines {1 + MAX_CITED}-99",
        }
    ]

    out = run_cli("why", revised["claim_id"], cwd=kb.root).out
    assert LONG_TITLE in out
    thread = out.split("thread:")[1]
    order = [
        "revision 1",
        "why: first reading",
        "comment by",
        "cite L65 only",
        "revision 2",
        "why: narrowed",
        "approved by",
        "reason: line 65 says so",
    ]
    at = [thread.index(s) for s in order]
    assert at == sorted(at), thread
    assert f"65 > {LINES[64]}" in out  # the cited text itself, quoted
    assert [(n, a, b) for n, a, b, _ in _marker(out)] == [(99 - MAX_CITED, 1 + MAX_CITED, 99)]


def test_a_source_cited_whole_says_how_much_more_it_holds(kb: KB, manual: str, run_cli) -> None:
    """A source cited without a span is cited whole: its first lines are shown, and the
    rest is named with the command that prints it, never dropped without a word."""
    made = call(kb, "kb.propose_claim", {"text": "The manual lists gates.", "evidence": [manual]})
    [c] = call(kb, "kb.read_proposal", {"id": made["proposal_id"]})["citations"]
    assert _cited_rows(c) == [1, 2, 3, 4, 5] and c["lines"] == {"start": 1, "end": 100}
    assert c["omitted"] == 95 and c["hidden"][0]["show"].endswith("--content --lines 6-100")
    out = run_cli("show", made["proposal_id"], cwd=kb.root).out
    assert [(n, a, b) for n, a, b, _ in _marker(out)] == [(95, 6, 100)]
