"""A file's name may hold a line break (fourth outsider, row 41): a repository can commit
`docs/n⏎0123456789ab  file  approved-policy.md`, and its path printed raw made a fake
row in `vouch list sources` and split the evidence line of `show`, `why` and search.
Every human view writes a path or locator on one line (`oneline.escaped`); the JSON
keeps the real name."""

from __future__ import annotations

from pathlib import Path

from conftest import git
from gate_support import BOB, call, show

from vouch.store.kb import KB

NAME = "docs/n\n0123456789ab  file        approved-policy.md\x1b[2Jx.md"
SHOWN = "docs/n\\n0123456789ab  file        approved-policy.md\\x1b[2Jx.md"
FAKE = "0123456789ab"  # what would start a line of its own


def _cited(kb: KB) -> tuple[str, str, str]:
    """The file with a line break in its name, committed and registered; a claim citing
    its line 1, proposed and shown: (source id, proposal id, claim id)."""
    path = kb.root / NAME
    path.parent.mkdir(exist_ok=True)
    path.write_text("retry budget is five attempts\n")
    git(kb.root, "add", "--", NAME)
    git(kb.root, "commit", "-qm", "a file with a line break in its name")
    sid = call(kb, "kb.register_source_from_path", {"path": NAME})["id"]
    result = call(
        kb, "kb.propose_claim", {"text": "Retry budget is five.", "evidence": [f"{NAME}:L1"]}
    )
    assert result["valid"], result
    show(kb, result["proposal_id"])
    return sid, str(result["proposal_id"]), str(result["claim_id"])


def _no_fake_line(out: str) -> None:
    assert not [ln for ln in out.split("\n") if ln.lstrip().startswith(FAKE)], out
    assert "\x1b" not in out


def test_a_line_break_in_a_file_name_makes_no_line_of_its_own(kb: KB, run_cli) -> None:
    sid, pid, cid = _cited(kb)
    listed = run_cli("list", "sources", cwd=kb.root)
    assert listed.code == 0, listed.err
    _no_fake_line(listed.out)
    assert f"{sid[:12]}  file        {SHOWN}" in listed.out
    shown = run_cli("show", pid, cwd=kb.root)
    assert shown.code == 0, shown.err
    _no_fake_line(shown.out)
    assert f"{SHOWN}:L1 (evidence" in shown.out
    markdown = run_cli("show", pid, "--format", "markdown", cwd=kb.root)
    _no_fake_line(markdown.out)
    found = run_cli("search", "retry budget", cwd=kb.root)
    assert found.code == 0, found.err
    _no_fake_line(found.out)
    assert SHOWN in found.out
    context = run_cli("context", "retry budget", cwd=kb.root)  # nothing approved: passages
    assert context.code == 0, context.err
    _no_fake_line(context.out)
    assert SHOWN in context.out
    call(kb, "kb.approve", {"proposal_id": pid}, actor=BOB)
    why = run_cli("why", cid, cwd=kb.root)
    assert why.code == 0, why.err
    _no_fake_line(why.out)
    assert f"{SHOWN}:L1 (evidence" in why.out
    history = run_cli("source", "history", NAME, cwd=kb.root)
    assert history.code == 0, history.err
    _no_fake_line(history.out)


def test_json_keeps_the_real_name(kb: KB, run_cli) -> None:
    sid, pid, _ = _cited(kb)
    [row] = [r for r in run_cli("list", "sources", "--json", cwd=kb.root).json()["items"]]
    assert row["id"] == sid and row["locator"] == NAME
    read = run_cli("show", pid, "--json", cwd=kb.root).json()
    assert [c["cite_path"] for c in read["citations"]] == [f"{NAME}:L1"]
    assert Path(kb.root / NAME).exists()
