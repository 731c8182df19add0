"""`vouch impact ID` (issue 38 item 6): what rests on an object, read from the branch's
approved knowledge, before a supersede, an archive or a delete is decided."""

from __future__ import annotations

from typing import Any

import pytest
from gate_support import BOB, a_source, call, show

from vouch.errors import InvalidId, NotFound
from vouch.store.kb import KB


def _approved(kb: KB, method: str, params: dict[str, Any], field: str) -> str:
    result = call(kb, method, params)
    assert result["valid"], result
    show(kb, result["proposal_id"])
    call(kb, "kb.approve", {"proposal_id": result["proposal_id"]}, actor=BOB)
    return str(result[field])


def test_what_rests_on_a_source_and_on_a_claim(kb_with_sources: KB, run_cli: Any) -> None:
    kb = kb_with_sources
    sid = a_source(kb)
    spanned = _approved(
        kb, "kb.propose_claim", {"text": "Deploys need CI", "evidence": [f"{sid}:L1"]}, "claim_id"
    )
    whole = _approved(
        kb, "kb.propose_claim", {"text": "There is a runbook", "evidence": [sid]}, "claim_id"
    )
    page = _approved(
        kb,
        "kb.propose_page",
        {"title": "Deploying", "body": "# Deploying\n\nSee the runbook.\n", "claims": [spanned]},
        "page_id",
    )
    newer = _approved(
        kb, "kb.propose_claim", {"text": "Deploys need two CI runs", "evidence": [sid]}, "claim_id"
    )
    call(kb, "kb.supersede", {"old_id": spanned, "new_id": newer, "reason": "two now"}, actor=BOB)

    on_source = call(kb, "kb.impact", {"id": sid})
    by = {(r["kind"], r["id"]): r for r in on_source["referenced_by"]}
    assert on_source["kind"] == "source"
    assert by[("claim", whole)]["field"] == "evidence" and "through" not in by[("claim", whole)]
    assert by[("claim", spanned)]["through"].startswith("evidence-")  # through the span
    assert ("claim", newer) in by and on_source["counts"]["evidence"] == 1
    assert ("page", page) not in by  # the page lists the claim, not the source

    on_claim = call(kb, "kb.impact", {"id": spanned})
    fields = {(r["kind"], r["id"]): r["field"] for r in on_claim["referenced_by"]}
    assert fields == {("page", page): "claims", ("claim", newer): "supersedes"}
    assert on_claim["counts"] == {"claim": 1, "page": 1}

    shown = run_cli("impact", spanned, "--format", "human", cwd=kb.root)
    assert shown.code == 0
    assert f"page {page} [active] (claims): Deploying" in shown.out
    assert call(kb, "kb.impact", {"id": page})["referenced_by"] == []


def test_an_unknown_or_malformed_id_is_a_clear_error(kb_with_sources: KB) -> None:
    with pytest.raises(NotFound):
        call(kb_with_sources, "kb.impact", {"id": "no-such-claim-00000000"})
    with pytest.raises(InvalidId):
        call(kb_with_sources, "kb.impact", {"id": "../../etc/passwd"})
