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
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from built_once import built_once
from conftest import _build_kb_with_sources, git
from gate_support import BOB, a_source, call, keypair, show, vouch_forked, vouch_proc

from vouch.errors import GateRefused
from vouch.methods import registry as ops
from vouch.methods.context import CallContext
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


def _build_story(root: Path) -> dict[str, Any]:
    _build_kb_with_sources(root)
    made = build(KB.open(root))
    shutil.rmtree(root / ".vouch" / "index", ignore_errors=True)  # it names its folder
    return made


@pytest.fixture
def built(
    tmp_path_factory: pytest.TempPathFactory, run_cli: Any, tmp_path: Path
) -> tuple[KB, dict[str, Any], Path]:
    """The story (built once a session, copied), searched for the token (the search log
    and the index hold it), anchored, and cloned before the purge; the clone is this
    repository's remote `mirror`."""
    story, made = built_once(tmp_path_factory, "forget-story", _build_story)
    root = tmp_path / "repo"
    shutil.copytree(story, root, symlinks=True)
    git(root, "update-index", "-q", "--refresh")  # new inodes: git's stat data catches up
    kb = KB.open(root)
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


# -- refusals: nothing written ---------------------------------------------------------
def test_a_wrong_confirmation_is_refused_with_nothing_written(
    built: tuple[KB, dict[str, Any], Path], run_cli: Any
) -> None:
    kb, made, _ = built
    before = snapshot(kb.root)
    for wrong in (made["claim"], "yes", f"{made['source']},{made['claim']}", ""):
        res = forget(run_cli, kb.root, made, "--confirm", wrong, "--json")
        assert res.code == 1 and "E100" in res.out + res.err, res.out + res.err
        assert "does not match" in res.out + res.err
    assert snapshot(kb.root) == before
    assert not (kb.state_dir / "forget.json").exists()
    assert holders(kb.root, CLAIM_TOKEN)


def test_a_dirty_work_tree_is_refused_with_nothing_written(
    built: tuple[KB, dict[str, Any], Path], run_cli: Any
) -> None:
    kb, made, _ = built
    (kb.root / "README.md").write_text("work in progress\n")
    (kb.root / "scratch.txt").write_text("untracked\n")
    before = snapshot(kb.root)
    plan = forget(run_cli, kb.root, made, "--json").json()
    assert [b["kind"] for b in plan["blockers"]] == ["dirty"]
    res = forget(run_cli, kb.root, made, "--confirm", confirm(made))
    assert res.code == 1 and "E104" in res.err and "uncommitted" in res.err, res.err
    assert snapshot(kb.root) == before
    assert (kb.root / "README.md").read_text() == "work in progress\n"


def test_a_pending_proposal_holding_the_bytes_is_named_and_refused(
    built: tuple[KB, dict[str, Any], Path], run_cli: Any
) -> None:
    kb, made, _ = built
    later = call(
        kb, "kb.propose_claim", {"text": "Rollback uses the script", "evidence": [a_source(kb)]}
    )
    before = snapshot(kb.root)
    plan = forget(run_cli, kb.root, made, "--json").json()
    pending = [b for b in plan["blockers"] if b["kind"] == "pending"]
    assert pending and later["proposal_id"] in pending[0]["message"]
    res = forget(run_cli, kb.root, made, "--confirm", confirm(made))
    assert res.code == 1 and later["proposal_id"] in res.err, res.err
    assert snapshot(kb.root) == before


def test_what_still_cites_the_object_is_named_and_refused(
    built: tuple[KB, dict[str, Any], Path], run_cli: Any
) -> None:
    """Forgetting the transcript alone would leave the approved claim citing nothing."""
    kb, made, _ = built
    before = snapshot(kb.root)
    res = run_cli("forget", made["source"], "--purge-history", "--json", cwd=kb.root)
    cited = [b for b in res.json()["blockers"] if b["kind"] == "cited"]
    assert cited and made["claim"] in cited[0]["message"]
    res = run_cli(
        "forget", made["source"], "--purge-history", "--confirm", made["source"], cwd=kb.root
    )
    assert res.code == 1 and "E104" in res.err and made["claim"] in res.err
    assert snapshot(kb.root) == before


def test_a_token_outside_the_forgotten_objects_is_named_and_refused(
    built: tuple[KB, dict[str, Any], Path], run_cli: Any
) -> None:
    kb, made, _ = built
    (kb.root / "notes.txt").write_text(f"copied: {TRANSCRIPT_TOKEN}\n")
    git(kb.root, "add", "notes.txt")
    git(kb.root, "commit", "-qm", "notes")
    before = snapshot(kb.root)
    plan = forget(run_cli, kb.root, made, "--json").json()
    assert [b["kind"] for b in plan["blockers"]] == ["token-elsewhere"]
    assert plan["uncovered"][0]["path"] == "notes.txt"
    res = forget(run_cli, kb.root, made, "--confirm", confirm(made))
    assert res.code == 1 and "notes.txt" in res.err
    assert snapshot(kb.root) == before


def test_a_token_in_the_id_is_refused(kb_with_sources: KB, run_cli: Any) -> None:
    """An id is a slug of the first words, and ids stay in the audit chain: said, not hidden."""
    kb = kb_with_sources
    made = call(kb, "kb.propose_claim", {"text": f"Key {CLAIM_TOKEN}", "evidence": [a_source(kb)]})
    show(kb, made["proposal_id"])
    call(kb, "kb.approve", {"proposal_id": made["proposal_id"]}, actor=BOB)
    claim = str(made["claim_id"])
    assert CLAIM_TOKEN in claim
    res = run_cli("forget", claim, "--purge-history", "--token", CLAIM_TOKEN, "--json", cwd=kb.root)
    assert [b["kind"] for b in res.json()["blockers"]] == ["token-in-id"]


def test_usage_errors(built: tuple[KB, dict[str, Any], Path], run_cli: Any) -> None:
    kb, made, _ = built
    before = snapshot(kb.root)
    res = run_cli("forget", made["claim"], cwd=kb.root)
    assert res.code == 1 and "--purge-history" in res.err
    res = run_cli("forget", "no-such-claim-0badc0de", "--purge-history", cwd=kb.root)
    assert res.code == 1 and "E101" in res.err
    res = run_cli("forget", "../../etc", "--purge-history", cwd=kb.root)
    assert res.code == 1 and "Traceback" not in res.err
    assert snapshot(kb.root) == before


def test_never_over_an_agent_transport_nor_as_a_declared_agent(
    built: tuple[KB, dict[str, Any], Path], run_cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    kb, made, _ = built
    before = snapshot(kb.root)
    params = {
        "id": made["claim"],
        "also": [made["source"]],
        "purge_history": True,
        "confirm": confirm(made),
    }
    for transport in ("jsonl", "mcp"):
        server = CallContext(
            kb_path=str(kb.root), transport=transport, agent="alice", allow_decisions=True
        )
        with pytest.raises(GateRefused, match="never over"):
            ops.invoke(server, "kb.forget", params)
    monkeypatch.setenv("VOUCH_AGENT", "alice")
    res = forget(run_cli, kb.root, made, "--confirm", confirm(made))
    assert res.code == 1 and "E104" in res.err and "agent" in res.err, res.err
    assert snapshot(kb.root) == before


# -- crash safety: a kill at each step, then the same command finishes -------------------
@pytest.mark.parametrize(
    "step", ["purge-recorded", "purge-imported", "purge-switched", "purge-pruned"]
)
def test_a_kill_leaves_the_old_history_or_the_new_and_the_same_command_finishes(
    built: tuple[KB, dict[str, Any], Path], run_cli: Any, step: str
) -> None:
    kb, made, _ = built
    root = kb.root
    args = ["forget", made["claim"], "--purge-history", "--also", made["source"]]
    args += ["--token", CLAIM_TOKEN, "--token", TRANSCRIPT_TOKEN, "--confirm", confirm(made)]
    killed = vouch_forked(root, *args, env={"VOUCH_FAULT": step, "VOUCH_NO_WARM": "1"})
    assert killed.returncode == 86, killed.stderr
    main = git(root, "rev-parse", "refs/heads/main").strip()
    blob_reachable = bool(reachable_holders(root, CLAIM_TOKEN))
    if step in ("purge-recorded", "purge-imported"):
        # the old history, whole: the claim is still in HEAD, no ref moved
        assert blob_reachable and (root / ".vouch").rglob(f"{made['claim']}.yaml")
        assert git(root, "cat-file", "-e", f"{main}:.vouch/audit.log.jsonl") == ""
    else:
        # the new history, whole: no ref (but the reflogs) reaches the bytes
        assert git(root, "rev-list", "--all", "--objects").count(made["claim"]) == 0
    plan = run_cli(*args[:-2], "--json", cwd=root).json()
    assert plan["interrupted"] and plan["interrupted"]["ids"] == [made["claim"], made["source"]]
    done = run_cli(*args, "--json", cwd=root)
    assert done.code == 0, done.out + done.err
    for token in (CLAIM_TOKEN, TRANSCRIPT_TOKEN):
        assert holders(root, token) == [], token
    assert git(root, "for-each-ref", "refs/vouch-forget/") == ""
    assert git(root, "status", "--porcelain") == ""
    log = (root / ".vouch/audit.log.jsonl").read_text()
    assert log.count('"history.purge"') == 1  # recorded once, whatever the step
    clean_checks(run_cli, root)


# -- the purge event relaxes nothing for a forger ----------------------------------------
@pytest.mark.parametrize("typed", [True, False])
def test_a_forged_purge_event_does_not_hide_a_deleted_approved_claim(
    built: tuple[KB, dict[str, Any], Path], run_cli: Any, typed: bool
) -> None:
    """A commit that deletes an approved claim and appends a well-chained history.purge
    event naming it — typed as vouch's own purge write or as a plain commit — is still
    reported: a purge write changes no knowledge, and only a rewrite removes the claim
    from the commit that approved it."""
    from vouch.store import writer

    kb, made, _ = built
    root = kb.root
    head = git(root, "rev-parse", "HEAD").strip()
    logs, chain = writer.audit_changes(
        kb, head, [("history.purge", "mallory", [made["claim"]], {})]
    )
    for rel, data in logs.items():
        (kb.dir / rel).write_bytes(data)
    claim_file = next(kb.dir.rglob(f"{made['claim']}.yaml"))
    git(root, "rm", "-q", str(claim_file))
    git(root, "add", "-A", ".vouch")
    trailers = f"\n\nVouch-Event: history.purge\nVouch-Actor: mallory\nVouch-Audit-Head: {chain}"
    git(root, "commit", "-qm", "forget 1 object(s): history purged" + (trailers if typed else ""))
    res = run_cli("doctor", "--json", cwd=root, terminal=False)
    assert res.code == 1, res.out
    why = "a history.purge write changes no knowledge" if typed else "is not a vouch commit"
    assert why in res.out, res.out
    # plain lint (no audit proof) still sees the approved claim deleted outside vouch
    res = run_cli("lint", "--json", cwd=root, terminal=False)
    assert res.code == 1 and "deleted outside vouch" in res.out, res.out


def test_the_purged_bytes_committed_back_are_reported(
    built: tuple[KB, dict[str, Any], Path], run_cli: Any
) -> None:
    """After a purge, a plain commit that puts the forgotten claim back (its bytes from a
    clone made before) is not excused by the purge event: the purge holds only while no
    commit of the branch holds the file."""
    kb, made, clone = built
    root = kb.root
    done = forget(run_cli, root, made, "--confirm", confirm(made), "--json")
    assert done.code == 0, done.err
    rel = next(p for p in done.json()["paths"] if made["claim"] in p)
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    (root / rel).write_bytes((clone / rel).read_bytes())
    git(root, "add", rel)
    git(root, "commit", "-qm", "restore a note")
    res = run_cli("doctor", "--json", cwd=root, terminal=False)
    assert res.code == 1, res.out
    assert "approved_by" in res.out and made["claim"][:20] in res.out, res.out


@pytest.mark.skipif(
    subprocess.run(["which", "ssh-keygen"], capture_output=True).returncode != 0,
    reason="ssh-keygen is not installed",
)
def test_a_branch_that_does_not_hold_the_bytes_keeps_its_commits_and_signatures(
    built: tuple[KB, dict[str, Any], Path], run_cli: Any, tmp_path: Path
) -> None:
    """fast-export drops commit signatures; a ref that never reached the bytes is not
    moved, so its signed commits stay as they were."""
    kb, made, _ = built
    root = kb.root
    key = keypair(tmp_path, "side")
    first = git(root, "rev-list", "--max-parents=0", "HEAD").strip()
    git(root, "branch", "side", first)
    git(root, "worktree", "add", "-q", str(tmp_path / "side"), "side")
    (tmp_path / "side" / "side.txt").write_text("side work\n")
    git(tmp_path / "side", "add", "side.txt")
    git(
        tmp_path / "side",
        "-c", "gpg.format=ssh", "-c", f"user.signingkey={key}",
        "commit", "-S", "-qm", "signed side work",
    )  # fmt: skip
    git(root, "worktree", "remove", str(tmp_path / "side"))
    side = git(root, "rev-parse", "side").strip()
    assert "gpgsig" in git(root, "cat-file", "commit", side)
    done = forget(run_cli, root, made, "--confirm", confirm(made), "--json")
    assert done.code == 0, done.err
    assert "refs/heads/side" not in done.json()["refs_moved"]
    assert git(root, "rev-parse", "side").strip() == side
    assert "gpgsig" in git(root, "cat-file", "commit", side)


def test_the_warm_process_that_held_the_index_is_stopped(
    built: tuple[KB, dict[str, Any], Path], run_cli: Any
) -> None:
    kb, made, _ = built
    root = kb.root
    started = vouch_proc(root, "warm", "start", "--json", "--idle-seconds", "120")
    assert started.returncode == 0, started.stderr
    try:
        hit = vouch_proc(root, "search", CLAIM_TOKEN, "--json")
        assert made["claim"] in hit.stdout
        done = forget(run_cli, root, made, "--confirm", confirm(made), "--json")
        assert done.code == 0, done.err
        assert "warm process" in done.json()["cleared"]
        status = vouch_proc(root, "warm", "status", "--json")
        assert json.loads(status.stdout)["running"] is False, status.stdout
        again = vouch_proc(root, "search", CLAIM_TOKEN, "--json", env={"VOUCH_NO_AUTO_WARM": "1"})
        assert made["claim"] not in again.stdout
    finally:
        vouch_proc(root, "warm", "stop")


def test_a_warm_process_that_did_not_answer_the_stop_refuses_its_next_search(
    built: tuple[KB, dict[str, Any], Path], run_cli: Any
) -> None:
    """Stopped (SIGSTOP) while the purge asks it to stop, the warm process wakes with the
    old index in memory: it refuses the next search (which runs cold) and exits."""
    kb, made, _ = built
    root = kb.root
    started = vouch_proc(root, "warm", "start", "--json", "--idle-seconds", "120")
    assert started.returncode == 0, started.stderr
    pid = int(json.loads(vouch_proc(root, "warm", "status", "--json").stdout)["pid"])
    try:
        os.kill(pid, signal.SIGSTOP)
        try:
            done = forget(run_cli, root, made, "--confirm", confirm(made), "--json")
            assert done.code == 0, done.err
            assert "warm process" not in done.json()["cleared"]
        finally:
            os.kill(pid, signal.SIGCONT)
        for _ in range(50):  # awake and answering (a status is answered, never refused)
            status = vouch_proc(root, "warm", "status", "--json")
            if json.loads(status.stdout).get("running"):
                break
            time.sleep(0.1)
        again = vouch_proc(root, "search", CLAIM_TOKEN, "--json", env={"VOUCH_NO_AUTO_WARM": "1"})
        assert again.returncode in (0, 1) and made["claim"] not in again.stdout, again.stdout
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and Path(f"/proc/{pid}").exists():
            if (Path(f"/proc/{pid}/stat").read_text().split()[2:3] or ["?"])[0] == "Z":
                break
            time.sleep(0.05)
        gone = (
            not Path(f"/proc/{pid}").exists()
            or "Z" in Path(f"/proc/{pid}/stat").read_text().split()[2]
        )
        assert gone, "the warm process did not exit"
    finally:
        vouch_proc(root, "warm", "stop")


def test_a_stash_entry_holding_the_bytes_is_named_and_refused(
    built: tuple[KB, dict[str, Any], Path], run_cli: Any
) -> None:
    """Expiring reflogs would drop every stash entry: one that holds the bytes (here the
    older of two) must be applied or dropped first."""
    kb, made, _ = built
    root = kb.root
    for text in ("first stash\n", "second stash\n"):
        (root / "README.md").write_text(text)
        git(root, "stash", "-q")
    before = snapshot(root)
    plan = forget(run_cli, root, made, "--json").json()
    stash = [b for b in plan["blockers"] if b["kind"] == "stash"]
    assert stash and "stash@{0}" in stash[0]["message"] and "stash@{1}" in stash[0]["message"]
    res = forget(run_cli, root, made, "--confirm", confirm(made))
    assert res.code == 1 and "stash" in res.err, res.err
    assert snapshot(root) == before
    assert len(git(root, "stash", "list").splitlines()) == 2
