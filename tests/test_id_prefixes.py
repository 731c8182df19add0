"""Unique prefixes, as git takes them (issue 18, point 2): a source id is taken back as a
unique prefix of 8+ hex digits (also with the `…` human output prints after it), on the
CLI and through the methods; an ambiguous prefix is refused naming the candidates;
other ids are taken whole."""

from __future__ import annotations

import pytest
from gate_support import a_source, call, proposed

from vouch.errors import InvalidId, NotFound
from vouch.store import prefixes
from vouch.store.kb import KB


def test_wants_resolving_is_only_short_or_decorated_hex() -> None:
    full = "ab" * 32
    assert not prefixes.wants_resolving(full)
    assert not prefixes.wants_resolving(f"{full}:L1-L2")
    assert not prefixes.wants_resolving("deploy-notes-1a2b3c4d")
    assert not prefixes.wants_resolving("abcdef1")  # 7 digits: too short to mean one
    assert not prefixes.wants_resolving("20260517-101500-1a2b3c4d")
    for short in ("abababab", "abababababab…", "ABABABABABAB", f"{full}…", "abababab:L3"):
        assert prefixes.wants_resolving(short), short


def test_printed_prefixes_are_taken_back_everywhere(kb_with_sources: KB, run_cli) -> None:
    kb = kb_with_sources
    sid = a_source(kb)
    for given in (sid[:8], sid[:12], sid[:12] + "…", sid[:12].upper()):
        shown = run_cli("show", given, "--json", cwd=kb.root)
        assert shown.code == 0, shown.err
        assert shown.json()["id"] == sid
    added = run_cli("evidence", "add", sid[:12], "L1-L2", "--json", cwd=kb.root)
    assert added.code == 0, added.err
    made = run_cli(
        "propose-claim", "--text", "Deploys go through the runbook.", "--source",
        f"{sid[:10]}:L1", "--json", cwd=kb.root,
    )  # fmt: skip
    assert made.code == 0 and made.json()["valid"], made.err
    # the methods (JSONL, MCP) resolve through the same registry door
    page = proposed(kb, "kb.propose_page", {"title": "Runbook", "sources": [sid[:9]]})
    assert page["valid"], page
    assert call(kb, "kb.source_verify", {"id": sid[:12]})["ok"]
    evidence = call(kb, "kb.register_evidence", {"source_id": sid[:8] + "…", "locator": "L2"})
    assert evidence["id"]


def test_unknown_short_and_ambiguous_prefixes_are_refused(kb_with_sources: KB, run_cli) -> None:
    kb = kb_with_sources
    sid = a_source(kb)
    missing = "0" * 8 if not sid.startswith("0" * 8) else "f" * 8
    res = run_cli("show", missing, cwd=kb.root)
    assert res.code == 1 and "E101" in res.err and f"no source id starts with {missing}" in res.err
    res = run_cli("show", sid[:7], cwd=kb.root)  # below 8 digits: not an id at all
    assert res.code == 1 and "not a vouch id" in res.err
    # a slug-hash id is taken whole only: a prefix of one is no id
    claim = proposed(kb, "kb.propose_claim", {"text": "A claim to abbreviate.", "evidence": [sid]})
    res = run_cli("show", claim["claim_id"][:-3], cwd=kb.root)
    assert res.code == 1
    # two sources sharing a prefix (directories as the store lays them out): ambiguous
    shard = kb.dir / "sources" / sid[:2]
    twins = [sid[:10] + "0" * 54, sid[:10] + "1" * 54]
    for twin in twins:
        (shard / twin).mkdir()
    try:
        res = run_cli("show", sid[:10], cwd=kb.root)
        assert res.code == 1 and "E103" in res.err and "ambiguous" in res.err
        assert all(t in res.err for t in twins)
        with pytest.raises(InvalidId):
            prefixes.resolve(kb, sid[:10] + ":L1")
        assert prefixes.resolve(kb, sid[:12] + ":L1") == sid + ":L1"  # longer: unique
        before = call(kb, "kb.list_pending")
        res = run_cli("propose-claim", "--text", "x y z", "--source", sid[:10], cwd=kb.root)
        assert res.code == 1 and call(kb, "kb.list_pending") == before  # nothing written
    finally:
        for twin in twins:
            (shard / twin).rmdir()
    with pytest.raises(NotFound):
        prefixes.resolve(kb, missing)
