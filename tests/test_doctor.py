"""`vouch doctor` and `vouch source verify`: one report with a verdict; exit 1 on errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import git
from gate_support import BOB, a_source, call, propose_claim, vouch_forked

from vouch.store import landing
from vouch.store.kb import KB


@pytest.fixture
def reviewed(kb_with_sources: KB, monkeypatch: pytest.MonkeyPatch) -> KB:
    monkeypatch.chdir(kb_with_sources.root)
    pid = propose_claim(kb_with_sources)
    call(kb_with_sources, "kb.approve", {"proposal_id": pid}, actor=BOB)
    return kb_with_sources


def doctor(run_cli: Any) -> tuple[int, dict[str, Any]]:
    res = run_cli("doctor", "--json")
    return res.code, json.loads(res.out)


def by_check(report: dict[str, Any], check: str) -> list[dict[str, Any]]:
    return [i for i in report["issues"] if i["check"] == check]


def test_a_healthy_knowledge_base(reviewed: KB, run_cli: Any) -> None:
    code, report = doctor(run_cli)
    assert code == 0, report["issues"]
    assert report["verdict"] == "ok" and report["issues"] == []
    assert set(report["checks"]) == {
        "lint",
        "sources",
        "index",
        "audit",
        "config",
        "agents",
        "local",
    }
    assert report["checks"]["agents"] == {"verdict": "ok", "hosts": []}
    assert report["checks"]["sources"] == {"ok": True, "checked": 3, "issues": 0}
    assert report["checks"]["index"]["state"] in ("missing", "fresh", "stale")
    assert report["checks"]["audit"]["ok"]
    human = run_cli("doctor")
    assert human.code == 0 and human.out.startswith("vouch doctor: ok")


def test_config_drift_unknown_and_invalid_keys(reviewed: KB, run_cli: Any) -> None:
    config = reviewed.dir / "config.yaml"
    text = config.read_text()
    config.write_text(
        text.replace("require_citations: true", "require_citation: true")
        .replace("auto_refresh: true", "auto_refresh: sometimes")
        .replace("approver_role: human", "approver_role: anyone")
        + "colour: blue\n"
    )
    code, report = doctor(run_cli)
    assert code == 1 and report["verdict"] == "errors"
    found = {(i["kind"], i["id"]) for i in by_check(report, "config")}
    assert ("config-unknown", "review.require_citation") in found
    assert ("config-unknown", "colour") in found
    assert ("config-invalid", "index.auto_refresh") in found
    assert ("config-invalid", "review.approver_role") in found
    typo = next(i for i in report["issues"] if i["id"] == "review.require_citation")
    assert "did you mean review.require_citations" in typo["message"]
    assert ("config-uncommitted", "review") in found  # the gate obeys the committed one


def test_config_keys_the_code_reads_are_not_drift(reviewed: KB, run_cli: Any) -> None:
    config = reviewed.dir / "config.yaml"
    config.write_text(
        config.read_text() + "search:\n  vector_weight: 2.5\n  freshness_seconds: 5\n"
    )
    git(reviewed.root, "commit", "-qam", "tune search")
    code, report = doctor(run_cli)
    assert code == 0, report["issues"]


def test_unparseable_config_is_an_error(reviewed: KB, run_cli: Any) -> None:
    (reviewed.dir / "config.yaml").write_text("review: [unclosed\n")
    code, report = doctor(run_cli)
    assert code == 1
    [found] = by_check(report, "config")
    assert found["kind"] == "config-invalid" and found["path"] == ".vouch/config.yaml"


def test_tampered_and_missing_source_content(reviewed: KB, run_cli: Any) -> None:
    sid = a_source(reviewed)
    content = reviewed.source_content_path(sid)
    assert content is not None
    content.write_bytes(content.read_bytes() + b"tampered\n")
    res = run_cli("source", "verify", "--json")
    report = json.loads(res.out)
    assert res.code == 1 and not report["ok"]
    assert {(i["id"], i["kind"]) for i in report["issues"]} == {
        (sid, "hash-mismatch"),
        (sid, "meta-mismatch"),
    }
    one = run_cli("source", "verify", sid)
    assert one.code == 1 and "hash-mismatch" in one.out
    content.unlink()
    report = json.loads(run_cli("source", "verify", sid, "--json").out)
    assert [i["kind"] for i in report["issues"]] == ["missing-content"]
    code, report = doctor(run_cli)
    assert code == 1 and report["checks"]["sources"]["ok"] is False
    assert any(i["kind"] == "missing-content" for i in by_check(report, "sources"))


def test_source_verify_one_id(reviewed: KB, run_cli: Any) -> None:
    sid = a_source(reviewed)
    res = run_cli("source", "verify", sid)
    assert res.code == 0 and "1 source verified — ok" in res.out
    assert run_cli("source", "verify", "0" * 64).code == 1  # not registered
    assert run_cli("source", "verify", "not-an-id").code == 1
    assert call(reviewed, "kb.source_verify", {"id": sid})["ok"]


def test_audit_chain_damage_is_an_error(reviewed: KB, run_cli: Any) -> None:
    log = reviewed.dir / "audit.log.jsonl"
    lines = log.read_text().splitlines(keepends=True)
    log.write_text("".join(lines[:-1]))  # the newest event dropped
    code, report = doctor(run_cli)
    assert code == 1
    assert by_check(report, "audit") and report["checks"]["audit"]["ok"] is False


def test_a_damaged_index_is_a_warning(reviewed: KB, run_cli: Any) -> None:
    assert run_cli("index", "rebuild").code == 0
    index_dir = reviewed.dir / "index"
    victim = next(p for p in sorted(index_dir.iterdir()) if p.name.startswith("vectors"))
    victim.write_bytes(b"\0" * victim.stat().st_size)
    code, report = doctor(run_cli)
    assert report["checks"]["index"]["state"] == "corrupt"
    [found] = by_check(report, "index")
    assert found["severity"] == "warn" and code == 0


def test_doctor_reports_lint_findings_by_path(reviewed: KB, run_cli: Any) -> None:
    broken = reviewed.dir / "pages" / "00" / "broken-00000000.md"
    broken.parent.mkdir(parents=True)
    broken.write_text("no frontmatter here\n")
    git(reviewed.root, "add", str(broken))  # tracked: doctor judges it (an untracked one
    git(reviewed.root, "commit", "-qm", "a broken page by hand")  # is named, not judged)
    code, report = doctor(run_cli)
    assert code == 1
    [found] = [i for i in by_check(report, "lint") if i["kind"] == "unparseable"]
    assert found["path"] == ".vouch/pages/00/broken-00000000.md"
    assert "frontmatter" in found["message"]
    assert Path(reviewed.root / found["path"]).exists()


def test_an_untracked_file_under_vouch_is_named_not_judged_as_knowledge(
    reviewed: KB, run_cli: Any
) -> None:
    """A claim file dropped into `.vouch/claims/` without git (no commit, no review): not
    counted among the objects, not judged as knowledge (no "no decision record" error, no
    hash check), but named once, as a warning with the commands that settle it. The same
    file once tracked is judged as knowledge again."""
    _, before = doctor(run_cli)
    objects = before["checks"]["lint"]["objects"]
    tracked = git(reviewed.root, "ls-files", ".vouch/claims").split()[0]
    stray = reviewed.root / ".vouch" / "claims" / "0b" / "stray-claim-0badc0de.yaml"
    stray.parent.mkdir(parents=True, exist_ok=True)
    old_id = Path(tracked).stem.encode()
    stray.write_bytes((reviewed.root / tracked).read_bytes().replace(old_id, stray.stem.encode()))
    status = git(reviewed.root, "status", "--porcelain", "--untracked-files=all")

    code, report = doctor(run_cli)
    assert code == 0 and report["verdict"] == "warnings", report["issues"]
    assert report["checks"]["lint"]["objects"] == objects
    [found] = by_check(report, "lint")
    assert found["kind"] == "untracked" and found["severity"] == "warn"
    assert found["path"] == ".vouch/claims/0b/stray-claim-0badc0de.yaml"
    assert f"rm {stray}" in found["message"] and "vouch propose-claim" in found["message"]
    assert "not knowledge" in found["message"]
    human = run_cli("doctor", cwd=reviewed.root)
    named = [line for line in human.out.splitlines() if "stray-claim-0badc0de" in line]
    assert human.code == 0 and len(named) == 1 and "warn[untracked]" in named[0], human.out
    # doctor only reads: the stray is where it was, nothing staged or committed
    assert git(reviewed.root, "status", "--porcelain", "--untracked-files=all") == status

    git(reviewed.root, "add", str(stray))  # tracked now: judged as knowledge
    code, report = doctor(run_cli)
    kinds = {i["kind"] for i in by_check(report, "lint")}
    assert code == 1 and "untracked" not in kinds and "no-decision" in kinds, kinds


def test_the_new_files_of_an_interrupted_write_are_not_called_strays(
    kb_with_sources: KB, run_cli: Any
) -> None:
    """Killed right after it wrote the new claim (untracked until the index is written):
    doctor names the interrupted write, not the claim as a stray to remove."""
    kb = kb_with_sources
    pid = propose_claim(kb, "Written, then killed")
    killed = vouch_forked(kb.root, "approve", pid, "--as", BOB, env={landing.FAULT_ENV: "objects"})
    assert killed.returncode == 86, killed.stderr
    assert git(kb.root, "ls-files", "--others", "--", ".vouch/claims").strip()
    report = run_cli("doctor", "--json", cwd=kb.root).json()
    kinds = [i["kind"] for i in report["issues"]]
    assert "untracked" not in kinds and "interrupted-landing" in kinds, report["issues"]
