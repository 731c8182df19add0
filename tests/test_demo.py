"""`vouch demo`, the README's first command, walks the whole loop on the bundled examples."""

from __future__ import annotations

import re
import time
from pathlib import Path

from vouch.kinds import KINDS
from vouch.store.kb import KB


def test_demo_walks_propose_approve_search(run_cli, tmp_path, monkeypatch) -> None:
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    started = time.perf_counter()
    res = run_cli("demo")
    assert time.perf_counter() - started < 15  # issue 16.5: under 15 seconds
    assert res.code == 0, res.err
    steps = [int(m) for m in re.findall(r"^(\d+)\. ", res.out, flags=re.M)]
    assert steps == list(range(1, 16)), res.out  # 7: the reviewer shows (pins) each
    assert "refused [E104]" in res.out  # the proposer may not approve their own proposal
    assert "7 proposals merged together" in res.out and "rejected" in res.out
    assert "vouch audit --verify → OK" in res.out
    assert re.search(r"\] source deploy-runbook\.md §Rolling back", res.out)
    assert re.search(r"vouch doctor → ok: 0 errors", res.out)
    assert "Try it on your own repository" in res.out
    assert not list(tmp_path.glob("vouch-demo-*")), "the temporary repository is removed"
    as_json = run_cli("demo", "--json")
    assert as_json.code == 0, as_json.err
    data = as_json.json()
    assert len(data["steps"]) >= 15 and data["steps"][0].startswith("1. vouch init")
    assert data["repository"] is None


def test_demo_path_keeps_a_realistic_knowledge_base(run_cli, tmp_path: Path) -> None:
    target = tmp_path / "demo"
    res = run_cli("demo", "--path", str(target))
    assert res.code == 0, res.err
    assert f"kept at {target}" in res.out and f"cd {target}" in res.out
    kb = KB.open(target)
    counts = {kind: kb.count(KINDS[kind]) for kind in ("claim", "entity", "relation", "page")}
    assert counts == {"claim": 4, "entity": 2, "relation": 1, "page": 1}  # 3 + the fuller one
    statuses = sorted(str(c["status"]) for c in kb.list(KINDS["claim"], limit=None))
    assert statuses.count("superseded") == 1
    assert run_cli("pending", "--json", cwd=target).json() == []  # one rejected, none left
    again = run_cli("demo", "--path", str(target))
    assert again.code == 1 and "E100" in again.err and "not empty" in again.err
