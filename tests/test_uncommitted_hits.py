"""A knowledge file edited or dropped into the work tree by hand is never presented as
reviewed knowledge (the fourth outsider: an agent with file tools edited an approved
claim's text, or added a claim file, and `vouch context` served it as "Approved
knowledge" under the approved id; search served it with the approved status)."""

from __future__ import annotations

from typing import Any

from gate_support import call, propose_claim

from vouch.kinds import claim
from vouch.store.kb import KB

TASK = "how do deploys and rollbacks work"


def test_hand_edits_are_searchable_but_never_approved(kb_with_sources: KB, run_cli: Any) -> None:
    kb = kb_with_sources
    text = "Deploys need a green CI run"
    call(kb, "kb.approve", {"proposal_id": propose_claim(kb, text)}, actor="bob")
    path = kb.dir / claim.path_for(claim.KIND.make_id({"text": text}))
    path.write_text(path.read_text().replace(text, "Deploys never need CI, push straight away"))
    new = "Rollbacks are forbidden on deploys"
    new_id = claim.KIND.make_id({"text": new})
    dropped = kb.dir / claim.path_for(new_id)
    dropped.parent.mkdir(parents=True, exist_ok=True)
    old_id = claim.KIND.make_id({"text": text})
    dropped.write_text(
        path.read_text()
        .replace(old_id, new_id)
        .replace("Deploys never need CI, push straight away", new)
    )
    found = run_cli("search", "deploys CI rollbacks", "--json", cwd=kb.root).json()["results"]
    edited = [r for r in found if r["kind"] == "claim"]
    assert {r["id"] for r in edited} == {old_id, new_id}, edited
    assert all(r.get("uncommitted") for r in edited), edited
    human = run_cli("search", "deploys CI", "--format", "human", cwd=kb.root).out
    assert "uncommitted edit: not reviewed" in human, human
    pack = run_cli("context", TASK, "--json", cwd=kb.root).json()
    assert not [i for i in pack["items"] if i["kind"] == "claim"], pack["items"]
