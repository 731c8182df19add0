"""A proposal's base branch is hostile input (finding G5): its `Vouch-Base` trailer decides
where a decision lands, so only an existing, well-formed branch outside refs/heads/vouch/
is accepted — and a decision lands exactly on the base `vouch show` displayed."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import git
from gate_support import ALICE, call, head, propose_claim, recommit, show

from vouch.gate import bases, records
from vouch.store.kb import KB, PROPOSAL_PREFIX


def _state(root: Path) -> tuple[str, str, str, str]:
    """HEAD, every ref, the status and the index: all a refused decision must leave."""
    return (
        git(root, "rev-parse", "HEAD"),
        git(root, "for-each-ref", "--format=%(refname) %(objectname)"),
        git(root, "status", "--porcelain", "--untracked-files=all"),
        git(root, "ls-files", "-s"),
    )


def _rebase_trailer(root: Path, pid: str, trailer: str, value: str) -> str:
    """The proposal rebuilt with plumbing (same tree, parent, author), one trailer's
    value replaced: the new commit."""
    ref = PROPOSAL_PREFIX + pid
    old = head(root, ref)
    message = git(root, "log", "-1", "--format=%B", old)
    lines = [
        f"{trailer}: {value}" if ln.startswith(trailer + ": ") else ln for ln in message.split("\n")
    ]
    assert lines != message.split("\n")
    name, email = git(root, "log", "-1", "--format=%an%n%ae", old).split("\n")[:2]
    return recommit(root, ref, "\n".join(lines), (name, email))[1]


@pytest.fixture
def two(kb_with_sources: KB) -> tuple[KB, str, str]:
    """Two open proposals by the agent: P (the attacker's, rebuilt by each test) and Q."""
    kb = kb_with_sources
    q = propose_claim(kb, "Q: rollbacks are rehearsed monthly", shown=False)
    p = propose_claim(kb, "P: deploys need a green CI run", shown=False)
    root = kb.root
    git(root, "tag", "x")  # refs that exist but are not branches
    git(root, "update-ref", "refs/remotes/origin/main", head(root))
    return kb, p, q


HOSTILE = [
    ("refs/heads/vouch/proposal/{q}", "inside refs/heads/vouch/"),
    ("refs/heads/Vouch/proposal/{q}", "inside refs/heads/vouch/"),  # case-folding disks
    ("refs/heads/staging", "does not exist in this clone"),
    ("refs/tags/x", "is not a branch"),
    ("refs/remotes/origin/main", "is not a branch"),
    ("main", "is not a branch"),
    ("refs/heads/ma~1", "not a well-formed branch name"),
    ("refs/heads/main:x", "not a well-formed branch name"),
    ("refs/heads/.lock", "not a well-formed branch name"),
    ("refs/heads/main.lock", "not a well-formed branch name"),
    ("refs/heads/main refs/heads/x", "not a well-formed branch name"),
    ("refs/heads/main^{commit}", "not a well-formed branch name"),
    ("refs/heads/-main", "not a well-formed branch name"),
    ("refs/heads/HEAD", "not a well-formed branch name"),
    ("refs/heads/a..b", "not a well-formed branch name"),
    ("refs/heads/main@{1}", "not a well-formed branch name"),
]


@pytest.mark.parametrize(("base", "why"), HOSTILE)
def test_a_hostile_base_is_refused_by_approve_reject_and_named_by_show(
    two: tuple[KB, str, str], run_cli, base: str, why: str
) -> None:
    kb, p, q = two
    root = kb.root
    base = base.replace("{q}", q)
    q_tip = head(root, PROPOSAL_PREFIX + q)
    new = _rebase_trailer(root, p, "Vouch-Base", base)
    before = _state(root)

    res = run_cli("show", p, "--json", cwd=root)
    assert res.code == 0, res.err
    data = res.json()
    assert data["base"] == base  # what the reviewer is told
    problems = " ".join(data["problems"])
    assert "approve would refuse it" in problems and why in problems, problems
    assert _state(root) == before  # a proposal with a problem is not pinned either

    for args in (("approve", p), ("reject", p, "--reason", "no")):
        res = run_cli(*args, "--expect", new, cwd=root)
        assert res.code == 1, (args, res.out, res.err)
        assert "E104" in res.err and "E200" not in res.err, res.err
        assert why in res.err and bases.shown(base)[:40] in res.err, res.err
        assert _state(root) == before
    # Q is still pending, untouched
    assert q in [r["proposal_id"] for r in call(kb, "kb.list_pending")]
    assert head(root, PROPOSAL_PREFIX + q) == q_tip


def test_a_base_that_is_another_proposal_never_swallows_it(
    two: tuple[KB, str, str], run_cli
) -> None:
    """The reported attack end to end: before, approve landed P on Q's branch, Q left
    `pending` and its claim never reached main."""
    kb, p, q = two
    root = kb.root
    q_tip = head(root, PROPOSAL_PREFIX + q)
    new = _rebase_trailer(root, p, "Vouch-Base", PROPOSAL_PREFIX + q)
    res = run_cli("approve", p, "--expect", new, cwd=root)
    assert res.code == 1 and "inside refs/heads/vouch/" in res.err, res.err
    assert head(root, PROPOSAL_PREFIX + q) == q_tip
    show(kb, q)
    assert run_cli("approve", q, cwd=root).code == 0
    assert git(root, "log", "-1", "--format=%s", "main").startswith("vouch: approve claim")


def test_an_existing_other_branch_is_where_it_lands_as_show_says(
    kb_with_sources: KB, run_cli
) -> None:
    """A base naming another existing branch (prod) lands there, never on the branch
    checked out: show says `onto prod`, and approve does exactly that."""
    kb = kb_with_sources
    root = kb.root
    main = head(root)
    git(root, "branch", "prod")
    pid = propose_claim(kb, "Prod deploys are frozen on Fridays", shown=False)
    new = _rebase_trailer(root, pid, "Vouch-Base", "refs/heads/prod")
    res = run_cli("show", pid, cwd=root)
    assert res.code == 0 and "onto prod" in res.out, res.out
    res = run_cli("approve", pid, cwd=root)
    assert res.code == 0, res.err
    assert head(root) == main  # main (checked out) did not move
    assert git(root, "rev-parse", "prod^2").strip() == new


def test_a_proposal_made_on_a_feature_branch_lands_there_from_another_checkout(
    kb_with_sources: KB, run_cli
) -> None:
    kb = kb_with_sources
    root = kb.root
    git(root, "checkout", "-qb", "feature")
    pid = propose_claim(kb, "Feature flags default to off", shown=False)
    git(root, "checkout", "-q", "main")
    main = head(root)
    res = run_cli("show", pid, cwd=root)
    assert res.code == 0 and "onto feature" in res.out, res.out
    res = run_cli("approve", pid, "--json", cwd=root)
    assert res.code == 0, res.err
    assert head(root) == main
    assert git(root, "rev-parse", "feature").strip() == res.json()["commit"]
    assert git(root, "status", "--porcelain") == ""
    assert not git(root, "for-each-ref", PROPOSAL_PREFIX + pid)


def test_a_base_commit_that_is_no_commit_id_is_refused_without_e200(
    two: tuple[KB, str, str], run_cli
) -> None:
    kb, p, _ = two
    root = kb.root
    for value in ("--help", "main refs/heads/x", "HEAD~1", "main"):
        new = _rebase_trailer(root, p, "Vouch-Base-Commit", value)
        assert records.find(kb, p).base_commit == ""
        before = _state(root)
        res = run_cli("show", p, "--json", cwd=root)
        assert res.code == 0, res.err
        assert "not a line of vouch revisions" in " ".join(res.json()["problems"])
        res = run_cli("approve", p, "--expect", new, cwd=root)
        assert res.code == 1 and "E104" in res.err and "E200" not in res.err, res.err
        assert _state(root) == before


def test_revise_refuses_a_proposal_without_a_base_commit(two: tuple[KB, str, str]) -> None:
    from vouch.errors import GateRefused

    kb, p, _ = two
    _rebase_trailer(kb.root, p, "Vouch-Base-Commit", "main refs/heads/x")
    before = _state(kb.root)
    with pytest.raises(GateRefused, match="names no base commit"):
        call(kb, "kb.revise_proposal", {"proposal_id": p, "text": "Another text"}, actor=ALICE)
    assert _state(kb.root) == before


def test_revise_with_a_hostile_base_does_not_crash(two: tuple[KB, str, str]) -> None:
    kb, p, _ = two
    _rebase_trailer(kb.root, p, "Vouch-Base", "refs/heads/main refs/heads/x")
    result = call(kb, "kb.revise_proposal", {"proposal_id": p, "text": "Another text"}, actor=ALICE)
    assert result["valid"], result  # revised on its base commit; approve still refuses it


def test_the_object_reader_answers_missing_for_any_hostile_name(kb: KB) -> None:
    """Names from trailers reach cat-file: spaces, newlines and NULs are missing
    objects, never a crash (E200) nor a desynchronised pipe naming another object."""
    store = kb.repo.store
    tip = head(kb.root)
    hostile = [
        "refs/heads/main refs/heads/x",
        "main 12",
        "HEAD\nHEAD",
        "HEAD\0junk",
        "HEAD\r",
        "x missing 12",
    ]
    for name in hostile:
        assert store.info(name) is None, name
        assert store.read(name) is None, name
        assert kb.repo.peek(name) is None, name
        assert store.info("HEAD") == (tip, "commit")  # still in step
    got = store.info_many(["HEAD", *hostile, "HEAD"])
    assert got == [(tip, "commit"), *[None] * len(hostile), (tip, "commit")]
    read = store.read_many([*hostile, "HEAD"])
    assert read[:-1] == [None] * len(hostile) and read[-1] is not None


@pytest.mark.parametrize(
    "name",
    ["main", "feature/x", "release-1.2", "a.b", "ünï/çødé", "x@y", "v1"],
)
def test_well_formed_branches_are_accepted(name: str) -> None:
    assert bases.well_formed_branch("refs/heads/" + name)


@pytest.mark.parametrize(
    "name",
    [
        "",
        "a b",
        "a\tb",
        "a\x7fb",
        "a/",
        "/a",
        "a//b",
        "a.",
        ".a",
        "a/.b",
        "a?",
        "a*",
        "a[",
        "a\\b",
        "@",
        "a\u2028b",
    ],
)
def test_malformed_branches_are_refused(name: str) -> None:
    assert not bases.well_formed_branch("refs/heads/" + name)
