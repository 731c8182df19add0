"""Importing into a clone that holds an older copy of a claim the bundle changed (issue 36,
first-hour friction 5).

The origin approves a claim, a clone imports its bundle, then the origin approves a second
claim and records that the two contradict (both files change) and exports again. In the
clone the second claim is new and the first a conflict: keeping our copy of the first
(`--on-conflict skip`, the default) would land a one-sided contradiction, taking the
bundle's (`overwrite`) lands it whole. `import-check` used to refuse the bundle with E102
"contradiction is symmetric", listing no conflict; it now lists new / conflicting /
identical, says which `--on-conflict` lands it, and `import-apply` without it points there.
A bundle that no mode can land is still refused E102.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import git
from gate_support import BOB, a_source, call, proposed

from vouch.store.kb import KB


def _approve(kb: KB, text: str, src: str) -> str:
    made = proposed(kb, "kb.propose_claim", {"text": text, "evidence": [src]})
    decided = call(kb, "kb.approve", {"proposal_id": made["proposal_id"]}, actor=BOB)
    return str(decided["object_id"])


def _export(run_cli, kb: KB, out: Path) -> Path:
    res = run_cli("export", "--out", str(out), "--kb", str(kb.dir))
    assert res.code == 0, res.err
    return out


def _state(kb: KB) -> tuple[str, str, str, bytes]:
    return (
        git(kb.root, "rev-parse", "HEAD"),
        git(kb.root, "for-each-ref"),
        git(kb.root, "status", "--porcelain", "--untracked-files=all"),
        (kb.dir / "audit.log.jsonl").read_bytes(),
    )


@pytest.fixture
def older(kb_with_sources: KB, fresh: KB, tmp_path: Path, run_cli) -> dict[str, Any]:
    origin = kb_with_sources
    src = a_source(origin)
    first = _approve(origin, "Deploys need a green CI run", src)
    one = _export(run_cli, origin, tmp_path / "one.tar.gz")
    assert run_cli("import-apply", str(one), "--kb", str(fresh.dir)).code == 0
    second = _approve(origin, "Deploys never wait for CI", src)
    call(origin, "kb.contradict", {"a_id": first, "b_id": second}, actor=BOB)
    two = _export(run_cli, origin, tmp_path / "two.tar.gz")
    return {"bundle": two, "first": first, "second": second}


def test_import_check_lists_the_conflict_and_names_overwrite(
    older: dict[str, Any], fresh: KB, run_cli
) -> None:
    before = _state(fresh)
    res = run_cli("import-check", str(older["bundle"]), "--kb", str(fresh.dir), "--json")
    assert res.code == 0, res.out
    plan = res.json()
    assert plan["conflict"] == [older["first"]]
    assert older["second"] in plan["new"] and plan["identical"]
    assert plan["on_conflict"] == {"skip": False, "overwrite": True, "fail": False}
    assert "contradiction is symmetric" in plan["refused"]["skip"][0]
    assert "--on-conflict overwrite" in plan["hint"] and older["first"] in plan["hint"]

    human = run_cli("import-check", str(older["bundle"]), "--kb", str(fresh.dir)).out
    assert f"conflict: {older['first']}" in human
    assert "1 conflicting" in human and "--on-conflict skip would be refused" in human
    assert "hint: 1 object of the bundle exists here" in human
    assert "--on-conflict overwrite" in human
    assert _state(fresh) == before  # a check writes nothing


def test_import_apply_default_is_refused_with_the_overwrite_hint_then_overwrite_lands(
    older: dict[str, Any], fresh: KB, run_cli
) -> None:
    before = _state(fresh)
    res = run_cli("import-apply", str(older["bundle"]), "--kb", str(fresh.dir), "--json")
    assert res.code == 1
    error = res.json()["error"]
    assert error["code"] == "E102" and "nothing was written" in error["message"]
    assert "--on-conflict overwrite" in error["hint"]
    assert _state(fresh) == before

    res = run_cli(
        "import-apply",
        str(older["bundle"]),
        "--on-conflict",
        "overwrite",
        "--kb",
        str(fresh.dir),
        "--json",
    )
    assert res.code == 0, res.out
    assert res.json()["overwritten"] == 1
    claim = call(fresh, "kb.read_claim", {"id": older["first"]})
    assert claim["contradicts"] == [older["second"]]
    assert run_cli("lint", "--kb", str(fresh.dir), "--json").json()["errors"] == 0


def test_a_conflict_both_modes_leave_broken_is_still_refused(
    older: dict[str, Any], fresh: KB, tmp_path: Path, run_cli
) -> None:
    """Whatever the clone keeps, a bundle missing the decision record of its new claim
    leaves knowledge nobody approved: refused E102, and import-check lists no plan."""
    import tarfile

    from test_bundles import members, repack

    items = [
        (info, data)
        for info, data in members(older["bundle"])
        if not (info.name.startswith("decided/") and older["second"].encode() in data)
    ]
    assert len(items) < len(members(older["bundle"]))
    broken = repack(tmp_path / "broken.tar.gz", items, fix_manifest=True)
    assert tarfile.is_tarfile(broken)
    before = _state(fresh)
    for verb in ("import-check", "import-apply"):
        res = run_cli(verb, str(broken), "--kb", str(fresh.dir), "--json")
        assert res.code == 1, (verb, res.out)
        error = res.json()["error"]
        assert error["code"] == "E102" and "nothing was written" in error["message"], error
        assert "--on-conflict" not in str(error.get("hint"))
    assert _state(fresh) == before
