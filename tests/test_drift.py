"""An approved claim whose cited lines the work tree no longer holds as registered is
reported by lint and doctor (`vouch.health.drift`, issue 38 item 0): lines that moved
are followed, lines that changed are named with what is there now, a deleted file is
named; an edit elsewhere in the file is not drift. `lint --since BASE` lists the claims
a range's changes touch."""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

import pytest
from built_once import built_once, copied, started
from conftest import git
from gate_support import BOB, call, show

from vouch.kinds import claim as claim_kind
from vouch.store.kb import KB

DEPLOY = [
    "# Deploy",
    "",
    "How we ship.",
    "Every deploy needs a green CI run and a second approver.",
    "",
    "Freeze windows:",
    "no deploys on Fridays.",
    "",
    "Rollback with the script.",
]


def _approved(kb: KB, text: str, cite: str) -> str:
    result = call(kb, "kb.propose_claim", {"text": text, "evidence": [cite]})
    assert result["valid"], result
    show(kb, result["proposal_id"])
    call(kb, "kb.approve", {"proposal_id": result["proposal_id"]}, actor=BOB)
    return str(result["claim_id"])


def _built(root: Path) -> tuple[dict[str, str], str]:
    return _build(started(root))


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str], str]:
    """The repository `_build` makes, once a session (`built_once`); each test gets a copy."""
    root, (claims, base) = built_once(tmp_path_factory, "drift", _built)
    return root, claims, base


@pytest.fixture
def setup(built: tuple[Path, dict[str, str], str], tmp_path: Path) -> Setup:
    template, claims, base = built
    root = copied(template, tmp_path / "repo")
    return Setup(KB.open(root), dict(claims), base)


class Setup(NamedTuple):
    kb: KB
    claims: dict[str, str]
    base: str


def _build(kb: KB) -> tuple[dict[str, str], str]:
    root = kb.root
    (root / "docs").mkdir()
    (root / "docs" / "deploy.md").write_text("\n".join(DEPLOY) + "\n")
    (root / "docs" / "other.md").write_text("# Other\n\nOn-call rotates weekly.\n")
    git(root, "add", "docs")
    git(root, "commit", "-qm", "docs")
    deploy = call(kb, "kb.register_source_from_path", {"path": "docs/deploy.md"})["id"]
    other = call(kb, "kb.register_source_from_path", {"path": "docs/other.md"})["id"]
    claims = {
        "approver": _approved(kb, "Deploys need a second approver", f"{deploy}:L4"),
        "freeze": _approved(kb, "No deploys on Fridays", f"{deploy}:L6-L7"),
        "whole": _approved(kb, "There is a deploy runbook", deploy),
        "oncall": _approved(kb, "On-call rotates weekly", f"{other}:L3"),
    }
    return claims, git(root, "rev-parse", "HEAD").strip()


def _drift(kb: KB, **params: Any) -> dict[str, str]:
    """claim id -> message of each drifted-citation lint finding."""
    found = call(kb, "kb.lint", params)["issues"]
    return {i["id"]: i["message"] for i in found if i["kind"] == "drifted-citation"}


def _commit(kb: KB, lines: list[str], message: str) -> None:
    (kb.root / "docs" / "deploy.md").write_text("\n".join(lines) + "\n")
    git(kb.root, "commit", "-qam", message)


def test_nothing_changed_is_no_drift(setup: Setup) -> None:
    kb = setup.kb
    assert _drift(kb) == {}
    doctor = call(kb, "kb.doctor")
    assert not [i for i in doctor["issues"] if i["kind"] == "drifted-citation"]


def test_an_edit_elsewhere_in_the_file_moves_nothing_cited(setup: Setup) -> None:
    kb, claims = setup.kb, setup.claims
    lines = list(DEPLOY)
    lines[2] = "How we ship, and why."  # line 3: cited by none of the spans
    _commit(kb, lines, "reword the intro")
    assert _drift(kb) == {claims["whole"]: _drift(kb)[claims["whole"]]}  # the whole file


def test_changed_lines_are_named_with_what_is_there_now(setup: Setup) -> None:
    kb, claims = setup.kb, setup.claims
    lines = list(DEPLOY)
    lines[3] = "Deploys need one approver."
    _commit(kb, lines, "one approver is enough")
    found = _drift(kb)
    assert set(found) == {claims["approver"], claims["whole"]}
    assert "lines 4 of docs/deploy.md" in found[claims["approver"]]
    assert "now reads there: 'Deploys need one approver.'" in found[claims["approver"]]
    assert "vouch source add docs/deploy.md" in found[claims["approver"]]
    doctor = call(kb, "kb.doctor")  # doctor says the same
    assert {i["id"] for i in doctor["issues"] if i["kind"] == "drifted-citation"} == set(found)


def test_moved_lines_are_followed(setup: Setup) -> None:
    kb, claims = setup.kb, setup.claims
    lines = [*DEPLOY[:2], "A new paragraph.", "", *DEPLOY[2:]]  # everything below moves by 2
    _commit(kb, lines, "a paragraph on top")
    found = _drift(kb)
    assert "moved to L6" in found[claims["approver"]]
    assert "moved to L8-L9" in found[claims["freeze"]]
    assert claims["oncall"] not in found


def test_a_deleted_file_is_named(setup: Setup) -> None:
    kb, claims = setup.kb, setup.claims
    git(kb.root, "rm", "-q", "docs/deploy.md")
    git(kb.root, "commit", "-qm", "drop the runbook")
    found = _drift(kb)
    assert set(found) == {claims["approver"], claims["freeze"], claims["whole"]}
    assert all("docs/deploy.md is gone from the work tree" in m for m in found.values())


def test_an_uncommitted_edit_is_drift_too(setup: Setup) -> None:
    kb, claims = setup.kb, setup.claims
    path = kb.root / "docs" / "deploy.md"
    path.write_text(path.read_text().replace("Fridays", "Mondays"))
    assert set(_drift(kb)) == {claims["freeze"], claims["whole"]}


def test_since_lists_the_claims_a_range_touches(setup: Setup) -> None:
    kb, claims, base = setup
    lines = list(DEPLOY)
    lines[6] = "no deploys on Fridays or holidays."
    _commit(kb, lines, "holidays too")
    found = _drift(kb, since=base)
    assert set(found) == {claims["freeze"], claims["whole"]}
    assert call(kb, "kb.lint", {"since": base})["verdict"] == "warnings"
    # a range that touches only the other file lists nothing of deploy.md
    head = git(kb.root, "rev-parse", "HEAD").strip()
    (kb.root / "docs" / "other.md").write_text("# Other\n\nOn-call rotates daily.\n")
    git(kb.root, "commit", "-qam", "daily")
    assert set(_drift(kb, since=head)) == {claims["oncall"]}


def test_retired_claims_are_not_reported(setup: Setup) -> None:
    kb, claims = setup.kb, setup.claims
    result = call(kb, "kb.archive", {"id": claims["freeze"], "reason": "moved to wiki"})
    if result.get("proposal_id"):  # a lifecycle change is itself a proposal
        show(kb, result["proposal_id"])
        call(kb, "kb.approve", {"proposal_id": result["proposal_id"]}, actor=BOB)
    archived = kb.read(claim_kind.KIND, claims["freeze"])
    assert archived is not None and archived["status"] == "archived"
    lines = list(DEPLOY)
    lines[6] = "no deploys on Fridays or holidays."
    _commit(kb, lines, "holidays too")
    assert set(_drift(kb)) == {claims["whole"]}


def test_a_file_never_committed_has_no_history_to_drift_from(setup: Setup) -> None:
    """A file registered while untracked and removed before any commit held it: the
    repository never had it, so its absence is not a deletion (a knowledge base made
    by a generator, or text noted from elsewhere, holds such versions too)."""
    kb = setup.kb
    scratch = kb.root / "docs" / "scratch.md"
    scratch.write_text("A scratch note.\n")
    sid = call(kb, "kb.register_source_from_path", {"path": "docs/scratch.md"})["id"]
    claim = _approved(kb, "A scratch note exists", f"{sid}:L1")
    scratch.unlink()
    assert claim not in _drift(kb)
    git(kb.root, "commit", "-q", "--allow-empty", "-m", "later")
    scratch.write_text("A scratch note, edited.\n")  # back, with other lines: drift
    assert "now reads there" in _drift(kb)[claim]


def test_the_knowledge_diff_of_a_pull_request_names_them(setup: Setup) -> None:
    from vouch.cli.human_provenance import diff_human, diff_markdown

    kb, claims, base = setup
    lines = list(DEPLOY)
    lines[3] = "Deploys need one approver."
    _commit(kb, lines, "one approver is enough")
    d = call(kb, "kb.diff", {"revisions": f"{base}...HEAD"})
    assert {x["claim_id"] for x in d["drifted"]} == {claims["approver"], claims["whole"]}
    assert d["summary"]["claims_drifted"] == 2
    text = diff_markdown(d)
    assert "#### Cited lines changed: 2 citation(s) of approved claims" in text
    line = f"`{claims['approver']}` cites L4 of `docs/deploy.md`: now reads: `Deploys need one"
    assert line in text
    assert "No knowledge changed." in text  # no knowledge file changed, only a cited one
    assert f"! `{claims['approver']}` cites L4" in diff_human(d)
    # a range that does not end at the checked-out commit reads no work tree
    assert call(kb, "kb.diff", {"revisions": f"{base}..{base}"})["drifted"] == []


def test_search_marks_a_claim_hit_whose_cited_lines_changed(setup: Setup) -> None:
    from vouch.search.human import heading

    kb, claims = setup.kb, setup.claims

    def hit(query: str) -> dict[str, Any]:
        found = call(kb, "kb.search", {"query": query, "kinds": ["claim"], "mode": "fts"})
        return next(h for h in found if h["id"] == claims["approver"])

    before = hit("second approver")
    assert "drifted" not in before and "cited lines changed" not in heading(1, before)
    lines = list(DEPLOY)
    lines[3] = "Deploys need one approver."
    _commit(kb, lines, "one approver is enough")
    after = hit("second approver")
    assert after["drifted"] == [
        {
            "path": "docs/deploy.md",
            "locator": "L4",
            "state": "changed",
            "now": "Deploys need one approver.",
        }
    ]
    assert "(cited lines changed: `vouch lint`)" in heading(1, after)
    oncall = call(kb, "kb.search", {"query": "on-call rotates", "kinds": ["claim"], "mode": "fts"})
    assert oncall and all("drifted" not in h for h in oncall)  # other.md did not change


def test_a_link_out_of_the_repository_is_a_deleted_file(setup: Setup, tmp_path: Path) -> None:
    """A cited file replaced by a link out of the repository (or nowhere): gone from it,
    never followed (seventh outsider sitting: it hid the drift)."""
    kb, claims = setup.kb, setup.claims
    outside = tmp_path / "elsewhere.md"
    outside.write_text("secret text\n")
    path = kb.root / "docs" / "deploy.md"
    path.unlink()
    path.symlink_to(outside)
    found = _drift(kb)
    assert set(found) == {claims["approver"], claims["freeze"], claims["whole"]}
    assert all("is gone from the work tree" in m for m in found.values())
    assert not any("secret" in m for m in found.values())
    path.unlink()
    path.symlink_to(tmp_path / "nowhere.md")  # dangling
    assert set(_drift(kb)) == {claims["approver"], claims["freeze"], claims["whole"]}


def test_line_endings_alone_are_no_drift(setup: Setup) -> None:
    """A clone that checks files out with CRLF (`core.autocrlf`) holds the same lines."""
    kb = setup.kb
    path = kb.root / "docs" / "deploy.md"
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    assert _drift(kb) == {}


def test_registering_the_new_version_does_not_silence_it(setup: Setup) -> None:
    kb, claims = setup.kb, setup.claims
    lines = list(DEPLOY)
    lines[3] = "Deploys need one approver."
    _commit(kb, lines, "one approver is enough")
    call(kb, "kb.register_source_from_path", {"path": "docs/deploy.md"})
    found = _drift(kb)
    assert "now reads there: 'Deploys need one approver.'" in found[claims["approver"]]


def test_a_pull_request_cannot_write_the_comment(setup: Setup) -> None:
    """Lines a pull request wrote reach the markdown comment as code: no heading, HTML
    comment or mention of theirs is rendered."""
    from vouch.cli.human_provenance import diff_markdown

    kb, _, base = setup
    lines = list(DEPLOY)
    lines[3] = "<!-- hide --> @org/team `x` ## fake heading"
    _commit(kb, lines, "an injection")
    text = diff_markdown(call(kb, "kb.diff", {"revisions": f"{base}...HEAD"}))
    assert "now reads: ``<!-- hide --> @org/team `x` ## fake heading``" in text


def test_a_context_pack_marks_a_drifted_claim(setup: Setup) -> None:
    from vouch.cli.human_context import markdown

    kb, claims = setup.kb, setup.claims
    lines = list(DEPLOY)
    lines[3] = "Deploys need one approver."
    _commit(kb, lines, "one approver is enough")
    pack = call(kb, "kb.context", {"task": "how many approvers does a deploy need"})
    item = next(i for i in pack["items"] if i["id"] == claims["approver"])
    assert item["drifted"][0]["state"] == "changed"
    assert "_The lines it cites changed since it was approved (docs/deploy.md:L4)" in markdown(pack)
    assert all("drifted" not in i for i in pack["items"] if i["id"] == claims["oncall"])
