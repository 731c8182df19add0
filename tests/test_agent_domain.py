"""A person cannot act under an agent's reserved address (the fifth outsider, row 42).

A person whose git e-mail was `bot2@agent.vouch.invalid` rejected the agent bot2's
proposal, and it was recorded as bot2 withdrawing its own. Agents' addresses are made only
by vouch, for an agent a server (or VOUCH_AGENT) declares; a person's identity in that
domain is refused with a clear error, nothing written.
"""

from __future__ import annotations

from typing import Any

import pytest
from gate_support import a_source, propose_claim
from servers_support import kb_state

from vouch.store.kb import KB

RESERVED = (
    "bot2@agent.vouch.invalid",
    "BOT2@Agent.Vouch.Invalid",
    "bot2@agent.vouch.invalid.",
    "x@eu.agent.vouch.invalid",
)


@pytest.mark.parametrize("email", RESERVED)
def test_a_person_in_the_agents_domain_cannot_decide_or_propose(
    kb_with_sources: KB, run_cli: Any, monkeypatch: pytest.MonkeyPatch, email: str
) -> None:
    kb = kb_with_sources
    pid = propose_claim(kb, "Made by the agent bot2", actor="bot2")
    source = a_source(kb)
    monkeypatch.setenv("GIT_COMMITTER_NAME", "Mallory")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", email)
    before = kb_state(kb.root)
    for args in (
        ("reject", pid, "--reason", "taking it back"),
        ("approve", pid),
        ("propose-claim", "--text", "Mallory's", "--evidence", source),
    ):
        res = run_cli(*args, cwd=kb.root)
        assert res.code == 1 and "E100" in res.err, (args, res.err)
        assert "reserves for the agents" in res.err and "Traceback" not in res.err
        assert kb_state(kb.root) == before


def test_an_ordinary_address_rejects_as_a_reviewer(
    kb_with_sources: KB, run_cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The guard's control: the same rejection by Mallory's own address is a review."""
    kb = kb_with_sources
    pid = propose_claim(kb, "Made by the agent bot2", actor="bot2")
    monkeypatch.setenv("GIT_COMMITTER_NAME", "Mallory")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "bot2@agent.vouch.example")
    res = run_cli("reject", pid, "--reason", "no", "--json", cwd=kb.root)
    assert res.code == 0 and res.json()["withdrawn"] is False, res.out + res.err
