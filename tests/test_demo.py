"""`vouch demo`, the README's first command, walks the whole loop on the bundled examples."""

from __future__ import annotations

import re


def test_demo_walks_propose_approve_search(run_cli, tmp_path, monkeypatch) -> None:
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    res = run_cli("demo")
    assert res.code == 0, res.err
    steps = [int(m) for m in re.findall(r"^(\d+)\. ", res.out, flags=re.M)]
    assert steps == list(range(1, 11)), res.out
    assert "refused [E104]" in res.out  # the proposer may not approve their own proposal
    assert "vouch audit --verify → OK" in res.out
    assert re.search(r"\] source deploy-runbook\.md §Rolling back", res.out)
    assert not list(tmp_path.glob("vouch-demo-*")), "the temporary repository is removed"
    kept = run_cli("demo", "--keep")
    assert kept.code == 0 and len(list(tmp_path.glob("vouch-demo-*"))) == 1
    as_json = run_cli("demo", "--json")
    assert as_json.code == 0, as_json.err
    data = as_json.json()
    assert len(data["steps"]) >= 10 and data["steps"][0].startswith("1. vouch init")
    assert data["repository"] is None
    assert len(run_cli("demo", "--format", "json").json()["steps"]) == len(data["steps"])
