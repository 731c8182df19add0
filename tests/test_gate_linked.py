"""Linked proposals (issue 18, point 3): objects that refer to pending objects are
proposed in one sitting; each records what it waits for; approving one alone is refused
naming what it waits for; `vouch approve A B C` lands them together, dependencies first,
all or none — and a hostile member of the set lands nothing."""

from __future__ import annotations

from conftest import git
from gate_support import ALICE, BOB, PERSON, a_source, call, head, proposed
from test_gate_hostile import edited_tree, rewrite, snapshot

from vouch.kinds import entity, relation
from vouch.store.kb import KB


def _linked(kb: KB) -> dict[str, dict]:
    """Two entities and the relation between them, proposed in one sitting."""
    a = proposed(kb, "kb.propose_entity", {"name": "requests", "type": "project"})
    b = proposed(kb, "kb.propose_entity", {"name": "urllib3", "type": "project"})
    rel = proposed(
        kb,
        "kb.propose_relation",
        {"source": a["entity_id"], "relation": "depends_on", "target": b["entity_id"],
         "evidence": [a_source(kb)]},
    )  # fmt: skip
    return {"a": a, "b": b, "rel": rel}


def test_a_relation_between_pending_entities_waits_and_lands_with_them(
    kb_with_sources: KB, run_cli
) -> None:
    kb = kb_with_sources
    made = _linked(kb)
    a, b, rel = made["a"], made["b"], made["rel"]
    assert rel["valid"] and rel["proposal_id"]
    assert {(w["id"], w["proposal_id"]) for w in rel["waits_for"]} == {
        (a["entity_id"], a["proposal_id"]),
        (b["entity_id"], b["proposal_id"]),
    }
    shown = run_cli("show", rel["proposal_id"], "--json", cwd=kb.root).json()
    assert {w["proposal_id"] for w in shown["waits_for"]} == {a["proposal_id"], b["proposal_id"]}
    assert shown["problems"] == []
    human = run_cli("show", rel["proposal_id"], cwd=kb.root).out
    assert f"approve them together: vouch approve {min(a['proposal_id'], b['proposal_id'])}" in (
        human
    )
    # alone: refused, naming the proposals it waits for; nothing changes
    before = snapshot(kb)
    alone = run_cli("approve", rel["proposal_id"], "--as", BOB, cwd=kb.root)
    assert alone.code == 1 and "E104" in alone.err
    assert f"is pending in proposal {a['proposal_id']}" in alone.err
    assert "does not exist" not in alone.err and "reject" not in alone.err
    assert snapshot(kb) == before
    # together, in any order given: dependencies land first, in one ref update
    tip = head(kb.root)
    res = run_cli(
        "approve", rel["proposal_id"], b["proposal_id"], a["proposal_id"], "--as", BOB,
        "--json", cwd=kb.root,
    )  # fmt: skip
    assert res.code == 0, res.err
    order = [r["proposal_id"] for r in res.json()]
    assert order[-1] == rel["proposal_id"] and set(order[:2]) == {
        a["proposal_id"],
        b["proposal_id"],
    }
    assert git(kb.root, "rev-list", "--count", "--first-parent", f"{tip}..HEAD").strip() == "3"
    reflog = git(kb.root, "reflog", "-2", "--format=%gs", "refs/heads/main").splitlines()
    assert reflog[0].startswith("vouch: approve ") and len(reflog[0].split()) == 5
    assert kb.read(relation.KIND, rel["relation_id"])["approved_by"] == PERSON
    assert kb.read(entity.KIND, a["entity_id"]) is not None
    assert call(kb, "kb.list_pending") == []


def test_all_or_none_when_one_of_them_is_hostile(kb_with_sources: KB, run_cli) -> None:
    kb = kb_with_sources
    made = _linked(kb)
    pid_b = made["b"]["proposal_id"]
    path = f".vouch/{entity.KIND.path_for(made['b']['entity_id'])}"
    forged = git(kb.root, "show", f"vouch/proposal/{pid_b}:{path}").replace("urllib3", "evil")
    rewrite(kb, pid_b, edited_tree(kb, pid_b, {path: forged.encode()}))
    before = snapshot(kb)
    res = run_cli(
        "approve", made["a"]["proposal_id"], pid_b, made["rel"]["proposal_id"], "--as", BOB,
        cwd=kb.root,
    )  # fmt: skip
    assert res.code == 1 and "E104" in res.err and pid_b in res.err
    assert snapshot(kb) == before  # the good entity did not land either
    assert len(call(kb, "kb.list_pending")) == 3


def test_messages_say_pending_or_nowhere_and_reject_says_who_waits(
    kb_with_sources: KB, run_cli
) -> None:
    kb = kb_with_sources
    nowhere = proposed(
        kb,
        "kb.propose_relation",
        {"source": "ghost-1a2b3c4d", "relation": "uses", "target": "spirit-5e6f7a8b"},
    )
    assert not nowhere["valid"]
    assert "relation source ghost-1a2b3c4d does not exist" in nowhere["errors"]
    made = _linked(kb)
    res = run_cli(
        "reject", made["a"]["proposal_id"], "--reason", "wrong name", "--as", BOB, "--json",
        cwd=kb.root,
    )  # fmt: skip
    assert res.code == 0, res.err
    assert res.json()["waited_on_by"] == [made["rel"]["proposal_id"]]
    human = run_cli("reject", made["b"]["proposal_id"], "--reason", "x", "--as", BOB, cwd=kb.root)
    assert "wait(s) for it" in human.out
    # what it waited for is gone: now it names an id that exists nowhere
    res = run_cli("approve", made["rel"]["proposal_id"], "--as", BOB, cwd=kb.root)
    assert res.code == 1 and "does not exist" in res.err


def test_a_page_lists_the_claim_proposed_with_it(kb_with_sources: KB, run_cli) -> None:
    kb = kb_with_sources
    sid = a_source(kb)
    claim = proposed(
        kb, "kb.propose_claim", {"text": "Deploys need two reviewers.", "evidence": [sid]}
    )
    page = proposed(
        kb,
        "kb.propose_page",
        {"title": "Deploy rules", "body": "Two reviewers.", "claims": [claim["claim_id"]]},
    )
    assert page["valid"] and page["waits_for"] == [
        {"id": claim["claim_id"], "proposal_id": claim["proposal_id"]}
    ]
    # the proposer of both cannot approve them, together or not
    res = run_cli("approve", page["proposal_id"], claim["proposal_id"], "--as", ALICE, cwd=kb.root)
    assert res.code == 1 and "cannot also approve" in res.err
    done = call(
        kb,
        "kb.approve",
        {"proposal_id": page["proposal_id"], "together": [claim["proposal_id"]]},
        actor=BOB,
    )
    assert [r["proposal_id"] for r in done["approved"]] == [
        claim["proposal_id"],
        page["proposal_id"],
    ]
    assert done["proposal_id"] == page["proposal_id"]
