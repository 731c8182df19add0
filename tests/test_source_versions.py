"""Sources have versions: re-adding changed content at a locator records the new source as
current and the old one as superseded by it, in one commit; search sees only current
versions unless asked; `vouch source history` lists them; claims citing a superseded
version are found (`versions.superseded_citations`, for `kb.lint`)."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
from conftest import git
from gate_support import ALICE, BOB, call, head, proposed

from vouch.errors import NotFound
from vouch.kinds import claim as claim_kind
from vouch.kinds import source as source_kind
from vouch.store import versions
from vouch.store.kb import KB

V1 = "# Deploy runbook\n\nDeploys need one green CI run on the staging cluster.\n"
V2 = "# Deploy runbook\n\nDeploys need two green CI runs on the canary cluster.\n"
V3 = "# Deploy runbook\n\nDeploys need three green CI runs on the blue cluster.\n"


def add(kb: KB, run_cli, rel: str, text: str) -> dict[str, Any]:
    path = kb.root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    res = run_cli("source", "add", rel, "--json", cwd=kb.root)
    assert res.code == 0, res.err
    result: dict[str, Any] = res.json()
    return result


def meta(kb: KB, sid: str) -> dict[str, Any]:
    found = kb.read(source_kind.KIND, sid)
    assert found is not None
    return found


def commits(kb: KB) -> int:
    return int(git(kb.root, "rev-list", "--count", "HEAD"))


def source_hits(kb: KB, query: str, **params: Any) -> list[str]:
    hits = call(kb, "kb.search", {"query": query, "mode": "fts", "kinds": ["source"], **params})
    return [h["id"] for h in hits]


def test_re_adding_changed_content_records_a_new_version(kb: KB, run_cli) -> None:
    first = add(kb, run_cli, "docs/runbook.md", V1)
    n = commits(kb)
    second = add(kb, run_cli, "docs/runbook.md", V2)
    assert second["deduplicated"] is False
    assert second["supersedes"] == [first["id"]]
    assert commits(kb) == n + 1  # one commit for the new version and the old one's edit
    changed = git(kb.root, "diff", "--name-only", "HEAD~1", "HEAD").split()
    assert f".vouch/{source_kind.path_for(first['id'])}" in changed
    old, new = meta(kb, first["id"]), meta(kb, second["id"])
    assert old["superseded_by"] == new["id"] and "supersedes" not in old
    assert new["supersedes"] == old["id"] and "superseded_by" not in new
    for version, text in ((old, V1), (new, V2)):  # both stay content-addressed
        assert version["id"] == hashlib.sha256(text.encode()).hexdigest()
        assert kb.source_content(version["id"]) == text.encode()
    event = call(kb, "kb.audit", {"tail": 1})[0]
    assert event["event"] == "source.register"
    assert event["data"]["supersedes"] == {new["id"]: [old["id"]]}
    assert event["object_ids"] == [new["id"], old["id"]]  # every source it touches


def test_search_sees_only_the_current_version_unless_asked(kb: KB, run_cli) -> None:
    first = add(kb, run_cli, "runbook.md", V1)
    assert source_hits(kb, "green CI") == [first["id"]]
    second = add(kb, run_cli, "runbook.md", V2)
    assert source_hits(kb, "green CI") == [second["id"]]
    assert source_hits(kb, "staging") == []
    assert source_hits(kb, "staging", statuses=["superseded"]) == [first["id"]]
    hits = call(kb, "kb.search", {"query": "staging", "mode": "fts", "statuses": ["superseded"]})
    assert hits and hits[0]["status"] == "superseded"


def test_history_lists_versions_newest_first(kb: KB, run_cli) -> None:
    ids = [add(kb, run_cli, "docs/runbook.md", text)["id"] for text in (V1, V2, V3)]
    rows = call(kb, "kb.source_history", {"locator": "docs/runbook.md"})
    assert [r["id"] for r in rows] == ids[::-1]
    assert [r["current"] for r in rows] == [True, False, False]
    assert rows[1]["superseded_by"] == ids[2] and rows[2]["superseded_by"] == ids[1]
    res = run_cli("source", "history", "runbook.md", cwd=kb.root / "docs")  # a path works
    assert res.code == 0, res.err
    lines = res.out.splitlines()
    assert lines[0].startswith(ids[2]) and "current" in lines[0]
    assert f"superseded by {ids[2][:12]}" in lines[1]


def test_history_of_an_unknown_locator_is_not_found(kb: KB, run_cli) -> None:
    with pytest.raises(NotFound):
        call(kb, "kb.source_history", {"locator": "nowhere.md"})
    res = run_cli("source", "history", "nowhere.md", "--json", cwd=kb.root)
    assert res.code == 1 and res.json()["error"]["code"] == "E101"


def test_the_same_bytes_again_change_nothing(kb: KB, run_cli) -> None:
    add(kb, run_cli, "runbook.md", V1)
    add(kb, run_cli, "runbook.md", V2)
    before = (head(kb.root), (kb.dir / "audit.log.jsonl").read_text())
    again = add(kb, run_cli, "runbook.md", V2)
    assert again["deduplicated"] is True and "supersedes" not in again
    assert (head(kb.root), (kb.dir / "audit.log.jsonl").read_text()) == before


def test_a_revert_makes_the_old_version_current_again(kb: KB, run_cli) -> None:
    first = add(kb, run_cli, "runbook.md", V1)
    second = add(kb, run_cli, "runbook.md", V2)
    back = add(kb, run_cli, "runbook.md", V1)
    assert back == {
        "id": first["id"],
        "deduplicated": True,
        "supersedes": [second["id"]],
        "locator": "runbook.md",
        "title": "runbook.md",
        "document_title": "Deploy runbook",
    }
    assert "superseded_by" not in meta(kb, first["id"])
    assert meta(kb, second["id"])["superseded_by"] == first["id"]
    assert source_hits(kb, "green CI") == [first["id"]]
    rows = call(kb, "kb.source_history", {"locator": "runbook.md"})
    assert [(r["id"], r["current"]) for r in rows] == [(first["id"], True), (second["id"], False)]


def test_stdin_sources_are_not_versions_of_each_other(kb: KB, run_cli) -> None:
    one = run_cli("source", "add", "-", "--json", cwd=kb.root, input="first note\n").json()
    two = run_cli("source", "add", "-", "--json", cwd=kb.root, input="second note\n").json()
    assert "supersedes" not in two
    assert "superseded_by" not in meta(kb, one["id"])


def test_agents_registering_text_at_a_locator_version_it_too(kb: KB) -> None:
    first = call(kb, "kb.register_source", {"content": "v1\n", "locator": "slack:C1/p42"})
    second = call(kb, "kb.register_source", {"content": "v2\n", "locator": "slack:C1/p42"})
    assert second["supersedes"] == [first["id"]]
    other = call(kb, "kb.register_source", {"content": "v3\n", "locator": "slack:C1/p43"})
    assert "supersedes" not in other


def test_a_folder_re_add_versions_only_what_changed(kb: KB, run_cli) -> None:
    (kb.root / "docs").mkdir()
    (kb.root / "docs" / "a.md").write_text(V1)
    (kb.root / "docs" / "b.md").write_text("# B\n\nsteady text\n")
    assert run_cli("source", "add", "docs", "--recursive", cwd=kb.root).code == 0
    (kb.root / "docs" / "a.md").write_text(V2)
    n = commits(kb)
    res = run_cli("source", "add", "docs", "--recursive", "--json", cwd=kb.root)
    assert res.code == 0, res.err
    rows = {r["id"]: r for r in res.json()["items"]}
    assert commits(kb) == n + 1
    changed = [r for r in rows.values() if "supersedes" in r]
    assert len(changed) == 1 and changed[0]["deduplicated"] is False
    assert sum(r["deduplicated"] for r in rows.values()) == 1


def test_the_old_metadata_keeps_a_persons_comments(kb: KB, run_cli) -> None:
    first = add(kb, run_cli, "runbook.md", V1)
    path = kb.dir / source_kind.path_for(first["id"])
    path.write_text("# captured before the March rewrite\n" + path.read_text())
    git(kb.root, "commit", "-qam", "annotate a source")
    add(kb, run_cli, "runbook.md", V2)
    assert path.read_text().startswith("# captured before the March rewrite\n")
    assert "superseded_by: " in path.read_text()


def test_sources_registered_twice_before_versions_existed_are_both_retired(kb: KB) -> None:
    """A knowledge base from before versions may hold two current sources at a locator."""
    a = call(kb, "kb.register_source", {"content": "old a\n", "locator": "legacy.md"})
    b = call(kb, "kb.register_source", {"content": "old b\n", "locator": "elsewhere.md"})
    path = kb.dir / source_kind.path_for(b["id"])
    path.write_text(path.read_text().replace("elsewhere.md", "legacy.md"))
    path_a = kb.dir / source_kind.path_for(a["id"])
    path_a.write_text(source_kind.KIND.edit(path_a.read_text(), {"superseded_by": None}))
    git(kb.root, "commit", "-qam", "two current versions")
    c = call(kb, "kb.register_source", {"content": "new\n", "locator": "legacy.md"})
    assert c["supersedes"] == sorted([a["id"], b["id"]])
    assert meta(kb, a["id"])["superseded_by"] == meta(kb, b["id"])["superseded_by"] == c["id"]


def test_locators_that_need_quoting_are_versioned(kb: KB) -> None:
    locator = "chat:'quoted' #1: yes"
    first = call(kb, "kb.register_source", {"content": "one\n", "locator": locator})
    second = call(kb, "kb.register_source", {"content": "two\n", "locator": locator})
    assert second["supersedes"] == [first["id"]]
    assert [r["id"] for r in call(kb, "kb.source_history", {"locator": locator})] == [
        second["id"],
        first["id"],
    ]


# -- claims citing a superseded version ---------------------------------------------------
def _approved_claim(kb: KB, text: str, evidence: list[str]) -> str:
    result = proposed(kb, "kb.propose_claim", {"text": text, "evidence": evidence}, actor=ALICE)
    assert result["valid"], result
    return str(
        call(kb, "kb.approve", {"proposal_id": result["proposal_id"]}, actor=BOB)["object_id"]
    )


def test_superseded_citations_lists_claims_citing_an_old_version(kb: KB, run_cli) -> None:
    assert versions.superseded_citations(kb) == []
    first = add(kb, run_cli, "runbook.md", V1)["id"]
    other = add(kb, run_cli, "other.md", "# Other\n\nunchanged\n")["id"]
    direct = _approved_claim(kb, "Deploys need one green CI run", [first])
    spanned = _approved_claim(kb, "Staging runs the CI", [f"{first}:L3"])
    steady = _approved_claim(kb, "Other things stay", [other])
    retired = _approved_claim(kb, "Staging is the CI cluster", [first])
    call(kb, "kb.archive", {"id": retired})
    assert versions.superseded_citations(kb) == []
    second = add(kb, run_cli, "runbook.md", V2)["id"]
    third = add(kb, run_cli, "runbook.md", V3)["id"]
    found = versions.superseded_citations(kb)
    spanned_claim = kb.read(claim_kind.KIND, spanned)
    assert spanned_claim is not None
    evidence_id = spanned_claim["evidence"][0]
    assert sorted(found, key=lambda r: r["claim_id"]) == sorted(
        [
            {"claim_id": direct, "source_id": first, "current_id": third, "evidence_id": None},
            {
                "claim_id": spanned,
                "source_id": first,
                "current_id": third,
                "evidence_id": evidence_id,
            },
        ],
        key=lambda r: str(r["claim_id"]),
    )
    assert steady not in {r["claim_id"] for r in found}
    assert second != third


def test_superseded_sources_follow_the_chain_to_the_current_version(kb: KB, run_cli) -> None:
    ids = [add(kb, run_cli, "r.md", text)["id"] for text in (V1, V2, V3)]
    assert versions.superseded_sources(kb) == {ids[0]: ids[2], ids[1]: ids[2]}


def test_both_versions_stay_verifiable(kb: KB, run_cli) -> None:
    """Both versions stay verifiable: content hashes to the id, metadata names it."""
    for text in (V1, V2):
        add(kb, run_cli, "v.md", text)
    for sid in kb.ids(source_kind.KIND):
        content = kb.source_content(sid) or b""
        assert hashlib.sha256(content).hexdigest() == sid == meta(kb, sid)["id"]
        assert meta(kb, sid)["hash"] == f"sha256:{sid}"


def test_hand_written_evidence_lists_are_found_too(kb: KB, run_cli) -> None:
    """A person may write `evidence: ['<id>']` (flow style, quoted): still found."""
    first = add(kb, run_cli, "runbook.md", V1)["id"]
    claim_id = _approved_claim(kb, "Deploys need one green CI run", [first])
    path = kb.path_of(claim_kind.KIND, claim_id)
    text = path.read_text()
    block = f"evidence:\n  - {first}\n"
    assert block in text
    path.write_text(text.replace(block, f"evidence: ['{first}']\n"))
    git(kb.root, "commit", "-qam", "flow style")
    add(kb, run_cli, "runbook.md", V2)
    assert [r["claim_id"] for r in versions.superseded_citations(kb)] == [claim_id]


def test_lint_may_pass_the_claims_it_already_read(kb: KB, run_cli) -> None:
    first = add(kb, run_cli, "runbook.md", V1)["id"]
    second = add(kb, run_cli, "runbook.md", V2)["id"]
    claims = [
        {"id": "held-in-memory-0000aaaa", "status": "working", "evidence": [first]},
        {"id": "archived-one-0000bbbb", "status": "archived", "evidence": [first]},
    ]
    assert versions.superseded_citations(kb, claims) == [
        {
            "claim_id": "held-in-memory-0000aaaa",
            "source_id": first,
            "current_id": second,
            "evidence_id": None,
        }
    ]
