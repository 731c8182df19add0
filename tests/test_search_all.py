"""`vouch search --all` / `kb.search` with `kbs`, and context packs across knowledge bases
(issue 38 item 3): each hit names its base, scores share one scale, every base's state is
reported and never fatal, hostile registered paths are not followed, nothing is written
in another base, and agents name registered bases only."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import _copy_template, git
from index_support import claim, commit
from search_support import validate
from servers_support import JsonlServer
from test_warm_auto import auto_env, serving

from vouch import autostart, forward
from vouch.index.api import Index
from vouch.kinds import KINDS
from vouch.store import kb_registry
from vouch.store.kb import KB

SHARED = "Deploys run from the main branch via GitHub Actions"


def base(
    request: pytest.FixtureRequest,
    tmp_path: Path,
    name: str,
    texts: list[str],
    freshness: float | None = None,
) -> KB:
    """A real repository whose knowledge base holds `texts` as approved claims (and
    `search.freshness_seconds: freshness`), indexed (as a search there leaves it) and
    registered as `name`."""
    root = tmp_path / name
    _copy_template(request, "kb", root)
    kb = KB.open(root)
    if freshness is not None:
        config = kb.dir / "config.yaml"
        text = config.read_text()
        assert "\nsearch:\n" in text
        config.write_text(
            text.replace("\nsearch:\n", f"\nsearch:\n  freshness_seconds: {freshness}\n")
        )
    for text in texts:
        claim(kb, text)
    commit(kb)
    Index.open(kb).close()
    kb_registry.add(root, name)
    return kb


def everything(root: Path) -> dict[str, str]:
    """Every file under `root` (the .git folder included) by its bytes' digest."""
    out = {}
    for folder, _, files in os.walk(root):
        for name in files:
            path = Path(folder, name)
            if path.is_symlink():
                out[str(path)] = "link:" + os.readlink(path)
            else:
                out[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def across(run_cli, *args: str, cwd: Path) -> dict[str, Any]:
    result = run_cli("search", "--all", *args, "--json", cwd=cwd)
    assert result.code == 0, result
    data: dict[str, Any] = result.json()
    validate(data)
    return data


def test_one_document_in_two_bases_scores_the_same_and_interleaves(
    request: pytest.FixtureRequest, tmp_path: Path, run_cli
) -> None:
    alpha = base(
        request,
        tmp_path,
        "alpha",
        [SHARED, "The billing service stores invoices in PostgreSQL", "Lunch is at noon"],
    )
    beta = base(
        request,
        tmp_path,
        "beta",
        [SHARED] + [f"The main office kitchen {n} keeps branch coffee" for n in range(25)],
    )
    query = "deploys from the main branch"
    found = across(run_cli, query, cwd=tmp_path)
    assert found["kbs"] == ["alpha", "beta"]
    assert [(b["name"], b["state"]) for b in found["bases"]] == [
        ("alpha", "fresh"),
        ("beta", "fresh"),
    ]
    first, second = found["results"][:2]
    assert {first["kb"], second["kb"]} == {"alpha", "beta"}
    assert first["id"] == second["id"] and first["text"] == SHARED
    assert first["score"] == second["score"]
    assert first["score_breakdown"] == second["score_breakdown"]
    assert all(h["score"] < first["score"] for h in found["results"][2:])
    # each base's own search scores it differently (its statistics, its neighbours): the
    # shared scale is what makes them equal
    local = {
        kb.root.name: next(
            h["score"]
            for h in run_cli("search", query, "--json", cwd=kb.root).json()["results"]
            if h["text"] == SHARED
        )
        for kb in (alpha, beta)
    }
    assert local["alpha"] != local["beta"]
    # names only some: only those searched and reported
    only = run_cli("search", query, "--kbs", "beta", "--json", cwd=tmp_path).json()
    assert {h["kb"] for h in only["results"]} == {"beta"} and only["kbs"] == ["beta"]
    assert [b["name"] for b in only["bases"]] == ["beta"]
    human = run_cli("search", "--all", query, "--format", "human", cwd=tmp_path).out
    assert "{alpha}" in human and "{beta}" in human


def test_a_base_of_many_weak_hits_does_not_crowd_out_one_strong_hit(
    request: pytest.FixtureRequest, tmp_path: Path, run_cli
) -> None:
    strong = base(
        request,
        tmp_path,
        "strong",
        ["The payment worker's retry budget is five attempts", "Lunch is at noon on Fridays"],
    )
    weak = base(
        request,
        tmp_path,
        "weak",
        [f"Worker {n} writes a retry line to its log when queue {n} is slow" for n in range(40)],
    )
    query = "payment retry budget"
    found = across(run_cli, query, "--top", "5", cwd=tmp_path)
    assert found["results"][0]["kb"] == "strong"
    assert "retry budget" in found["results"][0]["text"]
    assert [h["kb"] for h in found["results"][1:]] == ["weak"] * 4
    # by the bases' own scores the weak base's best would come first: a merge of local
    # scores (or ranks) is what this test tells apart
    best = {
        kb.root.name: run_cli("search", query, "--json", cwd=kb.root).json()["results"][0]["score"]
        for kb in (strong, weak)
    }
    assert best["weak"] > best["strong"]


def test_missing_stale_unindexed_and_hostile_bases_are_reported_not_fatal(
    request: pytest.FixtureRequest, tmp_path: Path, run_cli
) -> None:
    base(request, tmp_path, "good", [SHARED])
    moved = base(request, tmp_path, "moved", ["Moved bases hold deploy notes too"])
    stale = base(request, tmp_path, "stale", ["The first deploy note of the stale base"])
    unindexed = base(request, tmp_path, "unindexed", ["Deploy notes nobody indexed"])
    linked = base(request, tmp_path, "linked", ["Deploy notes behind a link"])
    vouch_file = base(request, tmp_path, "vouchfile", ["Deploy notes in a file"])
    unreadable = base(request, tmp_path, "unreadable", ["Deploy notes under a bad config"])
    outside = base(request, tmp_path / "outside", "secret", ["Deploy secrets outside"])
    kb_registry.remove("secret")
    shutil.move(moved.root, tmp_path / "moved-away")
    claim(stale, "A second deploy note the index has not seen")
    commit(stale)
    shutil.rmtree(unindexed.dir / "index")
    shutil.rmtree(linked.root)
    linked.root.symlink_to(outside.root)  # the registered path now leads elsewhere
    shutil.rmtree(vouch_file.dir)
    vouch_file.dir.write_text("index: here\n")
    (unreadable.dir / "config.yaml").write_text("a: &x [1]\nb: *x\n")
    stale_index = everything(stale.dir / "index")

    found = across(run_cli, "deploy notes", cwd=tmp_path)
    states = {b["name"]: (b["state"], b.get("detail", "")) for b in found["bases"]}
    assert states["good"][0] == "fresh"
    assert states["moved"][0] == "missing" and "does not exist" in states["moved"][1]
    assert states["stale"][0] == "stale" and "vouch index rebuild" in states["stale"][1]
    assert states["unindexed"][0] == "unindexed" and "index rebuild" in states["unindexed"][1]
    assert states["linked"][0] == "refused" and "symbolic link" in states["linked"][1]
    assert states["vouchfile"][0] == "refused" and "is a file" in states["vouchfile"][1]
    assert states["unreadable"][0] == "unreadable" and "anchor" in states["unreadable"][1]
    assert found["kbs"] == ["good", "stale"]
    texts = {h["text"] for h in found["results"]}
    assert "The first deploy note of the stale base" in texts  # searched as it is,
    assert "A second deploy note the index has not seen" not in texts  # never refreshed
    assert "Deploy secrets outside" not in texts  # the link was not followed
    now = everything(stale.dir / "index")
    # SQLite's sidecars of a WAL database exist while this process holds it open; no
    # page was written (an empty -wal), the database and the vectors are byte for byte
    sidecars = {p for p in now if p.endswith(("-wal", "-shm"))}
    assert all(os.path.getsize(p) == 0 for p in sidecars if p.endswith("-wal"))
    assert {p: d for p, d in now.items() if p not in sidecars} == stale_index
    assert not (unindexed.dir / "index").exists()  # no index made there
    # every base that could not be searched: the whole search still answers
    for name in ("good", "stale"):
        kb_registry.remove(name)
    alone = across(run_cli, "deploy notes", cwd=tmp_path)
    assert alone["results"] == [] and alone["kbs"] == []
    assert "No results." in run_cli("search", "--all", "deploy", "--format", "human").out


def test_no_base_is_written_and_no_warm_process_is_started(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """A real `vouch search --all` and `vouch context --all`, run inside one base with
    nothing ruling out a warm process: not a file of any base changes (no index refresh
    of a stale one, no search log, no warm folder), and no process is started."""
    one = base(request, tmp_path, "one", [SHARED])
    # freshness_seconds 0: a held index of its own would be checked again at once
    two = base(
        request,
        tmp_path,
        "two",
        [SHARED, "Rollbacks need a second approver"],
        freshness=0,
    )
    claim(two, "A note committed after the index was made")
    commit(two)  # two is stale: a local search there would refresh it
    before = {kb.root.name: everything(kb.root) for kb in (one, two)}
    env = auto_env(XDG_CONFIG_HOME=os.environ["XDG_CONFIG_HOME"])
    for args in (("search", "--all", "deploys"), ("context", "--all", "deploys", "--json")):
        done = subprocess.run(
            [sys.executable, "-P", "-m", "vouch", *args],
            cwd=one.root,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr
    time.sleep(0.3)  # a process started in the background would be there by now
    assert serving(one) == [] and serving(two) == []
    for kb in (one, two):
        state = kb.root / ".git" / "vouch"
        assert not any(p.name.startswith("warm-") for p in state.iterdir())
        assert not (state / autostart.STAMP_NAME).exists()
    assert {kb.root.name: everything(kb.root) for kb in (one, two)} == before
    # the same search of its own base would have started one (autostart is possible)
    assert forward.runs_warm("search", ["search", "deploys"])


def test_agents_name_registered_bases_never_paths(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    alpha = base(request, tmp_path, "alpha", [SHARED])
    base(request, tmp_path, "beta", [SHARED, "Beta's own deploy note"])
    secret = tmp_path / "secret"
    _copy_template(request, "kb", secret)
    claim(KB.open(secret), "The secret deploy token rotates weekly")
    commit(KB.open(secret))
    Index.open(KB.open(secret)).close()
    registry = kb_registry.registry_path().read_bytes()
    with JsonlServer(alpha.root) as server:
        hits = server.result("kb.search", {"query": "deploy note", "kbs": ["beta"]})
        assert hits and {h["kb"] for h in hits} == {"beta"}
        every = server.result("kb.search", {"query": "deploys", "kbs": ["all"], "envelope": True})
        assert every["kbs"] == ["alpha", "beta"]
        for kbs, code in [
            ([str(secret)], "E100"),
            (["../secret"], "E100"),
            (["secret"], "E101"),
            (["all", "beta"], "E100"),
            (["beta", "/etc"], "E100"),
        ]:
            response = server.call("kb.search", {"query": "secret deploy token", "kbs": kbs})
            assert not response["ok"] and response["error"]["vouch_code"] == code, response
        wrong = server.call("kb.search", {"query": "x", "kbs": "all"})
        assert wrong["error"]["code"] == "invalid_request"
        packed = server.result("kb.context", {"task": "deploy note", "kbs": ["beta"]})
        assert {i["kb"] for i in packed["items"]} == {"beta"}
        refused = server.call("kb.context", {"task": "secret token", "kbs": [str(secret)]})
        assert refused["error"]["vouch_code"] == "E100"
        for method in ("kb.kb_add", "kb.add", "kb.kb_remove", "kb.kb_list"):
            assert server.call(method, {"path": str(secret)})["error"]["code"] == (
                "method_not_found"
            )
        caps = server.result("kb.capabilities")
        assert not any(m["name"].startswith("kb.kb_") for m in caps["methods"])
    # the MCP adapter, with the agent tool set an agent host gets: the same door
    from vouch.servers import mcp, server_context

    ctx = server_context("mcp", kb_path=str(alpha.root), tools="agent")
    ok = mcp.call(ctx, "kb_search", {"query": "deploy note", "kbs": ["beta"]})
    assert not ok.is_error and {h["kb"] for h in json.loads(ok.content[0].text)} == {"beta"}
    for kbs in ([str(secret)], ["../secret"], ["secret"]):
        refused = mcp.call(ctx, "kb_search", {"query": "secret deploy token", "kbs": kbs})
        assert refused.is_error and "secret deploy token" not in refused.content[0].text
    assert kb_registry.registry_path().read_bytes() == registry


def test_a_context_pack_across_bases(
    request: pytest.FixtureRequest, tmp_path: Path, run_cli
) -> None:
    base(request, tmp_path, "alpha", [SHARED, "The billing service stores invoices in PostgreSQL"])
    base(request, tmp_path, "beta", [SHARED, "Deploys need a green CI run first"])
    result = run_cli(
        "context", "--all", "how do deploys run", "--max-chars", "200", "--json", cwd=tmp_path
    )
    assert result.code == 0, result.err
    pack = result.json()
    assert pack["kbs"] == ["alpha", "beta"]
    assert pack["total_chars"] <= 200
    shared = [i for i in pack["items"] if i["text"] == SHARED]
    assert {i["kb"] for i in shared} == {"alpha", "beta"}
    assert shared[0]["score"] == shared[1]["score"]
    assert sum(len(i["text"]) for i in pack["items"]) == pack["total_chars"]
    markdown = run_cli("context", "--all", "how do deploys run", cwd=tmp_path).out
    assert "from alpha" in markdown and "from beta" in markdown


def test_clear_errors(request: pytest.FixtureRequest, tmp_path: Path, run_cli) -> None:
    nothing = run_cli("search", "--all", "deploys", "--json", cwd=tmp_path)
    assert nothing.code == 1 and nothing.json()["error"]["code"] == "E100"
    assert "kb add" in nothing.json()["error"]["hint"]
    base(request, tmp_path, "alpha", [SHARED])
    for args, code in [
        (("search", "--all", "  "), "E004"),
        (("search", "--all", "x", "--kbs", "alpha"), "E100"),
        (("search", "--all", "x", "--include-pending"), "E100"),
        (("search", "--all", "x", "--trace"), "E100"),
        (("search", "--all", "x", "--cursor", "abc"), "E100"),
    ]:
        result = run_cli(*args, "--json", cwd=tmp_path)
        assert result.code == 1 and result.json()["error"]["code"] == code, (args, result)
        assert "Traceback" not in result.err
    git(tmp_path / "alpha", "status")  # still a working repository


def test_a_server_sees_a_base_its_own_search_refreshed(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """A long-lived JSONL server holds every base's index. When a base moves on it says
    stale (and serves the index as it was); once that base's own search refreshed it, or
    a rebuild replaced the file, the server reads the new index — it never refreshes one
    itself."""
    home = base(request, tmp_path, "home", [SHARED])
    other = base(request, tmp_path, "other", ["The first note of the other base"])
    params = {"query": "note of the other base", "kbs": ["all"], "envelope": True}
    with JsonlServer(home.root) as server:
        first = server.result("kb.search", params)
        assert {b["name"]: b["state"] for b in first["bases"]} == {
            "home": "fresh",
            "other": "fresh",
        }
        claim(other, "The second note of the other base")
        commit(other)
        held = server.result("kb.search", params)
        assert {b["name"]: b["state"] for b in held["bases"]}["other"] == "stale"
        assert "The second note of the other base" not in {h["text"] for h in held["results"]}
        local = subprocess.run(
            [sys.executable, "-m", "vouch", "search", "note", "--json"],
            cwd=other.root,
            env={**os.environ, "VOUCH_NO_WARM": "1"},
            capture_output=True,
            check=True,
        )
        assert b"second note" in local.stdout  # its own search refreshed its index
        fresh = server.result("kb.search", params)
        assert {b["name"]: b["state"] for b in fresh["bases"]}["other"] == "fresh"
        assert "The second note of the other base" in {h["text"] for h in fresh["results"]}
        claim(other, "The third note of the other base")
        commit(other)
        rebuilt = subprocess.run(
            [sys.executable, "-m", "vouch", "index", "rebuild", "--json"],
            cwd=other.root,
            env={**os.environ, "VOUCH_NO_WARM": "1"},
            capture_output=True,
            check=True,
        )
        assert rebuilt.returncode == 0
        again = server.result("kb.search", params)
        assert "The third note of the other base" in {h["text"] for h in again["results"]}


def test_a_stale_base_serves_nothing_its_files_deleted_or_redacted_since(
    request: pytest.FixtureRequest, tmp_path: Path, run_cli
) -> None:
    """Another base's index is never refreshed from here: a decision that reached it by
    `git pull` (a deletion, a redaction) leaves its old index naming the words. A hit
    whose object that base's files no longer hold, or hold redacted, is not served."""
    base(request, tmp_path, "good", [SHARED])
    other = base(
        request,
        tmp_path,
        "other",
        ["The vault token for deploys is zorbquill", "The deploy bucket is zorbquill too"],
    )
    found = across(run_cli, "zorbquill deploy", cwd=tmp_path)
    ids = [h["id"] for h in found["results"] if h["kb"] == "other"]
    assert len(ids) == 2
    first, second = (other.dir / KINDS["claim"].path_for(i) for i in ids)
    first.unlink()  # as a pulled deletion leaves it
    text = second.read_text()
    second.write_text(text.replace("status: working", "status: redacted"))  # as a redaction
    git(other.root, "add", "-A")
    git(other.root, "commit", "-qm", "pulled", "--no-verify")
    again = across(run_cli, "zorbquill deploy", cwd=tmp_path)
    assert {b["name"]: b["state"] for b in again["bases"]}["other"] == "stale"
    assert not [h for h in again["results"] if h["kb"] == "other"]
    assert "zorbquill" not in json.dumps(again["results"])
