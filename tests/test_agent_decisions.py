"""A declared agent never decides at the CLI (issue 34, finding G8: with VOUCH_AGENT=bot,
`vouch approve` landed with decided_by: bot, and `vouch audit-anchor`, `vouch
import-apply` and `vouch promote` went through). An agent decides only on a server
whose starter passed `--allow-decisions` (DESIGN §4.1); at the CLI, while VOUCH_AGENT or
config `agent` declares one, every decision is refused (E104, exit 1) with nothing
written, and the person decides once it is unset. Proposing and reading still work."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import git
from gate_support import PERSON, a_source, call, propose_claim, vouch_proc

from vouch.core import yamlio
from vouch.gate import records
from vouch.methods import registry as ops
from vouch.methods.context import CallContext
from vouch.store.kb import KB

HINT = "VOUCH_AGENT (or `agent:` in .vouch/config.yaml) declares an agent"


def _state(root: Path) -> tuple[str, str, str]:
    """Every ref, the work tree and git index, and every file under .vouch/ (but the
    disposable search index, which SQLite may touch)."""
    files = "\n".join(
        f"{p.relative_to(root)} {p.read_bytes().hex()}"
        for p in sorted((root / ".vouch").rglob("*"))
        if p.is_file() and "index" not in p.relative_to(root / ".vouch").parts[:1]
    )
    return (
        git(root, "for-each-ref", "--format=%(refname) %(objectname)"),
        git(root, "status", "--porcelain", "--untracked-files=all", "--", ":!.vouch/index"),
        files,
    )


def _refused(res: Any) -> None:
    assert res.code == 1, (res.out, res.err)
    error = res.json()["error"]
    assert error["code"] == "E104", error
    assert "person's decision" in error["message"] and "'bot'" in error["message"], error
    assert HINT in error["hint"] and "unset it to decide as yourself" in error["hint"]
    assert "Traceback" not in res.err


def _approved_claim(kb: KB, run_cli: Any, text: str) -> tuple[str, str]:
    """An approved claim (the person approves at the CLI): (claim id, proposal id)."""
    pid = propose_claim(kb, text)
    res = run_cli("approve", pid, "--json", cwd=kb.root)
    assert res.code == 0, res.err
    return str(res.json()["object_id"]), pid


@pytest.fixture
def exported(kb_with_sources: KB, run_cli: Any, tmp_path: Path) -> Path:
    _approved_claim(kb_with_sources, run_cli, "The billing service deploys on Tuesdays")
    out = tmp_path / "kb.tar.gz"
    assert run_cli("export", "--out", str(out), cwd=kb_with_sources.root).code == 0
    return out


def _decisions(kb: KB, run_cli: Any, bundle: Path, fresh: KB) -> dict[str, tuple[str, ...]]:
    """Each decision the finding made with VOUCH_AGENT, as CLI arguments."""
    claim, _ = _approved_claim(kb, run_cli, "Deploys need a green CI run")
    pending = propose_claim(kb, "Roll back a bad release with ship rollback")
    return {
        "approve": ("approve", pending),
        "reject": ("reject", pending, "--reason", "not so"),
        "promote": ("promote", claim),
        "audit-anchor": ("audit-anchor",),
        "import-apply": ("import-apply", str(bundle), "--kb", str(fresh.dir)),
    }


@pytest.mark.parametrize("verb", ["approve", "reject", "promote", "audit-anchor", "import-apply"])
def test_a_declared_agent_does_not_decide_at_the_cli(
    kb_with_sources: KB,
    run_cli: Any,
    exported: Path,
    fresh: KB,
    monkeypatch: pytest.MonkeyPatch,
    verb: str,
) -> None:
    kb = kb_with_sources
    args = _decisions(kb, run_cli, exported, fresh)[verb]
    before = _state(kb.root), _state(fresh.root)
    monkeypatch.setenv("VOUCH_AGENT", "bot")
    _refused(run_cli(*args, "--json", cwd=kb.root))
    assert (_state(kb.root), _state(fresh.root)) == before
    # unset, the person decides as before
    monkeypatch.delenv("VOUCH_AGENT")
    res = run_cli(*args, "--json", cwd=kb.root)
    assert res.code == 0, (res.out, res.err)
    assert (_state(kb.root), _state(fresh.root)) != before
    if verb in ("approve", "reject"):
        decision = yamlio.load_yaml((kb.dir / records.decided_path(args[1])).read_text())
        assert decision["decided_by"] == "Test Person", decision


def test_a_committed_config_agent_does_not_make_the_person_an_agent(
    kb_with_sources: KB, run_cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The third outsider: a pull request committing `agent: bot` made every person's CLI
    act as agent bot (their proposals bot's — which they could then approve as its
    operator — and their decisions refused, `VOUCH_AGENT=` no help). At the CLI only
    VOUCH_AGENT declares an agent; `agent:` is for servers."""
    kb = kb_with_sources
    config = kb.dir / "config.yaml"
    config.write_text(config.read_text().replace('agent: ""', "agent: bot"))
    git(kb.root, "commit", "-qam", "an agent acts here")
    res = run_cli(
        "propose-claim", "--text", "Mine, not bot's", "--evidence", a_source(kb), "--json",
        cwd=kb.root,
    )  # fmt: skip
    assert res.code == 0, res.err
    pid = res.json()["proposal_id"]
    author = git(kb.root, "log", "-1", "--format=%an", f"refs/heads/vouch/proposal/{pid}")
    assert author.strip() == PERSON
    monkeypatch.setenv("VOUCH_AGENT", "")  # set and empty: no agent, not the file's
    assert (
        ops.invoke(CallContext(kb_path=str(kb.root)), "kb.capabilities", {})["caller"]["agent"]
        is None
    )


def test_the_real_vouch_refuses_an_agent_decision(kb_with_sources: KB) -> None:
    """Through the installed entry point, as a hook or an agent's shell would run it."""
    kb = kb_with_sources
    pid = propose_claim(kb)
    before = _state(kb.root)
    ran = vouch_proc(kb.root, "approve", pid, env={"VOUCH_AGENT": "bot"})
    assert ran.returncode == 1 and "E104" in ran.stderr and HINT in ran.stderr, ran
    assert "Traceback" not in ran.stderr
    assert _state(kb.root) == before
    assert vouch_proc(kb.root, "approve", pid).returncode == 0


def test_an_agent_still_proposes_and_reads_and_is_told_it_may_not_decide(
    kb_with_sources: KB, run_cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    kb = kb_with_sources
    assert run_cli("capabilities", "--json", cwd=kb.root).json()["caller"]["may_decide"] is True
    monkeypatch.setenv("VOUCH_AGENT", "bot")
    caller = run_cli("capabilities", "--json", cwd=kb.root).json()["caller"]
    assert caller["agent"] == "bot" and caller["may_write"] is True
    assert caller["may_decide"] is False
    source = call(kb, "kb.list_sources")[0]["id"]
    res = run_cli(
        "propose-claim", "--text", "Deploys need CI", "--evidence", source, "--json", cwd=kb.root
    )
    assert res.code == 0, res.err
    pid = res.json()["proposal_id"]
    shown = run_cli("show", pid, "--json", cwd=kb.root)
    assert shown.code == 0, shown.err
    assert run_cli("status", "--json", cwd=kb.root).json()["pending"] == 1
