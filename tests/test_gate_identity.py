"""Identity you cannot type your way into (ISSUE-34 finding 5, DESIGN §4.1).

The proposer is the proposal commit's author, the decider the git identity running the
decision (or the agent it declared); they are compared folded (NFKC, case, invisible
characters, spacing). `--as` is a label beside the identity, never instead of it. A
person working alone allows self-approval in committed config; with signed decisions
required, the key that signs is compared too. Each attack below is built in a real
repository with real git (and a real throwaway SSH key) and shown refused with nothing
written.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import git
from gate_support import a_source, branches, head, recommit, show
from servers_support import JsonlServer, kb_state

from vouch.core import yamlio
from vouch.gate import records
from vouch.store import audit
from vouch.store.kb import KB

ADA = ("Ada Author", "ada@example.invalid")
RITA = ("Rita Reviewer", "rita@example.invalid")
CAROL = ("Carol Checker", "carol@example.invalid")
HAS_SSH = not subprocess.run(["which", "ssh-keygen"], capture_output=True).returncode


def _as(monkeypatch: pytest.MonkeyPatch, person: tuple[str, str]) -> None:
    """Be this person, as git knows them (GIT_COMMITTER_NAME/EMAIL)."""
    monkeypatch.setenv("GIT_COMMITTER_NAME", person[0])
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", person[1])


def _propose(run_cli: Any, kb: KB, text: str, *extra: str) -> str:
    res = run_cli(
        "propose-claim", "--text", text, "--source", a_source(kb), *extra, "--json", cwd=kb.root
    )
    assert res.code == 0, res.err
    pid = str(res.json()["proposal_id"])
    show(kb, pid)  # a reviewer looked at it: pinned
    return pid


def _agent_approves(kb: KB, agent: str, pid: str, **params: str) -> Any:
    """`kb.approve` by the declared agent `agent`, as on a server started with
    --allow-decisions (a library caller's agent; at the CLI a declared agent never
    decides): a Result as `run_cli` gives."""
    from conftest import Result

    from vouch.errors import VouchError
    from vouch.methods import registry as ops
    from vouch.methods.context import CallContext

    try:
        ops.invoke(
            CallContext(kb_path=str(kb.root), agent=agent),
            "kb.approve",
            {"proposal_id": pid, **params},
        )
    except VouchError as exc:
        return Result(1, "", f"error[{exc.code}]: {exc}")
    return Result(0, "", "")


def _refused_self(res: Any) -> None:
    assert res.code == 1 and "E104" in res.err, res.err
    assert "cannot approve" in res.err and "the same person" in res.err, res.err
    assert "allow_self_approval" in res.err  # the way for a person working alone


def _unchanged(kb: KB, before: tuple[str, str, str]) -> None:
    assert kb_state(kb.root) == before


def _decision(kb: KB, pid: str) -> dict[str, Any]:
    return yamlio.load_yaml((kb.dir / records.decided_path(pid)).read_text())


def test_typing_the_proposers_name_differently_is_still_the_proposer(
    kb_with_sources: KB, run_cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    kb = kb_with_sources
    _as(monkeypatch, ADA)
    pid = _propose(run_cli, kb, "Deploys need a green CI run")
    commit = head(kb.root, f"refs/heads/vouch/proposal/{pid}")
    # the proposer is the commit's author: Ada, as git knows her
    assert git(kb.root, "log", "-1", "--format=%an <%ae>|%cn <%ce>", commit).strip() == (
        "Ada Author <ada@example.invalid>|Ada Author <ada@example.invalid>"
    )
    before = kb_state(kb.root)
    for label in ("ada author", "Rita Reviewer", "ADA  AUTHOR", "Ｒｉｔａ"):
        _refused_self(run_cli("approve", pid, "--as", label, cwd=kb.root))
        _unchanged(kb, before)
    # Rita herself typing Ada's name as her label is refused too (labels are compared)
    _as(monkeypatch, RITA)
    _refused_self(run_cli("approve", pid, "--as", "ada author", cwd=kb.root))
    _unchanged(kb, before)
    # the same e-mail under another name is the same person
    _as(monkeypatch, ("A. Author", "ADA@example.invalid"))
    _refused_self(run_cli("approve", pid, cwd=kb.root))
    _unchanged(kb, before)
    # Rita, as git knows her, approves
    _as(monkeypatch, RITA)
    res = run_cli("approve", pid, cwd=kb.root)
    assert res.code == 0, res.err
    decision = _decision(kb, pid)
    assert decision["decided_by"] == "Rita Reviewer" and decision["proposer"] == "Ada Author"
    assert decision["decider_email"] == RITA[1] and decision["proposer_email"] == ADA[1]


def test_a_label_on_the_proposal_changes_nothing_and_why_names_the_author(
    kb_with_sources: KB, run_cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    kb = kb_with_sources
    _as(monkeypatch, ADA)
    pid = _propose(run_cli, kb, "Rollbacks take under five minutes", "--as", "Rita Reviewer")
    shown = run_cli("show", pid, "--json", cwd=kb.root).json()
    assert shown["proposer"] == "Ada Author"
    assert shown["proposed_by"] == "Ada Author <ada@example.invalid>, as Rita Reviewer"
    before = kb_state(kb.root)
    _refused_self(run_cli("approve", pid, cwd=kb.root))
    _unchanged(kb, before)
    # a label is compared as an extra check, so the Rita it names does not approve
    # either (nobody reads "Rita approved Rita's proposal"); a third person does, and
    # `why` and `log` name Ada, with her label beside her
    _as(monkeypatch, RITA)
    _refused_self(run_cli("approve", pid, cwd=kb.root))
    _unchanged(kb, before)
    _as(monkeypatch, CAROL)
    assert run_cli("approve", pid, cwd=kb.root).code == 0
    claim_id = shown["object_id"]
    why = run_cli("why", claim_id, cwd=kb.root).out
    assert "proposed by Ada Author <ada@example.invalid>, as Rita Reviewer" in why, why
    assert "approved by Carol Checker <carol@example.invalid>" in why, why
    assert _decision(kb, pid)["proposed_as"] == "Rita Reviewer"
    log = run_cli("log", cwd=kb.root).out
    assert "by Ada Author <ada@example.invalid>, as Rita Reviewer" in log, log


def test_an_agent_is_its_own_principal_run_by_its_operator(
    kb_with_sources: KB, run_cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    kb = kb_with_sources
    _as(monkeypatch, ADA)
    monkeypatch.setenv("VOUCH_AGENT", "bot")
    pid = _propose(run_cli, kb, "Agents propose as themselves")
    commit = head(kb.root, f"refs/heads/vouch/proposal/{pid}")
    assert git(kb.root, "log", "-1", "--format=%an <%ae>|%cn <%ce>", commit).strip() == (
        "bot <bot@agent.vouch.invalid>|Ada Author <ada@example.invalid>"
    )
    before = kb_state(kb.root)
    # at the CLI a declared agent does not decide at all (issue 34, G8)
    res = run_cli("approve", pid, cwd=kb.root)
    assert res.code == 1 and "E104" in res.err and "agents do not decide" in res.err
    _unchanged(kb, before)
    monkeypatch.delenv("VOUCH_AGENT")
    # where it may, the agent approving its own proposal, however its name is written, is
    # refused
    for agent in ("bot", "BOT", "ｂｏｔ", " bot  "):
        _refused_self(_agent_approves(kb, agent, pid))
        _unchanged(kb, before)
    # a name holding an invisible character is refused outright, before anything
    for agent in ("bot\u200b", "b\u202eot", "bot\x07", "bot\u3164"):
        monkeypatch.setenv("VOUCH_AGENT", agent)
        res = run_cli("approve", pid, cwd=kb.root)
        assert res.code == 1 and "E100" in res.err and "invisible" in res.err, res.err
        _unchanged(kb, before)
    # a word mixing look-alike alphabets (a Cyrillic o in bot: the third outsider's
    # "Bоb") is refused the same way
    for agent in ("b\u043et", "\u0432ot"):
        monkeypatch.setenv("VOUCH_AGENT", agent)
        res = run_cli("approve", pid, cwd=kb.root)
        assert res.code == 1 and "E100" in res.err and "alphabets" in res.err, res.err
        _unchanged(kb, before)
    monkeypatch.delenv("VOUCH_AGENT")
    res = run_cli("approve", pid, "--as", "rita\u200breviewer", cwd=kb.root)
    assert res.code == 1 and "E100" in res.err and "U+200B" in res.err
    _unchanged(kb, before)
    # its operator (a different principal) approves it
    res = run_cli("approve", pid, cwd=kb.root)
    assert res.code == 0, res.err
    decision = _decision(kb, pid)
    assert decision["proposer"] == "bot" and decision["decided_by"] == "Ada Author"
    assert decision["proposer_operator"] == "Ada Author <ada@example.invalid>"


def test_an_agent_with_an_invisible_character_cannot_approve_its_own_over_jsonl(
    kb_with_sources: KB,
) -> None:
    kb = kb_with_sources
    with JsonlServer(kb.root, env={"VOUCH_AGENT": "bot"}) as srv:
        made = srv.result(
            "kb.propose_claim", {"text": "Servers pin too", "evidence": [a_source(kb)]}
        )
        assert srv.close() == 0
    pid = made["proposal_id"]
    commit = head(kb.root, f"refs/heads/vouch/proposal/{pid}")
    before = kb_state(kb.root)
    # a server declared with an invisible character in its agent's name does not start
    started = subprocess.run(
        [sys.executable, "-m", "vouch", "serve", "--transport", "jsonl", "--allow-decisions"],
        cwd=kb.root,
        env={**os.environ, "VOUCH_AGENT": "bot\u200b"},
        input="",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert started.returncode == 1 and "E100" in started.stderr, started.stderr
    assert "U+200B" in started.stderr
    _unchanged(kb, before)
    for agent, code in (("Bot", "E104"), ("ｂｏｔ", "E104"), (" bot ", "E104")):
        with JsonlServer(kb.root, "--allow-decisions", env={"VOUCH_AGENT": agent}) as srv:
            reply = srv.call("kb.approve", {"proposal_id": pid, "expect": commit})
            assert reply["ok"] is False and reply["error"]["vouch_code"] == code, reply
            srv.close()
        _unchanged(kb, before)
    # another agent on a server a person allowed to decide approves it
    with JsonlServer(kb.root, "--allow-decisions", env={"VOUCH_AGENT": "checker"}) as srv:
        reply = srv.call("kb.approve", {"proposal_id": pid, "expect": commit})
        assert reply["ok"] is True, reply
        srv.close()
    event = [json.loads(x) for x in (kb.dir / "audit.log.jsonl").read_text().splitlines()][-1]
    assert event["actor"] == "checker" and event["data"]["proposer"] == "bot"


def _commit_config(kb: KB, **review: Any) -> None:
    cfg = kb.dir / "config.yaml"
    text = cfg.read_text()
    for key, value in review.items():
        old = next(ln for ln in text.splitlines() if ln.strip().startswith(f"{key}:"))
        text = text.replace(old, f"  {key}: {json.dumps(value)}")
    cfg.write_text(text)
    git(kb.root, "commit", "-qam", f"review settings {sorted(review)}")


def test_self_approval_allowed_only_in_committed_config_and_recorded(
    kb_with_sources: KB, run_cli: Any
) -> None:
    kb = kb_with_sources
    pid = _propose(run_cli, kb, "A person working alone")
    before = kb_state(kb.root)
    # the work tree's config is not the gate's: an uncommitted setting changes nothing
    cfg = kb.dir / "config.yaml"
    original = cfg.read_text()
    cfg.write_text(original.replace("allow_self_approval: false", "allow_self_approval: true"))
    _refused_self(run_cli("approve", pid, cwd=kb.root))
    cfg.write_text(original)
    _unchanged(kb, before)
    assert "Self-approval" not in run_cli("status", cwd=kb.root).out
    _commit_config(kb, allow_self_approval=True)
    status = run_cli("status", cwd=kb.root).out
    assert "Self-approval: review.allow_self_approval is on" in status, status
    doctor = run_cli("doctor", "--json", cwd=kb.root).json()
    assert any(i["kind"] == "self-approval-allowed" for i in doctor["issues"])
    res = run_cli("approve", pid, cwd=kb.root)
    assert res.code == 0, res.err
    assert _decision(kb, pid)["self_approved"] is True
    event = audit.query(kb.dir, event="proposal.approve")[-1]
    assert event["data"]["self_approved"] is True
    assert "Vouch-Self-Approved: true" in git(kb.root, "log", "-1", "--format=%B")
    # lint accepts a self-approval the committed config allows, and says nothing else
    lint = run_cli("lint", "--json", cwd=kb.root).json()
    assert not [i for i in lint["issues"] if i["kind"] == "self-approved"]


def _ssh_key(tmp: Path, principal: str, allowed: Path) -> Path:
    key = tmp / f"key-{principal}"
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", principal, "-f", str(key)],
        check=True,
        capture_output=True,
    )
    with allowed.open("a") as fh:
        fh.write(f"{principal} {(tmp / f'key-{principal}.pub').read_text()}")
    return key


def _sign_with(root: Path, key: Path) -> None:
    git(root, "config", "user.signingkey", str(key))


@pytest.mark.skipif(not HAS_SSH, reason="ssh-keygen is not installed")
def test_strict_settings_compare_signing_keys(
    kb_with_sources: KB, run_cli: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    kb = kb_with_sources
    allowed = kb.root / "allowed_signers"  # the allowed signers file lives in the repo
    ada_key = _ssh_key(tmp_path, ADA[1], allowed)
    carol_key = _ssh_key(tmp_path, CAROL[1], allowed)
    git(kb.root, "add", "allowed_signers")
    _commit_config(kb, require_signed_decisions=True, approvers=[RITA[1], ADA[1], CAROL[1]])
    for key, value in (
        ("gpg.format", "ssh"),
        ("gpg.ssh.allowedSignersFile", str(allowed)),
        ("commit.gpgsign", "true"),
    ):
        git(kb.root, "config", key, value)
    _sign_with(kb.root, ada_key)
    # Ada proposes as Rita by label, and approves with her own valid signature
    _as(monkeypatch, ADA)
    pid = _propose(run_cli, kb, "Strictly reviewed claim", "--as", "Rita Reviewer")
    commit = head(kb.root, f"refs/heads/vouch/proposal/{pid}")
    assert (
        "Good"
        in subprocess.run(
            ["git", "verify-commit", commit], cwd=kb.root, capture_output=True, text=True
        ).stderr
    )  # proposals are signed when the repository signs
    before = kb_state(kb.root)
    _refused_self(run_cli("approve", pid, cwd=kb.root))
    _unchanged(kb, before)
    # she types another git identity too: the names differ, the key does not
    _as(monkeypatch, ("Mallory Mask", "mallory@example.invalid"))
    res = run_cli("approve", pid, cwd=kb.root)
    assert res.code == 1 and "E104" in res.err and "signed proposal" in res.err, res.err
    _unchanged(kb, before)
    # Carol, with Carol's key, approves; lint --since passes the signed range
    _as(monkeypatch, CAROL)
    _sign_with(kb.root, carol_key)
    base = head(kb.root)
    res = run_cli("approve", pid, cwd=kb.root)
    assert res.code == 0, res.err
    lint = run_cli("lint", "--since", base, "--json", cwd=kb.root).json()
    assert lint["errors"] == 0, lint["issues"]
    assert branches(kb.root) == []


def test_strict_settings_refuse_an_unsigned_proposal(
    kb_with_sources: KB, run_cli: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The outsider's attack: under signed decisions Ada proposes unsigned, in Rita's
    git name, and approves with her own valid key — no key to compare, so the typed
    name would stand. An unsigned proposal is refused by a signed decision."""
    kb = kb_with_sources
    allowed = kb.root / "allowed_signers"
    ada_key = _ssh_key(tmp_path, ADA[1], allowed)
    git(kb.root, "add", "allowed_signers")
    _commit_config(kb, require_signed_decisions=True, approvers=[RITA[1], ADA[1]])
    git(kb.root, "config", "gpg.format", "ssh")
    git(kb.root, "config", "gpg.ssh.allowedSignersFile", str(allowed))
    _as(monkeypatch, RITA)  # a typed identity: Ada's clone, Rita's name
    pid = _propose(run_cli, kb, "Proposed in another name, unsigned")
    git(kb.root, "config", "commit.gpgsign", "true")
    _sign_with(kb.root, ada_key)
    _as(monkeypatch, ADA)
    before = kb_state(kb.root)
    res = run_cli("approve", pid, cwd=kb.root)
    assert res.code == 1 and "E104" in res.err and "is not signed" in res.err, res.err
    _unchanged(kb, before)


def test_lint_matches_approvers_by_identity_not_label(
    kb_with_sources: KB, run_cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    kb = kb_with_sources
    _commit_config(kb, approvers=["rita@example.invalid"])
    base = head(kb.root)
    monkeypatch.setenv("VOUCH_AGENT", "bot")
    pid = _propose(run_cli, kb, "Approved by someone not listed")
    monkeypatch.delenv("VOUCH_AGENT")
    # Test Person, labelled as the listed approver, is still Test Person
    res = run_cli("approve", pid, "--as", "rita@example.invalid", cwd=kb.root)
    assert res.code == 0, res.err
    lint = run_cli("lint", "--since", base, "--json", cwd=kb.root).json()
    assert [i["kind"] for i in lint["issues"] if i["severity"] == "error"] == [
        "approver-not-allowed"
    ]


def test_a_hand_made_author_with_an_invisible_character_is_still_its_agent(
    kb_with_sources: KB, run_cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """vouch refuses such names when it writes; a commit built by hand can still carry
    one (and another address): it is compared folded, so the agent is still itself."""
    kb = kb_with_sources
    monkeypatch.setenv("VOUCH_AGENT", "bot")
    pid = _propose(run_cli, kb, "Built by hand in another name")
    ref = f"refs/heads/vouch/proposal/{pid}"
    old = head(kb.root, ref)
    message = git(kb.root, "log", "-1", "--format=%B", old)
    _, new = recommit(kb.root, ref, message, ("b\u200bot", "someone@example.invalid"))
    monkeypatch.delenv("VOUCH_AGENT")
    before = kb_state(kb.root)
    _refused_self(_agent_approves(kb, "bot", pid, expect=new))
    _unchanged(kb, before)


@pytest.mark.skipif(not HAS_SSH, reason="ssh-keygen is not installed")
def test_strict_settings_refuse_a_proposal_signed_by_an_unlisted_or_another_key(
    kb_with_sources: KB, run_cli: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The third outsider's attack: under signed decisions Rita proposes in Bob's git
    name, signed with a throwaway key nobody listed (git: good signature, untrusted key),
    then approves with her own allowed key — the keys differ, the names differ, and the
    proposal landed. A signed proposal must verify against the allowed signers, as the
    person it names."""
    kb = kb_with_sources
    allowed = tmp_path / "allowed_signers"
    rita_key = _ssh_key(tmp_path, RITA[1], allowed)
    bob = ("Bob Builder", "bob@example.invalid")
    _ssh_key(tmp_path, bob[1], allowed)
    throwaway = _ssh_key(tmp_path, "nobody@example.invalid", tmp_path / "not-listed")
    _commit_config(kb, require_signed_decisions=True, approvers=[RITA[1]])
    for key, value in (
        ("gpg.format", "ssh"),
        ("gpg.ssh.allowedSignersFile", str(allowed)),
        ("commit.gpgsign", "true"),
    ):
        git(kb.root, "config", key, value)
    for signing_key in (throwaway, rita_key):  # unlisted; listed, but as Rita
        _as(monkeypatch, bob)
        _sign_with(kb.root, signing_key)
        pid = _propose(run_cli, kb, f"Rita's own claim, typed as Bob ({signing_key.name})")
        _as(monkeypatch, RITA)
        _sign_with(kb.root, rita_key)
        before = kb_state(kb.root)
        res = run_cli("approve", pid, cwd=kb.root)
        assert res.code == 1 and "E104" in res.err, res.err
        if signing_key == throwaway:
            assert "allowed signers do not hold" in res.err, res.err
        _unchanged(kb, before)


def test_doctor_says_when_the_committed_role_allows_self_approval(
    kb_with_sources: KB, run_cli: Any
) -> None:
    """The third outsider: with `approver_role: trusted-agent` committed, lint --since
    failed the self-approval while doctor said nothing; now doctor says the setting is on."""
    kb = kb_with_sources
    config = kb.dir / "config.yaml"
    config.write_text(
        config.read_text().replace("approver_role: human", "approver_role: trusted-agent")
    )
    git(kb.root, "commit", "-qam", "automated repository")
    doctor = run_cli("doctor", "--json", cwd=kb.root).json()
    notes = [i for i in doctor["issues"] if i["kind"] == "self-approval-allowed"]
    assert notes and "trusted-agent" in notes[0]["message"], doctor["issues"]
