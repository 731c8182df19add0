"""`vouch init` in an existing knowledge base finishes a write a killed vouch process
left (`vouch.store.recovery`) — and says so, never "nothing changed".

Each write is killed for real at a fault-injection point (`VOUCH_FAULT`, the process
exits on the spot as if killed), then `vouch init` runs in the same repository.
"""

from __future__ import annotations

import pytest
from conftest import git
from gate_support import BOB, branches, head, propose_claim, vouch_forked

from vouch.gate import records
from vouch.kinds import claim
from vouch.store import journal, landing
from vouch.store.kb import KB


def _on_branch(kb: KB, pid: str, text: str) -> bool:
    files = set(git(kb.root, "ls-tree", "-r", "--name-only", "HEAD", "--", ".vouch").split())
    cid = claim.KIND.make_id({"text": text})
    return {f".vouch/{claim.path_for(cid)}", f".vouch/{records.decided_path(pid)}"} <= files


@pytest.mark.parametrize("step", ["journal", "staged", "refs"])
def test_init_says_it_finished_an_interrupted_approval(
    kb_with_sources: KB, run_cli, step: str
) -> None:
    kb = kb_with_sources
    text = f"Approved, killed at {step}"
    pid = propose_claim(kb, text)
    killed = vouch_forked(kb.root, "approve", pid, "--as", BOB, env={landing.FAULT_ENV: step})
    assert killed.returncode == 86, killed.stderr
    assert journal.exists(kb)

    res = run_cli("init", cwd=kb.root)
    assert res.code == 0, res.err
    assert "nothing changed" not in res.out
    assert f"Finished an interrupted approval of proposal {pid} on main" in res.out, res.out
    assert "vouch: approve claim" in res.out
    # and it did what it says: the approval is on the branch, whole, the journal gone
    assert _on_branch(kb, pid, text)
    assert not journal.exists(kb)
    assert f"refs/heads/vouch/proposal/{pid}" not in branches(kb.root)
    assert git(kb.root, "status", "--porcelain", "--untracked-files=all") == ""
    # run again: nothing left to finish
    again = run_cli("init", cwd=kb.root)
    assert again.code == 0 and "nothing changed" in again.out, again.out


def test_init_reports_the_recovery_in_json(kb_with_sources: KB, run_cli) -> None:
    kb = kb_with_sources
    pid = propose_claim(kb, "Approved, killed, reported as JSON")
    killed = vouch_forked(kb.root, "approve", pid, "--as", BOB, env={landing.FAULT_ENV: "staged"})
    assert killed.returncode == 86, killed.stderr
    found = run_cli("init", "--json", cwd=kb.root).json()
    assert found["created"] is False
    assert found["recovered"] == {
        "outcome": "finished",
        "branch": "refs/heads/main",
        "subject": found["recovered"]["subject"],
        "proposals": [pid],
        "decision": "approved",
    }
    assert found["recovered"]["subject"].startswith("vouch: approve claim ")
    assert run_cli("init", "--json", cwd=kb.root).json()["recovered"] is None


def test_init_says_it_finished_an_interrupted_source_add(kb: KB, run_cli) -> None:
    (kb.root / "notes.md").write_text("some notes\n")
    killed = vouch_forked(kb.root, "source", "add", "notes.md", env={landing.FAULT_ENV: "staged"})
    assert killed.returncode == 86, killed.stderr
    res = run_cli("init", cwd=kb.root)
    assert res.code == 0 and "nothing changed" not in res.out
    assert "Finished an interrupted write on main (vouch: register source" in res.out, res.out
    assert "sources/" in git(kb.root, "ls-tree", "-r", "--name-only", "HEAD", "--", ".vouch")


def test_init_says_it_undid_a_landing_the_branch_moved_past(kb_with_sources: KB, run_cli) -> None:
    """Killed before the refs moved; the user then committed other work: the landing
    cannot finish on its old tip, init puts back what it wrote and says so (the
    proposal stays open for the approval to be run again)."""
    kb = kb_with_sources
    pid = propose_claim(kb, "Approved, then the branch moved")
    killed = vouch_forked(kb.root, "approve", pid, "--as", BOB, env={landing.FAULT_ENV: "staged"})
    assert killed.returncode == 86, killed.stderr
    (kb.root / "mine.txt").write_text("mine\n")
    git(kb.root, "add", "mine.txt")
    git(kb.root, "commit", "-qm", "my own work", "--", "mine.txt")
    mine = head(kb.root)

    res = run_cli("init", cwd=kb.root)
    assert res.code == 0 and "nothing changed" not in res.out
    assert f"Undid an interrupted approval of proposal {pid}" in res.out, res.out
    assert "run the command again" in res.out
    assert head(kb.root) == mine and not journal.exists(kb)
    assert f"refs/heads/vouch/proposal/{pid}" in branches(kb.root)
    assert git(kb.root, "status", "--porcelain", "--untracked-files=all") == ""
