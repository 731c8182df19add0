"""Whose signatures count comes from the base, never from the branch being checked.

Under `review.require_signed_decisions`, git verifies a signature against an allowed
signers file. When that file is one the checked-out branch can change, a pull request
could add its own key for an approver's name and sign "as" them (the second outsider's
attack on issue 34). With `review.allowed_signers` committed, each commit is judged by the
file its parent committed (`lint --since`: the base's), and a change to the file is a
review-settings change an approver must sign. Built here with real SSH keys, plain git
and vouch's own approve; every check runs as the CLI does and writes nothing.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import git
from gate_support import PERSON_EMAIL, keypair, proposer_key
from test_audit_proof import all_fail, all_pass, approve, checks, head, needs_ssh

from vouch.store.kb import KB

BOB = "bob@example.invalid"
RITA = "rita@example.com"
pytestmark = needs_ssh


def line(principal: str, key: Path) -> str:
    return f"{principal} {key.with_suffix('.pub').read_text()}"


@contextlib.contextmanager
def signing_with(key: Path) -> Iterator[None]:
    """This process's git commits and tags signed with `key` instead of the clone's."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("GIT_CONFIG_COUNT", "1")
        mp.setenv("GIT_CONFIG_KEY_0", "user.signingkey")
        mp.setenv("GIT_CONFIG_VALUE_0", str(key))
        yield


def commit_signers(kb: KB, text: str, message: str, key: Path | None = None) -> str:
    """A plain commit writing `.vouch/allowed_signers` (signed with `key`, else unsigned)."""
    (kb.dir / "allowed_signers").write_text(text)
    git(kb.root, "add", ".vouch/allowed_signers")
    if key is None:
        git(kb.root, "-c", "commit.gpgsign=false", "commit", "-qm", message)
    else:
        with signing_with(key):
            git(kb.root, "commit", "-qm", message)
    return head(kb.root)


@pytest.fixture
def committed(kb_with_sources: KB, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> KB:
    """Signed decisions by bob or rita, judged by `.vouch/allowed_signers` (bob's key) as
    committed; the clone signs as bob and — the trap — its git configuration trusts the
    work tree's copy of that file. One decision, signed by bob, already landed."""
    kb = kb_with_sources
    monkeypatch.chdir(kb.root)
    bob = keypair(tmp_path, "bob")
    proposer_key(kb.root)  # the test person's own key signs the agents' proposals
    proposer = line(PERSON_EMAIL, kb.root.parent / "proposer-key")
    (kb.dir / "allowed_signers").write_text(line(BOB, bob) + proposer)
    config = kb.dir / "config.yaml"
    config.write_text(
        config.read_text()
        .replace("require_signed_decisions: false", "require_signed_decisions: true")
        .replace("approvers: []", f"approvers: [{BOB}, {RITA}]")
        .replace('allowed_signers: ""', "allowed_signers: allowed_signers")
    )
    git(kb.root, "add", ".vouch")
    git(kb.root, "commit", "-qm", "decisions signed by the keys committed here")
    for key, value in (
        ("gpg.format", "ssh"),
        ("user.signingkey", str(bob)),
        ("commit.gpgsign", "true"),
        ("gpg.ssh.allowedSignersFile", str(kb.dir / "allowed_signers")),
    ):
        git(kb.root, "config", key, value)
    approve(kb, "Signed by bob", actor=BOB)
    return kb


def test_signed_decisions_under_committed_signers_pass(committed: KB, run_cli: Any) -> None:
    base = head(committed.root)
    approve(committed, "Bob again", actor=BOB)
    all_pass(committed, run_cli, base)
    all_pass(committed, run_cli, f"{base}~3")


def test_a_branch_cannot_trust_its_own_key(committed: KB, run_cli: Any, tmp_path: Path) -> None:
    """Mallory adds her key as rita's in a plain commit, then approves "as rita"."""
    kb = committed
    base = head(kb.root)
    mallory = keypair(tmp_path, "mallory")
    text = (kb.dir / "allowed_signers").read_text() + line(RITA, mallory)
    key_commit = commit_signers(kb, text, "add a reviewer's key")
    with signing_with(mallory):
        approve(kb, "Approved with mallory's key", actor=RITA)
    decision = head(kb.root)
    found = checks(kb, run_cli, base)
    for name, (code, report) in found.items():
        assert code == 1, (name, report)
        assert key_commit[:12] in report and "review settings" in report, (name, report)
    # judged by the base's signers, mallory's signature is no one's
    lint = json.loads(found["lint"][1])
    assert any(decision[:12] in i["message"] for i in lint["issues"]), lint


def test_a_key_added_in_a_commit_signed_by_the_wrong_key_is_caught(
    committed: KB, run_cli: Any, tmp_path: Path
) -> None:
    kb = committed
    base = head(kb.root)
    mallory = keypair(tmp_path, "mallory")
    text = (kb.dir / "allowed_signers").read_text() + line(RITA, mallory)
    key_commit = commit_signers(kb, text, "add a reviewer's key", key=mallory)
    all_fail(kb, run_cli, base, key_commit[:12], "review settings")


def test_an_approver_adds_a_key_and_it_signs_from_the_next_range(
    committed: KB, run_cli: Any, tmp_path: Path
) -> None:
    kb = committed
    base = head(kb.root)
    rita = keypair(tmp_path, "rita")
    text = (kb.dir / "allowed_signers").read_text() + line(RITA, rita)
    after = commit_signers(kb, text, "rita reviews too", key=keypair(tmp_path, "bob"))
    res = run_cli("lint", "--since", base, "--json", "--stale-days", "0", cwd=kb.root)
    assert res.code == 0 and "allowed signers" in res.out, res.out
    with signing_with(rita):
        approve(kb, "Approved by rita", actor=RITA)
    all_pass(kb, run_cli, after)
    # a range that adds the key and uses it at once is judged by the base: refused
    lint = checks(kb, run_cli, base)["lint"]
    assert lint[0] == 1 and "not trust" in lint[1], lint


def test_a_plain_commit_turning_signing_off_fails_every_check(committed: KB, run_cli: Any) -> None:
    """Before, only lint --since saw it: doctor and audit judged the later commits by the
    configuration the plain commit wrote."""
    kb = committed
    base = head(kb.root)
    config = kb.dir / "config.yaml"
    config.write_text(
        config.read_text().replace(
            "require_signed_decisions: true", "require_signed_decisions: false"
        )
    )
    git(kb.root, "add", ".vouch/config.yaml")
    git(kb.root, "-c", "commit.gpgsign=false", "commit", "-qm", "tidy the config")
    off = head(kb.root)
    all_fail(kb, run_cli, base, off[:12], "review settings")


def test_doctor_names_a_missing_signers_file(committed: KB, run_cli: Any) -> None:
    kb = committed
    git(kb.root, "rm", "-q", ".vouch/allowed_signers")
    with signing_with(keypair(kb.root.parent, "bob")):
        git(kb.root, "commit", "-qm", "drop the signers")
    res = run_cli("doctor", "--json", cwd=kb.root)
    assert res.code == 1 and "review-signers" in res.out and "does not hold" in res.out, res.out


def test_doctor_warns_when_the_clone_trusts_a_work_tree_file(
    kb_with_sources: KB, run_cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    kb = kb_with_sources
    monkeypatch.chdir(kb.root)
    config = kb.dir / "config.yaml"
    config.write_text(
        config.read_text().replace(
            "require_signed_decisions: false", "require_signed_decisions: true"
        )
    )
    (kb.root / "allowed_signers").write_text("")
    git(kb.root, "add", "-A")
    git(kb.root, "commit", "-qm", "signing")
    git(kb.root, "config", "gpg.ssh.allowedSignersFile", "allowed_signers")
    res = run_cli("doctor", "--json", cwd=kb.root)
    assert "review-signers" in res.out and "a file of the work tree" in res.out, res.out
    git(kb.root, "config", "gpg.ssh.allowedSignersFile", str(tmp_path / "outside"))
    res = run_cli("doctor", "--json", cwd=kb.root)
    assert "review-signers" not in res.out, res.out


def test_the_signers_path_has_one_spelling(committed: KB, run_cli: Any, tmp_path: Path) -> None:
    """The fourth outsider: with the setting spelled `./allowed_signers`, a plain commit
    adding a key to `allowed_signers` passed lint --since (a warning) — the change was
    looked for under the other spelling."""
    kb = committed
    config = kb.dir / "config.yaml"
    config.write_text(
        config.read_text().replace(
            "allowed_signers: allowed_signers", "allowed_signers: ./allowed_signers"
        )
    )
    git(kb.root, "commit", "-qam", "spell the path")  # signed by bob, an approver
    base = head(kb.root)
    mallory = keypair(tmp_path, "mallory")
    text = (kb.dir / "allowed_signers").read_text() + line(RITA, mallory)
    key_commit = commit_signers(kb, text, "add a reviewer's key")
    all_fail(kb, run_cli, base, key_commit[:12], "review settings")


def test_a_merge_cannot_keep_settings_from_before_signing(
    committed: KB, run_cli: Any, tmp_path: Path
) -> None:
    """The fourth outsider: Eve branches from before signing was required, commits her
    own settings (her key, herself the approver), merges main into her branch keeping
    them, and main fast-forwards: doctor and audit judged the merge by its first parent
    (hers) and passed it."""
    kb = committed
    base = head(kb.root)
    signing = git(kb.root, "log", "--format=%H", "--grep", "decisions signed by").split()[0]
    eve = keypair(tmp_path, "eve")
    git(kb.root, "checkout", "-qb", "side", f"{signing}~1")
    config = kb.dir / "config.yaml"
    config.write_text(
        config.read_text()
        .replace("require_signed_decisions: false", "require_signed_decisions: true")
        .replace("approvers: []", "approvers: [eve@example.com]")
        .replace('allowed_signers: ""', "allowed_signers: allowed_signers")
    )
    (kb.dir / "allowed_signers").write_text(line("eve@example.com", eve))
    git(kb.root, "add", ".vouch")
    git(kb.root, "-c", "commit.gpgsign=false", "commit", "-qm", "settings")
    git(kb.root, "-c", "commit.gpgsign=false", "merge", "-q", "-X", "ours", "main", "-m", "sync")
    assert "eve@example.com" in config.read_text()
    git(kb.root, "checkout", "-q", "main")
    git(kb.root, "merge", "-q", "--ff-only", "side")
    found = checks(kb, run_cli, base)
    for name, (code, report) in found.items():
        assert code == 1 and "review settings" in report, (name, report)


def test_a_change_undone_in_the_same_range_still_needs_a_signature(
    committed: KB, run_cli: Any
) -> None:
    """The fourth outsider: two unsigned commits, signing off and back on, passed lint
    --since (no net change) while doctor and audit failed main for good after merging."""
    kb = committed
    base = head(kb.root)
    config = kb.dir / "config.yaml"
    strict = config.read_text()
    for text in (
        strict.replace("require_signed_decisions: true", "require_signed_decisions: false"),
        strict,
    ):
        config.write_text(text)
        git(kb.root, "-c", "commit.gpgsign=false", "commit", "-qam", "toggle")
    found = checks(kb, run_cli, base)
    for name, (code, report) in found.items():
        assert code == 1 and "review settings" in report, (name, report)
