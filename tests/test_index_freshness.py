"""Freshness: the git identity of .vouch content, computed incrementally, equals the one
computed from scratch after every kind of change."""

from __future__ import annotations

import time

import pytest
from conftest import git
from index_support import SOURCE, claim, commit

from vouch.index import freshness
from vouch.store.kb import KB


def _check(kb: KB, previous: freshness.State) -> freshness.State:
    time.sleep(0.02)  # let directory mtimes tick
    fast = freshness.current(kb, previous)
    full = freshness.current(kb)
    assert (fast.tree, fast.dirty) == (full.tree, full.dirty)
    assert fast.source_hash == full.source_hash
    return fast


def test_incremental_identity_matches_a_full_scan(kb: KB, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(freshness, "RACY_SECONDS", 0.0)  # trust stamps at once
    first = claim(kb, "First claim about deploys")
    commit(kb)
    state = freshness.current(kb)
    assert state.dirty == {}
    clean_hash = state.source_hash

    second = claim(kb, "Second claim, untracked in an existing or new shard")
    state = _check(kb, state)
    assert len(state.dirty) == 1 and next(iter(state.dirty.values()))

    path = next((kb.dir / "claims").rglob(f"{second['id']}.yaml"))
    path.write_text(path.read_text() + "# edited in place\n")  # untracked, edited in place
    before = state.source_hash
    state = _check(kb, state)
    assert state.source_hash != before

    tracked = next((kb.dir / "claims").rglob(f"{first['id']}.yaml"))
    tracked.write_text(tracked.read_text() + "# tracked edit\n")
    state = _check(kb, state)
    assert len(state.dirty) == 2

    git(kb.root, "add", str(tracked))  # staged only
    state = _check(kb, state)
    assert len(state.dirty) == 2

    git(kb.root, "checkout", "--", ".")  # nothing staged is undone; reset the work tree
    git(kb.root, "reset", "-q", "--hard")
    state = _check(kb, state)
    assert path.exists() and list(state.dirty) == [path.relative_to(kb.dir).as_posix()]

    path.unlink()
    state = _check(kb, state)
    assert state.dirty == {} and state.source_hash == clean_hash

    tracked.unlink()  # deleted, tracked
    state = _check(kb, state)
    assert list(state.dirty.values()) == [None]

    git(kb.root, "checkout", "--", ".")
    (kb.dir / "searches.log.jsonl").write_text("{}\n")  # ignored by .vouch/.gitignore
    (kb.dir / "index").mkdir(exist_ok=True)
    (kb.dir / "index" / "x").write_text("derived")
    state = _check(kb, state)
    assert state.source_hash == clean_hash

    source_dir = kb.dir / "sources" / SOURCE[:2] / SOURCE
    source_dir.mkdir(parents=True)
    (source_dir / "meta.yaml").write_text("id: x\n")  # a new directory below a shard
    state = _check(kb, state)
    assert f"sources/{SOURCE[:2]}/{SOURCE}/meta.yaml" in state.dirty

    git(kb.root, "checkout", "-qb", "other")
    git(kb.root, "add", "-A", ".vouch")
    git(kb.root, "commit", "-qm", "other")
    state = _check(kb, state)
    assert state.dirty == {} and state.source_hash != clean_hash
    git(kb.root, "checkout", "-q", "main")
    state = _check(kb, state)
    assert state.source_hash == clean_hash


def test_changed_paths_between_states(kb: KB) -> None:
    claim(kb, "Kept")
    commit(kb)
    before = freshness.current(kb)
    added = claim(kb, "Added later")
    commit(kb)
    after = freshness.current(kb)
    changed = freshness.changed_paths(kb, before, after)
    assert any(added["id"] in p for p in changed)
    gone = freshness.State("0" * 40)
    with pytest.raises(freshness.HistoryGone):
        freshness.changed_paths(kb, gone, after)
