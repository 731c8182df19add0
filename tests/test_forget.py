"""`vouch forget ID --purge-history` (issue 38 item 2) on real repositories.

A unique token in an approved claim, another in a registered transcript: the plan names
what holds them (refs, a remote made from a clone taken before), a wrong confirmation or
a dirty work tree is refused with nothing written, and the confirmed purge leaves the
tokens in no object of the rewritten clone (every reachable object, `git grep` over all
revisions, the object store after gc, the SQLite index, the vector file, the logs) while
the other clone still holds them; `vouch doctor` and `vouch audit --verify` are clean.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import git
from gate_support import BOB, a_source, call, show

from vouch.store.kb import KB

CLAIM_TOKEN = "zqxjv-claim-7731"
TRANSCRIPT_TOKEN = "sk-live-wq83hzpl"
OTHER = "Deploys need a green CI run"
# a claim's id is a slug of its first words; the token comes after them (see
# test_a_token_in_the_id_is_refused for one that does not)
LONG_START = "The staging login for the deploy dashboard of the west region is"


def refs(root: Path) -> str:
    return git(root, "for-each-ref", "--format=%(refname) %(objectname)")


def snapshot(root: Path) -> tuple[str, str, str, str]:
    """Refs, status, the audit log and the object count: a refusal changes none."""
    return (
        refs(root),
        git(root, "status", "--porcelain", "--untracked-files=all", "--ignored"),
        (root / ".vouch" / "audit.log.jsonl").read_text(),
        git(root, "count-objects", "-v"),
    )


def holders(root: Path, token: str) -> list[str]:
    """Every object in the store (reachable or not, loose or packed) holding `token`."""
    listing = git(root, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)").split()
    proc = subprocess.run(
        ["git", "cat-file", "--batch"],
        cwd=root,
        input="".join(f"{s}\n" for s in listing).encode(),
        capture_output=True,
        check=True,
    )
    found = []
    data = proc.stdout
    pos = 0
    while pos < len(data):
        end = data.index(b"\n", pos)
        sha, _, size = data[pos:end].decode().split()
        body = data[end + 1 : end + 1 + int(size)]
        if token.encode() in body:
            found.append(sha)
        pos = end + 1 + int(size) + 1
    return found


def reachable_holders(root: Path, token: str) -> list[str]:
    """`git rev-list --all --objects` + `git cat-file` grep: reachable objects holding it."""
    listing = git(root, "rev-list", "--all", "--reflog", "--objects").split("\n")
    shas = [line.split(" ", 1)[0] for line in listing if line]
    out = []
    for sha in shas:
        body = subprocess.run(
            ["git", "cat-file", "-p", sha], cwd=root, capture_output=True, check=True
        ).stdout
        if token.encode() in body:
            out.append(sha)
    return out


def grep_all_revs(root: Path, token: str) -> str:
    revs = git(root, "rev-list", "--all").split()
    if not revs:
        return ""
    proc = subprocess.run(
        ["git", "grep", "-F", "-l", token, *revs], cwd=root, capture_output=True, text=True
    )
    return proc.stdout


def build(kb: KB) -> dict[str, Any]:
    """An approved claim holding CLAIM_TOKEN that cites a registered transcript holding
    TRANSCRIPT_TOKEN, and an unrelated approved claim that stays."""
    transcript = call(
        kb,
        "kb.register_source",
        {
            "content": f"user: the key is {TRANSCRIPT_TOKEN}\nassistant: noted\n",
            "locator": "chat/session-1.txt",
            "type": "transcript",
            "title": "session 1",
        },
    )
    source_id = str(transcript["id"])
    made = call(
        kb,
        "kb.propose_claim",
        {
            "text": f"{LONG_START} {CLAIM_TOKEN}",
            "evidence": [source_id],
        },
    )
    assert made["valid"], made
    show(kb, made["proposal_id"])
    call(kb, "kb.approve", {"proposal_id": made["proposal_id"]}, actor=BOB)
    other = call(kb, "kb.propose_claim", {"text": OTHER, "evidence": [a_source(kb)]})
    show(kb, other["proposal_id"])
    call(kb, "kb.approve", {"proposal_id": other["proposal_id"]}, actor=BOB)
    return {"claim": str(made["claim_id"]), "source": source_id, "other": str(other["claim_id"])}


def forget(run_cli: Any, root: Path, made: dict[str, Any], *extra: str) -> Any:
    args = ["forget", made["claim"], "--purge-history", "--also", made["source"]]
    args += ["--token", CLAIM_TOKEN, "--token", TRANSCRIPT_TOKEN, *extra]
    res = run_cli(*args, cwd=root)
    assert "Traceback" not in res.err and "E200" not in res.err, res.err
    return res


def confirm(made: dict[str, Any]) -> str:
    return f"{made['claim']},{made['source']}"


def clean_checks(run_cli: Any, root: Path) -> None:
    for args in (("doctor", "--json"), ("audit", "--verify", "--json")):
        res = run_cli(*args, cwd=root, terminal=False)
        assert res.code == 0, res.out + res.err


def files_holding(folder: Path, token: str) -> list[str]:
    """Every file under `folder` whose raw bytes hold `token` (packs are compressed:
    `holders` reads the object store itself)."""
    out = []
    for path in folder.rglob("*"):
        if path.is_file() and not path.is_symlink() and token.encode() in path.read_bytes():
            out.append(str(path))
    return out


@pytest.fixture
def built(kb_with_sources: KB, run_cli: Any, tmp_path: Path) -> tuple[KB, dict[str, Any], Path]:
    """The story, searched for the token (the search log and the index hold it), anchored,
    and cloned before the purge; the clone is this repository's remote `mirror`."""
    kb = kb_with_sources
    made = build(kb)
    assert run_cli("search", CLAIM_TOKEN, "--json", cwd=kb.root).code == 0
    assert run_cli("audit", "anchor", cwd=kb.root).code == 0
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(kb.root), str(clone))
    git(kb.root, "remote", "add", "mirror", str(clone))
    git(kb.root, "fetch", "-q", "mirror")
    git(kb.root, "tag", "v1")  # a plain tag on the history that holds the bytes
    return kb, made, clone


# -- the purge -------------------------------------------------------------------------
def test_purge_leaves_no_token_in_this_clone_and_names_the_remote_that_keeps_it(
    built: tuple[KB, dict[str, Any], Path], run_cli: Any
) -> None:
    kb, made, clone = built
    root = kb.root
    for token in (CLAIM_TOKEN, TRANSCRIPT_TOKEN):
        assert holders(root, token) and holders(clone, token)
    assert files_holding(root / ".vouch" / "index", CLAIM_TOKEN)  # the index had it
    assert files_holding(root / ".vouch", CLAIM_TOKEN)  # and the search log

    plan = forget(run_cli, root, made, "--json")
    assert plan.code == 0, plan.err
    shown = plan.json()
    assert shown["mode"] == "plan" and not shown["blockers"], shown["blockers"]
    assert shown["confirm"] == confirm(made)
    assert "refs/heads/main" in shown["refs"]["branches"]
    assert "refs/remotes/mirror/main" in shown["refs"]["remote-tracking"]
    assert "refs/tags/v1" in shown["refs"]["tags"]
    assert "refs/tags/vouch/audit/1" in shown["refs"]["audit anchors"]
    mirror = next(r for r in shown["remotes"] if r["name"] == "mirror")
    assert mirror["url"] == str(clone) and mirror["holds"] == "yes"
    assert any("git push --force --all mirror" in step for step in mirror["run"])
    human = forget(run_cli, root, made)
    assert f"mirror ({clone})" in human.out and f"--confirm {confirm(made)}" in human.out
    assert holders(root, CLAIM_TOKEN)  # planning changed nothing

    done = forget(run_cli, root, made, "--confirm", confirm(made), "--json")
    assert done.code == 0, done.err
    result = done.json()
    assert result["mode"] == "purged" and result["ok"], result
    assert result["bytes_left_here"] == 0 and result["token_objects_left_here"] == 0
    assert any(r["name"] == "mirror" for r in result["remotes"])

    for token in (CLAIM_TOKEN, TRANSCRIPT_TOKEN):
        assert holders(root, token) == [], token  # the whole object store, after gc
        assert reachable_holders(root, token) == [], token
        assert grep_all_revs(root, token) == "", token
        assert files_holding(root, token) == [], token  # work tree, index, logs, .git
        assert holders(clone, token), token  # the clone made before keeps it
    assert not (root / ".vouch" / "searches.log.jsonl").exists()
    assert git(root, "for-each-ref", "refs/vouch-forget/") == ""
    assert git(root, "status", "--porcelain") == ""
    # the rest of the knowledge is intact and searchable in the rebuilt index
    found = run_cli("search", "green CI run", "--json", cwd=root, terminal=False)
    assert made["other"] in found.out
    assert run_cli("show", made["claim"], cwd=root).code == 1
    # the audit log says a purge happened, by whom, of what, and no content
    events = [
        json.loads(line) for line in (root / ".vouch/audit.log.jsonl").read_text().splitlines()
    ]
    purge = [e for e in events if e["event"] == "history.purge"]
    assert len(purge) == 1
    assert purge[0]["object_ids"] == [made["claim"], made["source"]]
    assert purge[0]["actor"] and purge[0]["data"]["commits_rewritten"] >= 1
    # doctor and the audit chain (its anchor tag made again on the new history) agree
    clean_checks(run_cli, root)
    anchor = git(root, "rev-parse", "refs/tags/vouch/audit/1^{commit}").strip()
    assert git(root, "merge-base", "--is-ancestor", anchor, "HEAD") == ""
