"""Redacting a source (issue 38 item 1): `vouch redact <source-id>` is a change proposal
a person approves; its bytes go, its meta.yaml stays as a tombstone so every citation
resolves — to "redacted" — and the quotes of the evidence citing it go too. After the
approval no store holds the words (HEAD, the index, the search log, the lint cache); the
bytes are never registered, cited or imported again, and a plain commit that puts them
back is named by lint and doctor."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import NamedTuple

import pytest
from built_once import built_once, copied, started
from conftest import git
from gate_support import BOB, call, show
from warm_support import answered, vouch, wait_gone

from vouch.errors import GateRefused, NotFound, Redacted, ValidationFailed
from vouch.history.citations import source_text
from vouch.history.snapshot import Snapshot
from vouch.kinds import KINDS
from vouch.store.kb import KB

TOKEN = "zumbrakeet42"  # only in the source's bytes and one evidence quote, past the
# words the quoting evidence's id is made of (ids stay in the audit log: THREAT-MODEL §13)
NOTES = [
    "# Incident 7",
    "",
    "The deploy broke at noon.",
    f"The root password was pasted into this chat by mistake, and it is {TOKEN}.",
    "We rotated every key the same day.",
    "",
]


class Setup(NamedTuple):
    kb: KB
    source: str
    quoted: str  # evidence quoting the token
    claim: str  # cites the span and the quoting evidence
    other: str  # a claim citing another source


def _approve(kb: KB, pid: str) -> dict[str, object]:
    show(kb, pid)
    return dict(call(kb, "kb.approve", {"proposal_id": pid}, actor=BOB))


def _claim(kb: KB, text: str, evidence: list[str]) -> str:
    made = call(kb, "kb.propose_claim", {"text": text, "evidence": evidence})
    assert made["valid"], made
    _approve(kb, made["proposal_id"])
    return str(made["claim_id"])


def _built(root: Path) -> dict[str, str]:
    kb = started(root)
    sid = call(
        kb,
        "kb.register_source",
        {"content": "\n".join(NOTES), "locator": "chat/incident-7", "title": "Incident 7"},
    )["id"]
    plain = call(
        kb, "kb.register_source", {"content": "Rotate keys every quarter.\n", "locator": "k"}
    )["id"]
    quoted = call(
        kb, "kb.register_evidence", {"source_id": sid, "locator": "L4", "quote": NOTES[3]}
    )["id"]
    return {
        "source": sid,
        "quoted": quoted,
        "claim": _claim(kb, "The deploy broke at noon", [f"{sid}:L3", quoted]),
        "other": _claim(kb, "Keys rotate every quarter", [plain]),
    }


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """The repository `_built` makes, once a session (`built_once`); each test a copy."""
    return built_once(tmp_path_factory, "source-redaction", _built)


@pytest.fixture
def setup(built: tuple[Path, dict[str, str]], tmp_path: Path) -> Setup:
    template, ids = built
    root = copied(template, tmp_path / "repo")
    return Setup(KB.open(root), ids["source"], ids["quoted"], ids["claim"], ids["other"])


def _refs(root: Path) -> str:
    return git(root, "for-each-ref", "--format=%(refname) %(objectname)")


def _holding(root: Path, token: str) -> list[str]:
    """Every file of the repository (work tree, .git but its object store) and every
    object HEAD's tree reaches that holds `token`."""
    found = [
        str(p.relative_to(root))
        for p in root.rglob("*")
        if p.is_file() and ".git/objects" not in p.as_posix() and token.encode() in p.read_bytes()
    ]
    grep = subprocess.run(
        ["git", "grep", "-l", "-F", token, "HEAD"], cwd=root, capture_output=True, text=True
    )
    return sorted(found + grep.stdout.split())


def _hits(kb: KB, query: str) -> list[object]:
    found = call(kb, "kb.search", {"query": query})
    return list(found["results"] if isinstance(found, dict) else found)


def _errors(kb: KB) -> list[tuple[str, str]]:
    lint = call(kb, "kb.lint")
    return [(i["kind"], i.get("id") or "") for i in lint["issues"] if i["severity"] == "error"]


def _redact(s: Setup) -> dict[str, object]:
    made = call(s.kb, "kb.redact", {"id": s.source, "reason": "a password in a chat log"})
    return _approve(s.kb, str(made["proposal_id"]))


def test_a_redacted_source_leaves_no_byte_in_any_store(setup: Setup) -> None:
    kb = setup.kb
    assert _hits(kb, TOKEN)  # indexed (the source's chunk), and the query logged
    call(kb, "kb.lint")  # the lint cache keeps what each file held
    assert _holding(kb.root, TOKEN)
    made = call(kb, "kb.redact", {"id": setup.source, "reason": "a password in a chat log"})
    touched = sorted((t["kind"], t["what"]) for t in made["touches"])
    assert touched == [
        ("claim", "cites the evidence without the quote"),
        ("evidence", "in place of a quoting one"),
        ("evidence", "span hash removed"),
        ("source", "redacted"),
    ]
    screen = call(kb, "kb.read_proposal", {"id": made["proposal_id"]})
    assert screen["problems"] == [] and screen["object_kind"] == "source"
    assert "the source's content" in screen["diff"]  # named, its bytes not printed
    rests = [r["id"] for r in screen["impact"]["referenced_by"] if r["kind"] == "claim"]
    assert rests == [setup.claim]  # the reviewer sees the claim resting on it
    approved = _approve(kb, str(made["proposal_id"]))
    assert approved["change"] == "redact"

    held = _holding(kb.root, TOKEN)
    assert held == []  # HEAD, the index, the log, the lint cache
    assert _hits(kb, TOKEN) == []
    assert setup.source not in {h["id"] for h in _hits(kb, "rotated every key")}  # type: ignore[index]
    meta = kb.read(KINDS["source"], setup.source)
    assert meta["redacted_at"] and meta["id"] == setup.source and "title" not in meta
    assert kb.read(KINDS["evidence"], setup.quoted) is None  # its id was its quote's
    cites = kb.read(KINDS["claim"], setup.claim)["evidence"]
    assert len(cites) == 2 and setup.quoted not in cites
    for eid in cites:
        evidence = kb.read(KINDS["evidence"], eid)
        assert evidence["source_id"] == setup.source and {"quote", "hash"}.isdisjoint(evidence)
    # every citation still resolves — to "redacted"
    why = call(kb, "kb.why", {"id": setup.claim})
    assert [c.get("redacted") for c in why["evidence"]] == [True, True]
    assert {c["problem"] for c in why["evidence"]} == {"its source was redacted by a decision"}
    with pytest.raises(Redacted):  # `vouch show SOURCE --content`
        source_text(Snapshot(kb), setup.source)
    # and everything checks: the tombstone is no missing content, the evidence no forgery
    assert call(kb, "kb.source_verify")["ok"]
    assert _errors(kb) == []
    lint = call(kb, "kb.lint")
    assert [(i["kind"], i["id"]) for i in lint["issues"] if i["kind"] == "cites-redacted"] == [
        ("cites-redacted", setup.claim)
    ]
    doctor = call(kb, "kb.doctor")
    assert [i for i in doctor["issues"] if i["severity"] == "error"] == [], doctor["issues"]
    assert _hits(kb, "Keys rotate every quarter")  # the rebuilt index answers


def test_ci_passes_a_redaction_and_the_hook_refuses_a_forged_one(setup: Setup) -> None:
    """`lint --since` (CI) passes the approval commit, which changes the source's folder
    itself; a plain commit that marks a source redacted and deletes its bytes — no
    decision — is refused by the staged lint (the pre-commit hook) and named by lint."""
    kb = setup.kb
    root = kb.root
    base = git(root, "rev-parse", "HEAD").strip()
    _redact(setup)
    since = call(kb, "kb.lint", {"since": base})
    assert [i for i in since["issues"] if i["severity"] == "error"] == [], since["issues"]
    # the other source, "redacted" by hand
    plain = next(
        p.parent for p in (kb.dir / "sources").rglob("meta.yaml") if setup.source not in str(p)
    )
    for content in plain.glob("content*"):
        git(root, "rm", "-q", str(content))
    meta = plain / "meta.yaml"
    meta.write_text(meta.read_text() + "redacted_at: '2026-01-01T00:00:00Z'\n")
    git(root, "add", str(meta))
    staged = call(kb, "kb.lint", {"staged": True})
    assert ("unapproved-redaction", plain.name) in {
        (i["kind"], i.get("id")) for i in staged["issues"] if i["severity"] == "error"
    }
    git(root, "commit", "-qm", "forge", "--no-verify")
    assert ("unapproved-redaction", plain.name) in _errors(kb)


def test_redacted_bytes_are_never_registered_again(setup: Setup) -> None:
    kb = setup.kb
    _redact(setup)
    before = _refs(kb.root), git(kb.root, "status", "--porcelain")
    with pytest.raises(Redacted, match="redacted"):
        call(kb, "kb.register_source", {"content": "\n".join(NOTES), "locator": "again"})
    assert (_refs(kb.root), git(kb.root, "status", "--porcelain")) == before
    assert not list((kb.dir / "sources").rglob("content*"))[:0]  # (none of its files)
    folder = kb.dir / "sources" / setup.source[:2] / setup.source
    assert sorted(p.name for p in folder.iterdir()) == ["meta.yaml"]


@pytest.mark.parametrize("cite", ["source", "pointer", "evidence"])
def test_a_redacted_source_cannot_be_cited(setup: Setup, cite: str) -> None:
    kb = setup.kb
    _redact(setup)
    plain = kb.read(KINDS["claim"], setup.claim)["evidence"][0]  # points into it, no quote
    item = {"source": setup.source, "pointer": f"{setup.source}:L3", "evidence": plain}
    made = call(kb, "kb.propose_claim", {"text": "Noon again", "evidence": [item[cite]]})
    assert not made["valid"] and "redact" in " ".join(made["errors"]), made


def test_a_plain_commit_that_restores_the_bytes_is_named(setup: Setup) -> None:
    """`git checkout` of the old files and an ordinary commit put the words back: lint
    names the content beside a tombstone; doctor names a source whose redaction the audit
    log records but whose meta is no tombstone any more."""
    kb = setup.kb
    root = kb.root
    _redact(setup)
    folder = f".vouch/sources/{setup.source[:2]}/{setup.source}"
    redaction = git(root, "rev-parse", "HEAD").strip()
    content = git(root, "ls-tree", "--name-only", f"{redaction}^", folder + "/").split()
    assert len(content) == 2  # meta.yaml and the content file, before
    git(root, "checkout", f"{redaction}^", "--", next(p for p in content if "content" in p))
    git(root, "commit", "-qm", "restore")
    assert ("redacted-content", setup.source) in _errors(kb)
    assert not call(kb, "kb.source_verify")["ok"]
    git(root, "checkout", f"{redaction}^", "--", folder + "/meta.yaml")
    staged = call(kb, "kb.lint", {"staged": True})  # the pre-commit hook
    assert ("unredacted", setup.source) in {(i["kind"], i.get("id")) for i in staged["issues"]}
    git(root, "commit", "-qm", "restore the meta too", "--no-verify")
    assert ("unredacted", setup.source) in _errors(kb)


def test_an_old_bundle_does_not_bring_redacted_bytes_back(setup: Setup, tmp_path: Path) -> None:
    kb = setup.kb
    bundle = tmp_path / "before.tar.gz"
    call(kb, "kb.export", {"out": str(bundle)}, actor="")
    _redact(setup)
    before = _refs(kb.root)
    with pytest.raises(ValidationFailed, match="never brings its bytes back"):
        call(kb, "kb.import_apply", {"path": str(bundle), "on_conflict": "overwrite"}, actor="")
    assert _refs(kb.root) == before
    call(kb, "kb.import_apply", {"path": str(bundle)}, actor="")  # keeps ours
    assert _holding(kb.root, TOKEN) == []


def test_the_redacted_source_already_is_refused(setup: Setup) -> None:
    _redact(setup)
    with pytest.raises(ValidationFailed, match="already redacted"):
        call(setup.kb, "kb.redact", {"id": setup.source, "reason": "again"})


def test_a_redacted_source_cannot_be_cited_again_by_a_change(setup: Setup) -> None:
    """A re-citation (a change proposal, or `vouch cite`) into the tombstone is refused."""
    kb = setup.kb
    _redact(setup)
    before = _refs(kb.root)
    for evidence in (setup.source, f"{setup.source}:L3"):
        with pytest.raises(ValidationFailed, match="redacted"):
            call(kb, "kb.propose_change", {"id": setup.other, "op": "recite", "evidence": evidence})
    assert _refs(kb.root) == before


@pytest.mark.parametrize("transport", ["cli", "jsonl"])
def test_an_approval_ends_the_warm_process_that_held_the_words(
    setup: Setup, transport: str
) -> None:
    """A running `vouch warm` process answered a search for the token (its memory holds
    the words): `vouch approve` of the redaction ends it; the next search starts anew from
    the rebuilt index and finds nothing."""
    kb = setup.kb
    root = kb.root
    started = vouch("warm", "start", "--json", "--idle-seconds", "120", cwd=root)
    assert started.returncode == 0, started.stderr
    pid = int(json.loads(started.stdout)["pid"])
    try:
        found = vouch("search", TOKEN, "--json", cwd=root)
        assert TOKEN in found.stdout and answered(kb) == 1  # the warm process answered
        made = call(kb, "kb.redact", {"id": setup.source, "reason": "a password"})
        show(kb, str(made["proposal_id"]))
        if transport == "cli":
            approve = vouch("approve", str(made["proposal_id"]), "--as", BOB, cwd=root)
            assert approve.returncode == 0, approve.stdout + approve.stderr
        else:
            from gate_support import ctx as context_of

            from vouch.servers.jsonl import handle_line

            line = json.dumps(
                {"id": 1, "method": "kb.approve", "params": {"proposal_id": made["proposal_id"]}}
            )
            answer = handle_line(context_of(kb, BOB), line.encode())
            assert answer["ok"], answer
        wait_gone(pid)
        again = vouch("search", TOKEN, "--json", cwd=root)
        assert again.returncode == 0 and json.loads(again.stdout)["results"] == []
    finally:
        vouch("warm", "stop", cwd=root)


def test_a_proposal_made_before_the_redaction_shows_none_of_its_words(setup: Setup) -> None:
    """An open proposal citing the source, made before the redaction, still holds the old
    tree: reading it (the default agent tool `kb.read_proposal`) shows no line, quote or
    title of the source, and `vouch show` of an object only its base held finds nothing."""
    kb = setup.kb
    made = call(kb, "kb.propose_claim", {"text": "Noon was bad", "evidence": [setup.quoted]})
    assert made["valid"], made
    before = call(kb, "kb.read_proposal", {"id": made["proposal_id"]})
    assert TOKEN in str(before["citations"])
    _redact(setup)
    after = call(kb, "kb.read_proposal", {"id": made["proposal_id"]})
    assert TOKEN not in str(after) and "Incident 7" not in str(after["citations"])
    assert [c.get("redacted") for c in after["citations"]] == [True]
    from vouch.cli.core import find_object
    from vouch.methods.context import CallContext

    with pytest.raises(NotFound):
        find_object(CallContext(kb_path=str(kb.root)), setup.quoted)


def test_a_merge_that_brings_a_quote_back_is_named_and_redacting_again_removes_it(
    setup: Setup,
) -> None:
    """A branch made before the redaction still holds the quoting evidence; merged with
    git, it comes back into a tombstone's source: lint names it (`redacted-quote`), and
    `vouch redact` of the source again removes what is left."""
    kb = setup.kb
    root = kb.root
    _redact(setup)
    rel = ".vouch/" + KINDS["evidence"].path_for(setup.quoted)
    git(root, "checkout", "HEAD^", "--", rel)  # as the merge would
    git(root, "commit", "-qm", "a merge's result", "--no-verify")
    assert ("redacted-quote", setup.quoted) in _errors(kb)
    again = call(kb, "kb.redact", {"id": setup.source, "reason": "what the merge brought back"})
    assert {t["what"] for t in again["touches"]} == {"in place of a quoting one"}
    _approve(kb, str(again["proposal_id"]))
    assert _errors(kb) == [] and _holding(root, TOKEN) == []


def test_a_heading_anchor_into_the_source_goes_with_it(setup: Setup) -> None:
    kb = setup.kb
    anchored = call(
        kb, "kb.register_evidence", {"source_id": setup.source, "locator": "#incident-7"}
    )["id"]
    claim = _claim(kb, "There was an incident", [anchored])
    _redact(setup)
    [now] = kb.read(KINDS["claim"], claim)["evidence"]
    assert now != anchored and kb.read(KINDS["evidence"], now)["locator"] == "#redacted"
    assert "#incident-7" not in str(call(kb, "kb.why", {"id": claim}))
    assert _errors(kb) == []


def test_a_page_cannot_list_a_redacted_source(setup: Setup) -> None:
    kb = setup.kb
    _redact(setup)
    made = call(kb, "kb.propose_page", {"title": "Incidents", "sources": [setup.source]})
    assert not made["valid"] and "redacted" in " ".join(made["errors"]), made


def test_a_re_citation_may_drop_a_cited_source(setup: Setup) -> None:
    """A claim citing a source by its id is re-cited with `--drop <source-id>`: the
    request's trailers carry the source id, and approve takes it."""
    kb = setup.kb
    plain = kb.read(KINDS["claim"], setup.other)["evidence"][0]
    made = call(
        kb,
        "kb.propose_change",
        {"id": setup.other, "op": "recite", "evidence": f"{plain}:L1", "drop": [plain]},
    )
    _approve(kb, str(made["proposal_id"]))
    assert plain not in kb.read(KINDS["claim"], setup.other)["evidence"]


def test_an_import_does_not_redact(setup: Setup, tmp_path: Path) -> None:
    """A bundle made after a redaction, imported into a clone where the source is not
    redacted: overwriting would leave a tombstone beside the bytes — refused; a person
    proposes the redaction there."""
    kb = setup.kb
    other = tmp_path / "other"
    shutil.copytree(kb.root, other, symlinks=True)
    _redact(setup)
    bundle = tmp_path / "after.tar.gz"
    call(kb, "kb.export", {"out": str(bundle)}, actor="")
    there = KB.open(other)
    before = _refs(other)
    with pytest.raises(ValidationFailed, match="an import does not redact"):
        call(there, "kb.import_apply", {"path": str(bundle), "on_conflict": "overwrite"}, actor="")
    assert _refs(other) == before


def test_a_redaction_refuses_to_re_point_what_came_to_cite_it_since(setup: Setup) -> None:
    """The claims a redaction re-points are named when it is proposed (the reviewer sees
    them); one that came to cite the quoting evidence since is not edited unreviewed:
    approve refuses, nothing written."""
    kb = setup.kb
    made = call(kb, "kb.redact", {"id": setup.source, "reason": "a password"})
    assert made["change"]["unlink"] == [setup.claim]
    _claim(kb, "The password leaked at noon", [setup.quoted])
    show(kb, str(made["proposal_id"]))
    before = _refs(kb.root), git(kb.root, "status", "--porcelain")
    with pytest.raises(GateRefused, match="nobody reviewed"):
        call(kb, "kb.approve", {"proposal_id": made["proposal_id"]}, actor=BOB)
    assert (_refs(kb.root), git(kb.root, "status", "--porcelain")) == before


def test_the_review_names_the_other_versions_of_the_file(setup: Setup) -> None:
    """Redacting one version of a file leaves the others: the review screen names each
    one that still holds its bytes, with the command that redacts it."""
    kb = setup.kb
    newer = call(
        kb,
        "kb.register_source",
        {"content": "# Incident 7\n\nfixed\n", "locator": "chat/incident-7"},
    )["id"]
    made = call(kb, "kb.redact", {"id": newer, "reason": "the whole log"})
    screen = call(kb, "kb.read_proposal", {"id": made["proposal_id"]})
    assert [v["id"] for v in screen["other_versions"]] == [setup.source]
    from vouch.cli.human_review import proposal as shown_to_person

    assert f"vouch redact {setup.source}" in shown_to_person(screen)
