"""Change proposals (issue 38 items 0 and 1): re-cite, archive, redact and delete an
approved object through a proposal a person decides, and `vouch source refresh`, which
opens them for drifted citations. A change proposal carries a request, never a file:
approve writes the edit itself on the commit it lands on. Hostile branches (files added
to a change, forged trailers, a request that would now touch more) are refused with
nothing written; a redaction leaves none of its words in HEAD, the index, the search log
or the lint cache."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import NamedTuple

import pytest
from built_once import built_once, copied, started
from conftest import git
from gate_support import BOB, call, recommit, show

from vouch.errors import GateRefused, ValidationFailed, VouchError
from vouch.store.kb import KB, PROPOSAL_PREFIX

TOKEN = "qwertyzorp99"  # in a claim's text only, past the words its id is made of
DEPLOY = ["# Deploy", "", "How we ship.", "Every deploy needs a second approver.", ""]


class Setup(NamedTuple):
    kb: KB
    claims: dict[str, str]
    source: str


def _approved(kb: KB, text: str, cite: str, **extra: object) -> str:
    result = call(kb, "kb.propose_claim", {"text": text, "evidence": [cite], **extra})
    assert result["valid"], result
    show(kb, result["proposal_id"])
    call(kb, "kb.approve", {"proposal_id": result["proposal_id"]}, actor=BOB)
    return str(result["claim_id"])


def _build(kb: KB) -> tuple[dict[str, str], str]:
    root = kb.root
    (root / "docs").mkdir()
    (root / "docs" / "deploy.md").write_text("\n".join(DEPLOY) + "\n")
    git(root, "add", "docs")
    git(root, "commit", "-qm", "docs")
    sid = call(kb, "kb.register_source_from_path", {"path": "docs/deploy.md"})["id"]
    secret = f"The staging deploy key is kept in the vault, not {TOKEN} in chat"
    claims = {
        "approver": _approved(kb, "Deploys need a second approver", f"{sid}:L4"),
        "secret": _approved(kb, secret, f"{sid}:L3", tags=[TOKEN]),
        "shipping": _approved(kb, "There is a way we ship", f"{sid}:L3"),
    }
    page = call(
        kb,
        "kb.propose_page",
        {"title": "Deploying", "body": "How we deploy.", "claims": [claims["approver"]]},
    )
    show(kb, page["proposal_id"])
    call(kb, "kb.approve", {"proposal_id": page["proposal_id"]}, actor=BOB)
    claims["page"] = str(page["page_id"])
    return claims, sid


def _built(root: Path) -> tuple[dict[str, str], str]:
    return _build(started(root))


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str], str]:
    """The repository `_build` makes, once a session (`built_once`); each test gets a copy."""
    root, (claims, sid) = built_once(tmp_path_factory, "changes", _built)
    return root, claims, sid


@pytest.fixture
def setup(built: tuple[Path, dict[str, str], str], tmp_path: Path) -> Setup:
    template, claims, sid = built
    root = copied(template, tmp_path / "repo")
    return Setup(KB.open(root), dict(claims), sid)


def _refs(root: Path) -> str:
    return git(root, "for-each-ref", "--format=%(refname) %(objectname)")


def _decide(kb: KB, pid: str) -> dict[str, object]:
    show(kb, pid)
    return dict(call(kb, "kb.approve", {"proposal_id": pid}, actor=BOB))


def _refused(kb: KB, pid: str, error: type[Exception], match: str | None = None) -> None:
    """A reviewer looks, approves, and is refused: nothing but the look is written."""
    show(kb, pid)
    before = _refs(kb.root), git(kb.root, "status", "--porcelain")
    with pytest.raises(error, match=match):
        call(kb, "kb.approve", {"proposal_id": pid}, actor=BOB)
    assert (_refs(kb.root), git(kb.root, "status", "--porcelain")) == before


def _clean(kb: KB) -> None:
    """lint, doctor and audit verification all find nothing wrong."""
    lint = call(kb, "kb.lint")
    assert [i for i in lint["issues"] if i["severity"] == "error"] == [], lint["issues"]
    assert call(kb, "kb.audit_verify")["ok"], call(kb, "kb.audit_verify")
    doctor = call(kb, "kb.doctor")
    assert doctor["verdict"] != "broken", doctor


def _holding(root: Path, token: str) -> list[str]:
    """Every file under the repository (work tree, .git but its object store) and every
    object HEAD's tree reaches that holds `token`."""
    found = []
    for path in root.rglob("*"):
        where = path.as_posix()
        if path.is_file() and ".git/objects" not in where and token.encode() in path.read_bytes():
            found.append(str(path.relative_to(root)))
    grep = subprocess.run(
        ["git", "grep", "-l", "-F", token, "HEAD"], cwd=root, capture_output=True, text=True
    )
    return sorted(found + grep.stdout.split())


# -- redact ----------------------------------------------------------------------------------
def test_a_redaction_leaves_no_word_in_any_store(setup: Setup) -> None:
    kb, claims = setup.kb, setup.claims
    assert _hits(kb, TOKEN)  # indexed, and logged
    call(kb, "kb.lint")  # the lint cache keeps what each file held
    assert _holding(kb.root, TOKEN)
    made = call(kb, "kb.redact", {"id": claims["secret"], "reason": "a key in chat"})
    assert made["change"]["op"] == "redact" and made["touches"][0]["what"] == "redacted"
    screen = call(kb, "kb.read_proposal", {"id": made["proposal_id"]})
    assert screen["problems"] == [] and TOKEN in screen["diff"]  # the reviewer sees it go
    assert screen["object"]["id"] == claims["secret"]
    approved = _decide(kb, made["proposal_id"])
    assert approved["change"] == "redact"
    assert _holding(kb.root, TOKEN) == []  # HEAD, the index, the log, the lint cache
    claim = kb.read(kb_kind("claim"), claims["secret"])
    assert claim["status"] == "redacted" and claim["text"] == "[redacted]"
    assert claim["evidence"] == [] and claim["id"] == claims["secret"]
    assert _hits(kb, TOKEN) == []
    pack = call(kb, "kb.context", {"task": f"what is {TOKEN}"})
    assert TOKEN not in str([pack["items"], pack["unreviewed"]])  # the task is echoed
    _clean(kb)


def test_a_page_and_an_entity_are_redacted_like_a_claim(setup: Setup) -> None:
    """A page's title and body, an entity's name, aliases and description: the words go,
    the ids stay (what lists them still resolves), search hides them."""
    kb = setup.kb
    word = "glimmerquartz7"  # past the words each id is made of
    entity = call(
        kb,
        "kb.propose_entity",
        {"name": "Staging deploy key vault service", "type": "tool", "aliases": [word],
         "description": f"holds {word}"},
    )  # fmt: skip
    _decide(kb, entity["proposal_id"])
    page = call(
        kb,
        "kb.propose_page",
        {"title": "Deploying with the staging key vault", "body": f"The key is {word}.",
         "claims": [setup.claims["approver"]], "entities": [entity["entity_id"]]},
    )  # fmt: skip
    _decide(kb, page["proposal_id"])
    assert _hits(kb, word)
    for oid in (page["page_id"], entity["entity_id"]):
        made = call(kb, "kb.redact", {"id": oid, "reason": "a key"})
        assert [t["what"] for t in made["touches"]] == ["redacted"]
        _decide(kb, made["proposal_id"])
    assert _holding(kb.root, word) == []
    assert _hits(kb, word) == []
    found = {h["id"] for h in _hits(kb, "staging key vault service")}  # type: ignore[index]
    assert not found & {page["page_id"], entity["entity_id"]}
    now = kb.read(kb_kind("page"), page["page_id"])
    assert now["status"] == "redacted" and now["title"] == now["body"] == "[redacted]"
    assert now["claims"] == [setup.claims["approver"]]  # structure kept: ids, no words
    gone = kb.read(kb_kind("entity"), entity["entity_id"])
    assert gone["name"] == "[redacted]" and not gone.get("aliases") and "description" not in gone
    with pytest.raises(ValidationFailed, match="already redacted"):
        call(kb, "kb.redact", {"id": entity["entity_id"], "reason": "again"})
    _clean(kb)


def _hits(kb: KB, query: str) -> list[object]:
    found = call(kb, "kb.search", {"query": query})
    return list(found["results"] if isinstance(found, dict) else found)


def kb_kind(name: str):  # type: ignore[no-untyped-def]
    from vouch.kinds import KINDS

    return KINDS[name]


def test_a_proposer_does_not_decide_their_own_change(setup: Setup) -> None:
    kb, claims = setup.kb, setup.claims
    made = call(kb, "kb.redact", {"id": claims["secret"], "reason": "mine"}, actor=BOB)
    show(kb, made["proposal_id"])
    before = _refs(kb.root)
    with pytest.raises(VouchError):
        call(kb, "kb.approve", {"proposal_id": made["proposal_id"]}, actor=BOB)
    assert _refs(kb.root) == before


# -- hostile change branches -----------------------------------------------------------------
def _plumb(root: Path, ref: str, tree: str | None = None, message: str | None = None) -> str:
    """Replace the commit at `ref` with one of the same parent and author, another tree
    or message, as anyone with push access could."""
    old = git(root, "rev-parse", ref).strip()
    msg = message if message is not None else git(root, "log", "-1", "--format=%B", old)
    name, email = git(root, "log", "-1", "--format=%an%n%ae", old).split("\n")[:2]
    return recommit(root, ref, msg, (name, email), tree)[1]


def test_a_change_branch_that_carries_a_file_is_refused(setup: Setup) -> None:
    kb, claims = setup.kb, setup.claims
    root = kb.root
    made = call(kb, "kb.propose_change", {"id": claims["approver"], "op": "archive"})
    ref = PROPOSAL_PREFIX + made["proposal_id"]
    # a forged claim file smuggled into the change's tree
    (root / "smuggled.yaml").write_text("id: x\n")
    blob = git(root, "hash-object", "-w", "smuggled.yaml").strip()
    (root / "smuggled.yaml").unlink()
    base_tree = git(root, "rev-parse", f"{ref}^{{tree}}").strip()
    listing = git(root, "ls-tree", base_tree)
    tree = subprocess.run(
        ["git", "mktree"],
        cwd=root,
        input=listing + f"100644 blob {blob}\tsmuggled.yaml\n",
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    _plumb(root, ref, tree=tree)
    _refused(kb, made["proposal_id"], GateRefused, "carries files")
    assert not (root / "smuggled.yaml").exists()


@pytest.mark.parametrize(
    "edit",
    [
        ("Vouch-Change: archive", "Vouch-Change: archive\nVouch-Change: redact"),
        ("Vouch-Change: archive", "Vouch-Change: chmod"),
        ("Vouch-Change: archive", "Vouch-Change: archive\nVouch-Change-Evidence: ../x:L1"),
        ("Vouch-Change: archive", "Vouch-Change: archive\nVouch-Change-Also: ../../etc"),
        (
            "Vouch-Change: archive",
            "Vouch-Change: archive\nVouch-Proposal: 20990101-000000-00000000",
        ),
    ],
)
def test_a_forged_request_is_refused(setup: Setup, edit: tuple[str, str]) -> None:
    kb, claims = setup.kb, setup.claims
    root = kb.root
    made = call(kb, "kb.propose_change", {"id": claims["approver"], "op": "archive"})
    ref = PROPOSAL_PREFIX + made["proposal_id"]
    message = git(root, "log", "-1", "--format=%B", ref)
    assert edit[0] in message
    _plumb(root, ref, message=message.replace(edit[0], edit[1]))
    _refused(kb, made["proposal_id"], GateRefused)


def test_a_rewritten_request_is_not_what_was_reviewed(setup: Setup) -> None:
    kb, claims = setup.kb, setup.claims
    root = kb.root
    made = call(kb, "kb.propose_change", {"id": claims["approver"], "op": "archive"})
    show(kb, made["proposal_id"])  # the reviewer read "archive"
    ref = PROPOSAL_PREFIX + made["proposal_id"]
    message = git(root, "log", "-1", "--format=%B", ref)
    _plumb(root, ref, message=message.replace("Vouch-Change: archive", "Vouch-Change: delete"))
    before = _refs(root)
    with pytest.raises(VouchError):
        call(kb, "kb.approve", {"proposal_id": made["proposal_id"]}, actor=BOB)
    assert _refs(root) == before


# -- delete ----------------------------------------------------------------------------------
def test_a_deletion_unlinks_what_lists_it_in_one_decision(setup: Setup) -> None:
    kb, claims = setup.kb, setup.claims
    made = call(kb, "kb.delete", {"id": claims["approver"], "reason": "wrong"})
    assert {(t["id"], t["what"].split()[0]) for t in made["touches"]} == {
        (claims["approver"], "deleted"),
        (claims["page"], "no"),
    }
    _decide(kb, made["proposal_id"])
    assert kb.read(kb_kind("claim"), claims["approver"]) is None
    assert claims["approver"] not in kb.read(kb_kind("page"), claims["page"])["claims"]
    _clean(kb)  # the deletion is sealed: lint does not call the file lost


def test_a_deletion_refuses_what_would_touch_more_than_was_reviewed(setup: Setup) -> None:
    kb, claims = setup.kb, setup.claims
    made = call(kb, "kb.delete", {"id": claims["shipping"], "reason": "vague"})
    assert [t["id"] for t in made["touches"]] == [claims["shipping"]]
    # after the proposal, a page comes to list the claim
    page = call(kb, "kb.propose_page", {"title": "Shipping", "claims": [claims["shipping"]]})
    show(kb, page["proposal_id"])
    call(kb, "kb.approve", {"proposal_id": page["proposal_id"]}, actor=BOB)
    _refused(kb, made["proposal_id"], GateRefused, "nobody reviewed")


def test_what_cannot_stand_without_it_must_go_with_it(setup: Setup) -> None:
    kb, claims = setup.kb, setup.claims
    rel = call(
        kb,
        "kb.propose_relation",
        {"source": claims["approver"], "relation": "supports", "target": claims["shipping"]},
    )
    show(kb, rel["proposal_id"])
    call(kb, "kb.approve", {"proposal_id": rel["proposal_id"]}, actor=BOB)
    before = _refs(kb.root)
    with pytest.raises(ValidationFailed, match="--also"):
        call(kb, "kb.delete", {"id": claims["shipping"], "reason": "vague"})
    assert _refs(kb.root) == before
    made = call(
        kb, "kb.delete", {"id": claims["shipping"], "reason": "vague", "also": [rel["relation_id"]]}
    )
    _decide(kb, made["proposal_id"])
    assert kb.read(kb_kind("relation"), rel["relation_id"]) is None
    _clean(kb)


# -- source refresh --------------------------------------------------------------------------
def test_refresh_re_cites_moved_lines_and_archives_changed_ones(setup: Setup) -> None:
    kb, claims = setup.kb, setup.claims
    lines = ["# Deploy", "", "A new paragraph.", "", "How we ship, now differently.", *DEPLOY[3:]]
    (kb.root / "docs" / "deploy.md").write_text("\n".join(lines) + "\n")
    git(kb.root, "commit", "-qam", "rewrite the intro")
    found = call(kb, "kb.source_refresh")
    assert len(found["registered"]) == 1
    new_sid = found["registered"][0]["source_id"]
    by_claim = {p["claim_id"]: p for p in found["proposals"]}
    assert by_claim[claims["approver"]]["op"] == "recite"  # L4 moved to L6
    assert by_claim[claims["shipping"]]["op"] == "archive"  # L3 changed
    again = call(kb, "kb.source_refresh")  # nothing opened twice
    assert {p.get("duplicate") for p in again["proposals"]} == {"pending"}
    screen = call(kb, "kb.read_proposal", {"id": by_claim[claims["approver"]]["proposal_id"]})
    shown = [r["text"] for r in screen["new_citation"]["excerpt"] if r["cited"]]
    assert shown == [DEPLOY[3]]  # the reviewer reads the lines it would cite, not a pointer
    _decide(kb, by_claim[claims["approver"]]["proposal_id"])
    cited = kb.read(kb_kind("claim"), claims["approver"])["evidence"]
    assert len(cited) == 1
    span = kb.read(kb_kind("evidence"), cited[0])
    assert (span["source_id"], span["locator"]) == (new_sid, "L6")
    _decide(kb, by_claim[claims["shipping"]]["proposal_id"])
    assert kb.read(kb_kind("claim"), claims["shipping"])["status"] == "archived"
    lint = call(kb, "kb.lint")["issues"]
    drifted = {i["id"] for i in lint if i["kind"] == "drifted-citation"}
    assert claims["approver"] not in drifted and claims["shipping"] not in drifted
    _clean(kb)


def test_a_change_merged_with_git_is_still_decided_by_approve(setup: Setup) -> None:
    kb, claims = setup.kb, setup.claims
    made = call(kb, "kb.propose_change", {"id": claims["approver"], "op": "archive"})
    git(kb.root, "merge", "-q", "--no-edit", PROPOSAL_PREFIX + made["proposal_id"])
    claim = kb.read(kb_kind("claim"), claims["approver"])
    assert claim["status"] == "working"  # the merge changed nothing
    _decide(kb, made["proposal_id"])
    assert kb.read(kb_kind("claim"), claims["approver"])["status"] == "archived"
    _clean(kb)


def test_a_deletion_leaves_no_word_in_the_index_or_the_log(setup: Setup) -> None:
    kb, claims = setup.kb, setup.claims
    assert _hits(kb, TOKEN)
    made = call(kb, "kb.delete", {"id": claims["secret"], "reason": "a key in chat"})
    _decide(kb, made["proposal_id"])
    assert _holding(kb.root, TOKEN) == []
    assert _hits(kb, "second approver")  # the rebuilt index answers
    _clean(kb)


def test_a_change_made_on_history_the_branch_does_not_hold_is_refused(setup: Setup) -> None:
    """Its tree is its recorded base's, but that base is a commit off the branch (or an
    unrelated root): approving would merge history nobody reviewed."""
    kb, claims = setup.kb, setup.claims
    root = kb.root
    made = call(kb, "kb.propose_change", {"id": claims["approver"], "op": "archive"})
    ref = PROPOSAL_PREFIX + made["proposal_id"]
    old = git(root, "rev-parse", ref).strip()
    base = git(root, "rev-parse", f"{old}^").strip()
    # a commit off the branch, with the base's tree, and the request re-made on it
    off = subprocess.run(
        ["git", "commit-tree", f"{base}^{{tree}}", "-m", "elsewhere"],
        cwd=root, capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    message = git(root, "log", "-1", "--format=%B", old).replace(base, off)
    author = git(root, "log", "-1", "--format=%an%n%ae", old).split("\n")
    env = {**os.environ, "GIT_AUTHOR_NAME": author[0], "GIT_AUTHOR_EMAIL": author[1]}
    new = subprocess.run(
        ["git", "commit-tree", f"{off}^{{tree}}", "-p", off, "-m", message],
        cwd=root, env=env, capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    git(root, "update-ref", ref, new, old)
    _refused(kb, made["proposal_id"], GateRefused, "not a commit of the branch")


def test_vouch_serves_no_word_of_what_a_decision_redacted(setup: Setup) -> None:
    """The claim's own approved proposal, read again after the redaction, shows none of
    its words (git history keeps them until `vouch forget`)."""
    kb, claims = setup.kb, setup.claims
    first = [r for r in call(kb, "kb.why", {"id": claims["secret"]}).get("proposals") or []]
    made = call(kb, "kb.redact", {"id": claims["secret"], "reason": "a key in chat"})
    _decide(kb, made["proposal_id"])
    pid = git(kb.root, "log", "--format=%(trailers:key=Vouch-Proposal,valueonly)", "-1",
              "--grep", "approve claim " + claims["secret"]).strip()  # fmt: skip
    assert pid
    screen = call(kb, "kb.read_proposal", {"id": pid})
    assert screen["state"] == "approved" and screen.get("redacted") is True
    assert TOKEN not in str(screen)
    del first


def test_the_log_forgets_without_an_index_and_in_any_spelling(setup: Setup) -> None:
    """No index here (nobody searched): the approval itself drops the log lines naming a
    redacted word, inside longer words, with a soft hyphen, fullwidth, or as a prefix."""
    kb, claims = setup.kb, setup.claims
    log = kb.dir / "searches.log.jsonl"
    wide = "".join(chr(ord(c) + 0xFEE0) for c in TOKEN)  # fullwidth letters and digits
    queries = [TOKEN + "vault", TOKEN[:5] + "*", TOKEN[:4] + "\u00ad" + TOKEN[4:], wide, "deploy"]
    import json

    log.write_text("".join(json.dumps({"query": q, "mode": "hybrid"}) + "\n" for q in queries))
    made = call(kb, "kb.redact", {"id": claims["secret"], "reason": "a key in chat"})
    _decide(kb, made["proposal_id"])
    kept = [json.loads(line)["query"] for line in log.read_text().splitlines()]
    assert kept == ["deploy"]


def test_an_old_bundle_does_not_bring_a_deleted_claim_back(setup: Setup, tmp_path: Path) -> None:
    kb, claims = setup.kb, setup.claims
    bundle = tmp_path / "before.tar.gz"
    call(kb, "kb.export", {"out": str(bundle)}, actor="")
    made = call(kb, "kb.delete", {"id": claims["shipping"], "reason": "vague"})
    _decide(kb, made["proposal_id"])
    check = call(kb, "kb.import_check", {"path": str(bundle)}, actor="")
    assert claims["shipping"] in check["conflict"] and claims["shipping"] not in check["new"]
    call(kb, "kb.import_apply", {"path": str(bundle)}, actor="")  # --on-conflict skip
    assert kb.read(kb_kind("claim"), claims["shipping"]) is None
