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


def _taken_over(kb: KB, previous: freshness.State) -> tuple[freshness.State, bool]:
    """A check after `previous`, whether it took the staged paths over (ran no git walk
    over HEAD's trees), and that it equals a check from scratch."""
    probe = freshness.start(kb, previous)
    reused = probe._staged is None
    fast = probe.result()
    full = freshness.current(kb)
    assert (fast.tree, fast.dirty, fast.staged) == (full.tree, full.dirty, full.staged)
    return fast, reused


def test_staged_paths_are_taken_over_only_while_the_index_and_head_stay(
    kb: KB, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(freshness, "RACY_SECONDS", 0.0)  # trust the index file at once
    first = claim(kb, "First claim about deploys")
    commit(kb)
    tracked = next((kb.dir / "claims").rglob(f"{first['id']}.yaml"))
    repo_path = tracked.relative_to(kb.root).as_posix()

    state = freshness.current(kb)
    assert state.index_stamp and state.staged == ()
    state, reused = _taken_over(kb, state)
    assert reused and state.dirty == {}

    tracked.write_text(tracked.read_text() + "# staged edit\n")
    git(kb.root, "add", str(tracked))
    state, reused = _taken_over(kb, state)
    assert not reused and state.staged == (repo_path,) and len(state.dirty) == 1
    state, reused = _taken_over(kb, state)
    assert reused and state.staged == (repo_path,)  # nothing moved: taken over

    git(kb.root, "commit", "-qm", "the edit")  # writes the index and moves HEAD
    state, reused = _taken_over(kb, state)
    assert not reused and state.staged == () and state.dirty == {}
    state, reused = _taken_over(kb, state)
    assert reused

    # HEAD moves back; the index file is not written: its stamp alone would lie
    git(kb.root, "reset", "-q", "--soft", "HEAD~1")
    state, reused = _taken_over(kb, state)
    assert state.staged == (repo_path,) and len(state.dirty) == 1

    git(kb.root, "rm", "-q", "--cached", str(tracked))  # removed from the index only
    state, reused = _taken_over(kb, state)
    assert not reused and state.staged == (repo_path,)
    assert state.dirty == {
        tracked.relative_to(kb.dir).as_posix(): state.dirty[tracked.relative_to(kb.dir).as_posix()]
    }


def test_an_index_file_elsewhere_or_just_written_is_never_taken_over(
    kb: KB, monkeypatch: pytest.MonkeyPatch
) -> None:
    claim(kb, "Kept")
    commit(kb)
    index_file = kb.root / ".git" / "index"
    assert freshness.current(kb).index_stamp == ""  # written within RACY_SECONDS
    monkeypatch.setattr(freshness, "RACY_SECONDS", 0.0)
    state = freshness.current(kb)
    assert state.index_stamp
    monkeypatch.setenv("GIT_INDEX_FILE", str(index_file))  # git's own variable moves it
    probe = freshness.start(kb, state)
    assert probe._staged is not None and probe.result().index_stamp == ""
    monkeypatch.delenv("GIT_INDEX_FILE")
    restored = freshness.State.from_meta(
        state.tree, state.dirty_json(), state.stamps_json(), state.index_stamp, '{"not": 1}'
    )
    assert restored.index_stamp == "" and restored.staged == ()  # not what we wrote
