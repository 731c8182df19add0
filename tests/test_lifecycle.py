"""Lifecycle changes to approved knowledge: supersede, contradict, archive, confirm, cite,
promote — direct audited commits that edit the committed file in place, are reflected in
search at once, refuse what breaks the object model (changing nothing), and are a
reviewer's call over the agent transports."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import _copy_template, _template, git, hermetic
from gate_support import ALICE, BOB, call, head, propose_claim, proposed, vouch_forked, vouch_proc

from vouch.core import ids
from vouch.errors import Conflict, GateRefused, InvalidId, NotFound, ValidationFailed
from vouch.gate import lifecycle
from vouch.kinds import claim as claim_kind
from vouch.kinds import page as page_kind
from vouch.methods import registry as ops
from vouch.methods.context import CallContext
from vouch.servers import jsonl, server_context
from vouch.store import journal
from vouch.store.kb import KB

TEXTS = (
    "Deploys need a green CI run",
    "Deploys need two green CI runs",
    "Deploys need three green CI runs",
    "Deploys never need a CI run",
)


def approve_claims(kb: KB, *texts: str) -> list[str]:
    """Claims proposed by alice and approved by bob: approved knowledge on main."""
    out = []
    for text in texts:
        pid = propose_claim(kb, text, actor=ALICE)
        out.append(call(kb, "kb.approve", {"proposal_id": pid}, actor=BOB)["object_id"])
    return out


_BUILT: dict[str, tuple[Path, list[str]]] = {}


@pytest.fixture
def repo(tmp_path: Path, request: pytest.FixtureRequest) -> Path:
    """conftest's `repo`; for a test that asks for `claims`, a copy of a knowledge base
    whose TEXTS were approved once per test process (four approvals per test otherwise:
    a quarter of this file's time)."""
    path = tmp_path / "repo"
    if "claims" not in request.fixturenames:
        stage = "kb_with_sources" if "kb_with_sources" in request.fixturenames else "kb"
        _copy_template(request, stage, path)
        return path
    if "claims" not in _BUILT:
        factory = request.getfixturevalue("tmp_path_factory")
        with hermetic(factory, "lifecycle-claims") as root:
            shutil.rmtree(root)
            shutil.copytree(_template(request, "kb_with_sources"), root, symlinks=True)
            git(root, "update-index", "-q", "--refresh")
            _BUILT["claims"] = (root, approve_claims(KB.open(root), *TEXTS))
            shutil.rmtree(root / ".vouch" / "index", ignore_errors=True)  # names its folder
    shutil.copytree(_BUILT["claims"][0], path, symlinks=True)
    git(path, "update-index", "-q", "--refresh")
    return path


@pytest.fixture
def claims(kb_with_sources: KB) -> list[str]:
    return list(_BUILT["claims"][1])


def read(kb: KB, claim_id: str) -> dict[str, Any]:
    found = kb.read(claim_kind.KIND, claim_id)
    assert found is not None
    return found


def state(kb: KB) -> tuple[str, str, str]:
    """HEAD, the audit log and the work tree status: what 'nothing written' keeps."""
    return (
        head(kb.root),
        (kb.dir / "audit.log.jsonl").read_text(),
        git(kb.root, "status", "--porcelain"),
    )


def last_event(kb: KB) -> dict[str, Any]:
    return call(kb, "kb.audit", {"tail": 1})[0]


def search_ids(kb: KB, query: str, **params: Any) -> list[str]:
    hits = call(kb, "kb.search", {"query": query, "mode": "fts", "kinds": ["claim"], **params})
    return [h["id"] for h in hits]


# -- supersede ----------------------------------------------------------------------------
def test_supersede_edits_both_claims_in_one_audited_commit(
    kb_with_sources: KB, claims: list[str]
) -> None:
    kb = kb_with_sources
    old, new = claims[0], claims[1]
    before = head(kb.root)
    result = call(kb, "kb.supersede", {"old_id": old, "new_id": new, "reason": "two now"})
    assert result["changed"] and result["event"] == "claim.supersede"
    assert git(kb.root, "rev-list", "--count", f"{before}..HEAD").strip() == "1"
    assert git(kb.root, "rev-parse", "HEAD").strip() == result["commit"]
    assert read(kb, old)["status"] == "superseded"
    assert read(kb, old)["superseded_by"] == new
    assert read(kb, new)["supersedes"] == [old]
    assert read(kb, new)["status"] == "working"
    event = last_event(kb)
    assert (event["event"], event["actor"], event["object_ids"]) == (
        "claim.supersede",
        ALICE,
        [old, new],
    )
    assert event["data"]["reason"] == "two now"
    message = git(kb.root, "log", "-1", "--format=%B")
    assert "Vouch-Event: claim.supersede" in message and "Vouch-Reason: two now" in message
    assert git(kb.root, "status", "--porcelain", "--", ".vouch") == ""


def test_supersede_keeps_the_files_comments_and_formatting(
    kb_with_sources: KB, claims: list[str]
) -> None:
    kb = kb_with_sources
    path = kb.path_of(claim_kind.KIND, claims[0])
    text = path.read_text()
    edited = "# reviewed in the March audit\n" + text.replace(
        "type: observation", "type: observation   # a person's note"
    )
    path.write_text(edited)
    git(kb.root, "commit", "-qam", "annotate a claim")
    call(kb, "kb.supersede", {"old_id": claims[0], "new_id": claims[1]})
    after = path.read_text()
    assert after.startswith("# reviewed in the March audit\n")
    assert "type: observation   # a person's note" in after
    assert "status: superseded" in after


def test_supersede_is_reflected_in_search_at_once(kb_with_sources: KB, claims: list[str]) -> None:
    kb = kb_with_sources
    assert claims[0] in search_ids(kb, "green CI run")
    call(kb, "kb.supersede", {"old_id": claims[0], "new_id": claims[1]})
    found = search_ids(kb, "green CI run")
    assert claims[0] not in found and claims[1] in found
    assert claims[0] in search_ids(kb, "green CI run", statuses=["superseded"])


def test_supersede_twice_is_a_no_op_that_says_so(kb_with_sources: KB, claims: list[str]) -> None:
    kb = kb_with_sources
    call(kb, "kb.supersede", {"old_id": claims[0], "new_id": claims[1]})
    before = state(kb)
    again = call(kb, "kb.supersede", {"old_id": claims[0], "new_id": claims[1]})
    assert again["changed"] is False and again["commit"] is None
    assert "already superseded" in again["message"]
    assert state(kb) == before


@pytest.mark.parametrize("chain", [[(0, 1)], [(0, 1), (1, 2)]])
def test_supersede_cycles_are_refused(
    kb_with_sources: KB, claims: list[str], chain: list[tuple[int, int]]
) -> None:
    kb = kb_with_sources
    for old, new in chain:
        call(kb, "kb.supersede", {"old_id": claims[old], "new_id": claims[new]})
    before = state(kb)
    last = chain[-1][1]
    with pytest.raises(ValidationFailed, match="cycle") as err:
        call(kb, "kb.supersede", {"old_id": claims[last], "new_id": claims[0]})
    assert err.value.code == "E102"
    assert state(kb) == before


def test_a_cycle_held_only_in_supersedes_lists_is_found(
    kb_with_sources: KB, claims: list[str]
) -> None:
    """A hand-edited history may record only one side of a supersession."""
    kb = kb_with_sources
    path = kb.path_of(claim_kind.KIND, claims[1])
    path.write_text(claim_kind.KIND.edit(path.read_text(), {"supersedes": [claims[0]]}))
    git(kb.root, "commit", "-qam", "hand-edited history")
    with pytest.raises(ValidationFailed, match="cycle"):
        call(kb, "kb.supersede", {"old_id": claims[1], "new_id": claims[0]})


def test_supersede_refusals_name_every_problem(kb_with_sources: KB, claims: list[str]) -> None:
    kb = kb_with_sources
    call(kb, "kb.supersede", {"old_id": claims[0], "new_id": claims[1]})
    before = state(kb)
    with pytest.raises(ValidationFailed, match="itself"):
        call(kb, "kb.supersede", {"old_id": claims[2], "new_id": claims[2]})
    with pytest.raises(ValidationFailed, match=f"already superseded by {claims[1]}"):
        call(kb, "kb.supersede", {"old_id": claims[0], "new_id": claims[2]})
    with pytest.raises(ValidationFailed, match=r"replacement .* is superseded"):
        call(kb, "kb.supersede", {"old_id": claims[2], "new_id": claims[0]})
    assert state(kb) == before


def test_only_approved_objects_on_the_branch_change(kb_with_sources: KB, claims: list[str]) -> None:
    kb = kb_with_sources
    pid = propose_claim(kb, "A pending claim about deploys", actor=ALICE)
    pending = call(kb, "kb.read_proposal", {"id": pid})["object_id"]
    before = state(kb)
    with pytest.raises(NotFound, match="not an approved claim") as err:
        call(kb, "kb.supersede", {"old_id": claims[0], "new_id": pending})
    assert err.value.code == "E101" and pid in str(err.value.hint)
    with pytest.raises(NotFound):
        call(kb, "kb.archive", {"id": "no-such-claim-0badc0de"})
    with pytest.raises(InvalidId):
        call(kb, "kb.confirm", {"id": "../../etc/passwd"})
    with pytest.raises(NotFound, match="proposal id"):
        call(kb, "kb.confirm", {"id": pid})
    assert state(kb) == before


def test_uncommitted_edits_to_the_claim_are_never_clobbered(
    kb_with_sources: KB, claims: list[str]
) -> None:
    kb = kb_with_sources
    path = kb.path_of(claim_kind.KIND, claims[0])
    path.write_text(path.read_text() + "# my uncommitted note\n")
    before = state(kb)
    with pytest.raises(Conflict):
        call(kb, "kb.archive", {"id": claims[0]})
    assert state(kb) == before
    assert path.read_text().endswith("# my uncommitted note\n")


# -- contradict ---------------------------------------------------------------------------
def test_contradiction_is_symmetric_and_contests_both(
    kb_with_sources: KB, claims: list[str]
) -> None:
    kb = kb_with_sources
    a, b = claims[0], claims[3]
    result = call(kb, "kb.contradict", {"a_id": a, "b_id": b, "reason": "CI or not?"})
    assert result["changed"]
    assert read(kb, a)["contradicts"] == [b] and read(kb, b)["contradicts"] == [a]
    assert read(kb, a)["status"] == read(kb, b)["status"] == "contested"
    assert last_event(kb)["event"] == "claim.contradict"
    before = state(kb)
    again = call(kb, "kb.contradict", {"a_id": b, "b_id": a})
    assert again["changed"] is False and "already contradict" in again["message"]
    assert state(kb) == before


def test_a_stable_claim_stays_stable_when_contradicted(
    kb_with_sources: KB, claims: list[str]
) -> None:
    kb = kb_with_sources
    call(kb, "kb.promote", {"id": claims[0], "status": "stable"}, actor="carol")
    call(kb, "kb.contradict", {"a_id": claims[0], "b_id": claims[3]})
    assert read(kb, claims[0])["status"] == "stable"
    assert read(kb, claims[3])["status"] == "contested"
    assert read(kb, claims[0])["contradicts"] == [claims[3]]


def test_a_one_sided_contradiction_is_made_symmetric(
    kb_with_sources: KB, claims: list[str]
) -> None:
    kb = kb_with_sources
    path = kb.path_of(claim_kind.KIND, claims[0])
    path.write_text(claim_kind.KIND.edit(path.read_text(), {"contradicts": [claims[3]]}))
    git(kb.root, "commit", "-qam", "one side only")
    result = call(kb, "kb.contradict", {"a_id": claims[0], "b_id": claims[3]})
    assert result["changed"]
    assert read(kb, claims[3])["contradicts"] == [claims[0]]


def test_retired_claims_contradict_nothing(kb_with_sources: KB, claims: list[str]) -> None:
    kb = kb_with_sources
    call(kb, "kb.archive", {"id": claims[0]})
    before = state(kb)
    with pytest.raises(ValidationFailed, match="archived"):
        call(kb, "kb.contradict", {"a_id": claims[0], "b_id": claims[3]})
    with pytest.raises(ValidationFailed, match="itself"):
        call(kb, "kb.contradict", {"a_id": claims[3], "b_id": claims[3]})
    assert state(kb) == before


# -- archive ------------------------------------------------------------------------------
def test_archive_hides_a_claim_and_says_when_it_already_is(
    kb_with_sources: KB, claims: list[str]
) -> None:
    kb = kb_with_sources
    assert claims[3] in search_ids(kb, "never need")
    result = call(kb, "kb.archive", {"id": claims[3], "reason": "obsolete"})
    assert result["changed"] and read(kb, claims[3])["status"] == "archived"
    assert claims[3] not in search_ids(kb, "never need")
    assert last_event(kb)["event"] == "claim.archive"
    before = state(kb)
    again = call(kb, "kb.archive", {"id": claims[3]})
    assert again["changed"] is False and "already archived" in again["message"]
    assert state(kb) == before


def test_archive_a_page(kb_with_sources: KB) -> None:
    kb = kb_with_sources
    result = proposed(kb, "kb.propose_page", {"title": "Deploy handbook", "body": "## Steps\n"})
    page_id = call(kb, "kb.approve", {"proposal_id": result["proposal_id"]}, actor=BOB)["object_id"]
    archived = call(kb, "kb.archive", {"id": page_id})
    assert archived["event"] == "page.archive"
    page = kb.read(page_kind.KIND, page_id)
    assert page is not None and page["status"] == "archived"
    assert page["body"].startswith("## Steps")


def test_a_superseded_claim_is_not_archived(kb_with_sources: KB, claims: list[str]) -> None:
    kb = kb_with_sources
    call(kb, "kb.supersede", {"old_id": claims[0], "new_id": claims[1]})
    with pytest.raises(ValidationFailed, match="out of use"):
        call(kb, "kb.archive", {"id": claims[0]})


# -- confirm ------------------------------------------------------------------------------
def test_confirm_sets_last_confirmed_at_and_moves_no_status(
    kb_with_sources: KB, claims: list[str]
) -> None:
    kb = kb_with_sources
    before = read(kb, claims[0])
    assert "last_confirmed_at" not in before
    result = call(kb, "kb.confirm", {"id": claims[0]})
    after = read(kb, claims[0])
    assert result["changed"] and after["last_confirmed_at"] >= before["created_at"]
    assert after["status"] == before["status"] == "working"
    assert after.get("updated_at") == before.get("updated_at")
    assert last_event(kb)["event"] == "claim.confirm"


def test_a_retired_claim_is_not_confirmed(kb_with_sources: KB, claims: list[str]) -> None:
    kb = kb_with_sources
    call(kb, "kb.supersede", {"old_id": claims[0], "new_id": claims[1]})
    with pytest.raises(ValidationFailed, match=f"superseded by {claims[1]}"):
        call(kb, "kb.confirm", {"id": claims[0]})


# -- cite ---------------------------------------------------------------------------------
def _source(kb: KB, title: str) -> str:
    return str(call(kb, "kb.list_sources", {"filter": {"title": title}})[0]["id"])


def test_cite_a_source_an_evidence_id_and_a_pointer(kb_with_sources: KB, claims: list[str]) -> None:
    kb = kb_with_sources
    other = next(r["id"] for r in call(kb, "kb.list_sources") if r["title"] != "deploy-runbook.md")
    result = call(kb, "kb.cite", {"id": claims[0], "evidence": other})
    assert result["changed"] and other in read(kb, claims[0])["evidence"]
    assert last_event(kb)["data"]["evidence"] == other

    before = head(kb.root)
    pointer = f"{other}:L1-L2"
    made = call(kb, "kb.cite", {"id": claims[0], "evidence": pointer})
    cited = read(kb, claims[0])["evidence"][-1]
    assert ids.is_object_id(cited) and made["changed"]
    changed = git(kb.root, "diff", "--name-only", before, "HEAD").split()
    assert any(p.startswith(".vouch/evidence/") and cited in p for p in changed)
    assert git(kb.root, "rev-list", "--count", f"{before}..HEAD").strip() == "1"
    assert last_event(kb)["object_ids"] == [claims[0], cited]  # the new evidence too

    again = call(kb, "kb.cite", {"id": claims[1], "evidence": cited})  # an evidence id
    assert again["changed"] and cited in read(kb, claims[1])["evidence"]
    state_before = state(kb)
    same = call(kb, "kb.cite", {"id": claims[1], "evidence": cited})
    assert same["changed"] is False and "already cites" in same["message"]
    assert state(kb) == state_before


@pytest.mark.parametrize(
    "bad, words",
    [
        ("0" * 64, "not registered"),
        ("no-such-evidence-0badc0de", "does not exist"),
        ("not an id at all", "is not a source id"),
        ("SRC:L900-L990", "outside"),
    ],
)
def test_cite_refuses_what_it_cannot_verify(
    kb_with_sources: KB, claims: list[str], bad: str, words: str
) -> None:
    kb = kb_with_sources
    bad = bad.replace("SRC", _source(kb, "deploy-runbook.md"))
    before = state(kb)
    with pytest.raises(ValidationFailed, match=words):
        call(kb, "kb.cite", {"id": claims[0], "evidence": bad})
    assert state(kb) == before


def test_cite_refuses_a_superseded_source_version(kb_with_sources: KB, claims: list[str]) -> None:
    kb = kb_with_sources
    first = call(kb, "kb.register_source", {"content": "version one\n", "locator": "n.md"})
    second = call(kb, "kb.register_source", {"content": "version two\n", "locator": "n.md"})
    with pytest.raises(ValidationFailed, match=f"current version {second['id']}"):
        call(kb, "kb.cite", {"id": claims[0], "evidence": first["id"]})
    with pytest.raises(ValidationFailed, match="superseded version"):
        call(kb, "kb.cite", {"id": claims[0], "evidence": f"{first['id']}:L1"})
    assert call(kb, "kb.cite", {"id": claims[0], "evidence": second["id"]})["changed"]


# -- promote: working → actionable → stable -----------------------------------------------
def test_promotion_climbs_the_ladder_one_rung_at_a_time(
    kb_with_sources: KB, claims: list[str]
) -> None:
    kb = kb_with_sources
    assert read(kb, claims[0])["status"] == "working"
    first = call(kb, "kb.promote", {"id": claims[0]}, actor="carol")
    assert read(kb, claims[0])["status"] == "actionable"
    assert first["event"] == "claim.promote"
    data = last_event(kb)["data"]
    assert data["from"] == "working" and data["to"] == "actionable"
    assert list(data) == ["from", "to", "blobs"]  # and the bytes it left (vouch.gate.seals)
    call(kb, "kb.promote", {"id": claims[0], "reason": "held for a quarter"}, actor="carol")
    assert read(kb, claims[0])["status"] == "stable"
    assert claims[0] in search_ids(kb, "green CI run", statuses=["stable"])
    before = state(kb)
    top = call(kb, "kb.promote", {"id": claims[0]}, actor="carol")
    assert top["changed"] is False and "already stable" in top["message"]
    with pytest.raises(ValidationFailed, match="only moves up"):
        call(kb, "kb.promote", {"id": claims[0], "status": "actionable"}, actor="carol")
    assert state(kb) == before


def test_promote_straight_to_stable(kb_with_sources: KB, claims: list[str]) -> None:
    kb = kb_with_sources
    call(kb, "kb.promote", {"id": claims[1], "status": "stable"}, actor=BOB)
    assert read(kb, claims[1])["status"] == "stable"


def test_nobody_promotes_their_own_claim(kb_with_sources: KB, claims: list[str]) -> None:
    kb = kb_with_sources
    before = state(kb)
    with pytest.raises(GateRefused, match="cannot also promote"):
        call(kb, "kb.promote", {"id": claims[0]}, actor=ALICE)
    assert state(kb) == before
    config = kb.dir / "config.yaml"
    config.write_text(
        config.read_text().replace("approver_role: human", "approver_role: trusted-agent")
    )
    with pytest.raises(GateRefused):  # an uncommitted setting does not count
        call(kb, "kb.promote", {"id": claims[0]}, actor=ALICE)
    git(kb.root, "commit", "-qam", "trusted agents")
    assert call(kb, "kb.promote", {"id": claims[0]}, actor=ALICE)["changed"]


def test_a_contested_claim_is_promoted_once_its_contradiction_is_resolved(
    kb_with_sources: KB, claims: list[str]
) -> None:
    kb = kb_with_sources
    call(kb, "kb.contradict", {"a_id": claims[0], "b_id": claims[3]})
    with pytest.raises(ValidationFailed, match=f"contested by {claims[3]}"):
        call(kb, "kb.promote", {"id": claims[0]}, actor="carol")
    call(kb, "kb.archive", {"id": claims[3], "reason": "wrong"})
    call(kb, "kb.promote", {"id": claims[0]}, actor="carol")
    assert read(kb, claims[0])["status"] == "actionable"
    assert read(kb, claims[0])["contradicts"] == [claims[3]]


def test_retired_claims_are_not_promoted(kb_with_sources: KB, claims: list[str]) -> None:
    kb = kb_with_sources
    call(kb, "kb.archive", {"id": claims[2]})
    with pytest.raises(ValidationFailed, match="only live claims"):
        call(kb, "kb.promote", {"id": claims[2]}, actor="carol")


# -- the CLI ------------------------------------------------------------------------------
def test_cli_verbs(kb_with_sources: KB, claims: list[str], run_cli) -> None:
    kb = kb_with_sources
    res = run_cli("supersede", claims[0], claims[1], "--reason", "two runs", cwd=kb.root)
    assert res.code == 0, res.err
    assert res.out.startswith(f"claim {claims[0]} is superseded by {claims[1]} (commit ")
    res = run_cli("supersede", claims[0], claims[1], cwd=kb.root)
    assert res.code == 0 and "nothing changed" in res.out
    res = run_cli("contradict", claims[2], claims[3], "--json", cwd=kb.root)
    assert res.code == 0 and res.json()["event"] == "claim.contradict"
    assert run_cli("confirm", claims[1], cwd=kb.root).code == 0
    src = _source(kb, "deploy-runbook.md")
    assert run_cli("cite", claims[1], f"{src}:L1", cwd=kb.root).code == 0
    res = run_cli("--as", "carol", "promote", claims[1], "--status", "stable", cwd=kb.root)
    assert res.code == 0 and "to stable" in res.out
    assert run_cli("archive", claims[1], "--reason", "gone", cwd=kb.root).code == 0
    events = [e["event"] for e in call(kb, "kb.audit", {"tail": 6})]
    assert events == [
        "claim.supersede",
        "claim.contradict",
        "claim.confirm",
        "claim.cite",
        "claim.promote",
        "claim.archive",
    ]


def test_cli_bad_input_is_a_clear_error_and_writes_nothing(
    kb_with_sources: KB, claims: list[str], run_cli
) -> None:
    kb = kb_with_sources
    before = state(kb)
    res = run_cli("supersede", claims[0], claims[0], "--json", cwd=kb.root)
    assert res.code == 1 and res.json()["error"]["code"] == "E102"
    res = run_cli("archive", "nope-00000000", cwd=kb.root)
    assert res.code == 1 and "error[E101]" in res.err
    res = run_cli("promote", claims[0], "--status", "archived", cwd=kb.root)
    assert res.code == 1 and "error[E100]" in res.err
    res = run_cli("cite", claims[0], cwd=kb.root)
    assert res.code == 1
    assert state(kb) == before


# -- who may: agents over JSONL -----------------------------------------------------------
def _jsonl(
    kb: KB, method: str, params: dict[str, Any], *, allow_decisions: bool = False
) -> dict[str, Any]:
    ctx = server_context("jsonl", kb_path=str(kb.dir), allow_decisions=allow_decisions)
    line = json.dumps({"id": 1, "method": method, "params": params}).encode()
    return jsonl.handle_line(ctx, line)


def _allow_agents(kb: KB, *, commit: bool = True) -> None:
    config = kb.dir / "config.yaml"
    config.write_text(config.read_text().replace("agent_lifecycle: false", "agent_lifecycle: true"))
    if commit:
        git(kb.root, "commit", "-qam", "let agents change approved knowledge")


LIFECYCLE_CALLS = [
    ("kb.supersede", lambda c: {"old_id": c[0], "new_id": c[1]}),
    ("kb.contradict", lambda c: {"a_id": c[2], "b_id": c[3]}),
    ("kb.archive", lambda c: {"id": c[3]}),
    ("kb.confirm", lambda c: {"id": c[1]}),
    ("kb.cite", lambda c: {"id": c[1], "evidence": c[1]}),
]


@pytest.mark.parametrize("method, params", LIFECYCLE_CALLS, ids=[m for m, _ in LIFECYCLE_CALLS])
def test_agents_are_refused_lifecycle_changes_by_default(
    kb_with_sources: KB,
    claims: list[str],
    monkeypatch: pytest.MonkeyPatch,
    method: str,
    params: Any,
) -> None:
    kb = kb_with_sources
    monkeypatch.setenv("VOUCH_AGENT", "helper-bot")
    before = state(kb)
    response = _jsonl(kb, method, params(claims), allow_decisions=True)
    assert response["ok"] is False
    assert response["error"]["vouch_code"] == "E104"
    assert "config" not in response["error"]["hint"]  # no way around review suggested
    assert state(kb) == before


def test_agents_change_approved_knowledge_when_the_committed_config_allows(
    kb_with_sources: KB, claims: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    kb = kb_with_sources
    monkeypatch.setenv("VOUCH_AGENT", "helper-bot")
    _allow_agents(kb, commit=False)  # the work tree says yes; the branch does not
    response = _jsonl(kb, "kb.archive", {"id": claims[3]})
    assert response["ok"] is False and response["error"]["vouch_code"] == "E104"
    git(kb.root, "commit", "-qam", "let agents change approved knowledge")
    response = _jsonl(
        kb,
        "kb.supersede",
        {"old_id": claims[0], "new_id": claims[1], "reason": "agent saw the new runbook"},
    )
    assert response["ok"], response
    assert last_event(kb)["actor"] == "helper-bot"
    assert read(kb, claims[0])["status"] == "superseded"


def test_agents_without_a_declared_name_still_only_read(
    kb_with_sources: KB, claims: list[str]
) -> None:
    kb = kb_with_sources
    _allow_agents(kb)
    response = _jsonl(kb, "kb.confirm", {"id": claims[0]})
    assert response["ok"] is False and response["error"]["vouch_code"] == "E104"
    assert "VOUCH_AGENT" in response["error"]["hint"]


def test_promotion_over_jsonl_is_a_decision(
    kb_with_sources: KB, claims: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    kb = kb_with_sources
    monkeypatch.setenv("VOUCH_AGENT", "helper-bot")
    _allow_agents(kb)  # lifecycle permission is not a decision permission
    refused = _jsonl(kb, "kb.promote", {"id": claims[0]})
    assert refused["ok"] is False and refused["error"]["vouch_code"] == "E104"
    assert "vouch approve" in refused["error"]["hint"]  # a person decides; no way around
    allowed = _jsonl(kb, "kb.promote", {"id": claims[0]}, allow_decisions=True)
    assert allowed["ok"], allowed
    assert read(kb, claims[0])["status"] == "actionable"


def test_agents_may_change_reads_the_committed_setting(kb: KB) -> None:
    assert lifecycle.agents_may_change(kb) is False
    _allow_agents(kb)
    assert lifecycle.agents_may_change(kb) is True


def test_the_cli_works_whatever_the_agent_setting(
    kb_with_sources: KB, claims: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VOUCH_AGENT", "helper-bot")  # a person's shell may name an agent
    ctx = CallContext(kb_path=str(kb_with_sources.root))
    assert ops.invoke(ctx, "kb.confirm", {"id": claims[0]})["changed"]


def test_the_config_template_documents_the_setting() -> None:
    from vouch.core.config import template_text

    assert "agent_lifecycle: false" in template_text("config.yaml")


# -- crash safety -------------------------------------------------------------------------
@pytest.mark.parametrize(
    "step, lands", [("committed", False), ("journal", True), ("staged", True), ("refs", True)]
)
def test_a_lifecycle_change_killed_mid_landing_is_finished_or_undone(
    kb_with_sources: KB, claims: list[str], step: str, lands: bool
) -> None:
    kb = kb_with_sources
    killed = vouch_forked(kb.root, "supersede", claims[0], claims[1], env={"VOUCH_FAULT": step})
    assert killed.returncode == 86, killed.stderr
    after = vouch_proc(kb.root, "archive", claims[3])  # the next write recovers first
    assert after.returncode == 0, after.stderr
    assert git(kb.root, "status", "--porcelain", "--", ".vouch") == ""
    committed = git(kb.root, "show", f"HEAD:.vouch/{claim_kind.KIND.path_for(claims[0])}")
    assert ("status: superseded" in committed) is lands
    events = [e["event"] for e in call(kb, "kb.audit", {"tail": 3})]
    assert events.count("claim.supersede") == (1 if lands else 0)
    assert call(kb, "kb.audit_verify")["ok"]


def test_a_killed_landing_is_undone_when_the_user_committed_other_work(
    kb_with_sources: KB, claims: list[str]
) -> None:
    """Killed after writing the files and the index but before the refs; the user then
    commits other work only (`git commit -- notes.txt`), so the branch moved without the
    landed content. The next write cannot finish the landing on the old tip: it undoes
    it — the files and index entries it wrote go back to the branch's — instead of
    leaving knowledge staged that no decision recorded (a later `git commit -a` would
    have committed it)."""
    kb = kb_with_sources
    killed = vouch_forked(kb.root, "supersede", claims[0], claims[1], env={"VOUCH_FAULT": "staged"})
    assert killed.returncode == 86, killed.stderr
    assert git(kb.root, "status", "--porcelain", "--", ".vouch")  # landed, not committed
    (kb.root / "notes.txt").write_text("my own work\n")
    git(kb.root, "add", "notes.txt")
    git(kb.root, "commit", "-qm", "my own work", "--", "notes.txt")
    after = vouch_proc(kb.root, "archive", claims[3])  # the next write recovers first
    assert after.returncode == 0, after.stderr
    assert git(kb.root, "status", "--porcelain", "--", ".vouch") == ""
    assert git(kb.root, "show", "HEAD:notes.txt").strip() == "my own work"
    committed = git(kb.root, "show", f"HEAD:.vouch/{claim_kind.KIND.path_for(claims[0])}")
    assert "status: superseded" not in committed
    assert not journal.exists(kb)
    events = [e["event"] for e in call(kb, "kb.audit", {"tail": 5})]
    assert "claim.supersede" not in events and "claim.archive" in events
    assert call(kb, "kb.audit_verify")["ok"]
    again = vouch_proc(kb.root, "supersede", claims[0], claims[1])  # and it can be redone
    assert again.returncode == 0, again.stderr
    assert "status: superseded" in git(
        kb.root, "show", f"HEAD:.vouch/{claim_kind.KIND.path_for(claims[0])}"
    )


def test_recovery_leaves_another_checked_out_branch_alone(
    kb_with_sources: KB, claims: list[str]
) -> None:
    """Killed after the refs moved (the journal still there); the user then checks out
    another branch. The next write finishes the landing without writing the landed
    files into that branch's work tree or index."""
    kb = kb_with_sources
    main_branch = git(kb.root, "rev-parse", "--abbrev-ref", "HEAD").strip()
    killed = vouch_forked(kb.root, "supersede", claims[0], claims[1], env={"VOUCH_FAULT": "refs"})
    assert killed.returncode == 86, killed.stderr
    git(kb.root, "checkout", "-q", "-b", "other", "HEAD~1")
    assert git(kb.root, "status", "--porcelain", "--", ".vouch") == ""
    after = vouch_proc(kb.root, "archive", claims[3])
    assert "Traceback" not in after.stderr, after.stderr
    assert git(kb.root, "status", "--porcelain", "--", ".vouch") == ""
    assert not journal.exists(kb)
    landed = git(kb.root, "show", f"{main_branch}:.vouch/{claim_kind.KIND.path_for(claims[0])}")
    assert "status: superseded" in landed
