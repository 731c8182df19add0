"""The file watch (`vouch.servers.watch`) on its own, the servers that keep it, and the
freshness check it narrows: git asked about the named files finds what git asked about
every file finds."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from conftest import git
from index_support import claim
from warm_support import path_for_claim, small_kb

from vouch.servers.watch import Always, Watch
from vouch.store.kb import KB


@pytest.fixture
def small(kb: KB) -> KB:
    return small_kb(kb)


def test_the_watch_names_knowledge_files_and_nothing_else(tmp_path: Path) -> None:
    top = tmp_path / ".vouch"
    (top / "claims" / "ab").mkdir(parents=True)
    (top / "index").mkdir()
    (top / "locks").mkdir()
    watch = Watch.open(str(top))
    assert isinstance(watch, Watch)
    nothing: tuple[bool, frozenset[str]] = (False, frozenset())
    try:
        assert watch.changes() == nothing
        (top / "claims" / "ab" / "one.yaml").write_text("x")
        assert watch.changes() == (True, {"claims/ab/one.yaml"})
        assert watch.changes() == nothing  # taken
        # derived, local and logged state is not knowledge
        (top / "index" / "search.db").write_text("x")
        (top / "locks" / "write.lock").write_text("x")
        (top / "searches.log.jsonl").write_text("{}\n")
        assert watch.changes() == nothing
        # a new folder: its files are not named one by one, but it is watched from now on
        (top / "claims" / "cd").mkdir()
        assert watch.changes() == (True, None)
        (top / "claims" / "cd" / "two.yaml").write_text("y")
        assert watch.changes() == (True, {"claims/cd/two.yaml"})
        os.chmod(top / "claims" / "cd" / "two.yaml", 0o755)
        assert watch.changes() == (True, {"claims/cd/two.yaml"})
        os.rename(top / "claims" / "cd" / "two.yaml", top / "claims" / "ab" / "two.yaml")
        assert watch.changes() == (True, {"claims/cd/two.yaml", "claims/ab/two.yaml"})
        (top / "claims" / "ab" / "two.yaml").unlink()
        (top / "config.yaml").write_text("a: 1\n")
        assert watch.changes() == (True, {"claims/ab/two.yaml", "config.yaml"})
        # absorbed between requests, still reported to the next check
        (top / "claims" / "ab" / "one.yaml").write_text("z")
        assert watch.absorb() is True
        assert watch.absorb() is False
        assert watch.changes() == (True, {"claims/ab/one.yaml"})
        (top / "claims" / "cd").rmdir()
        assert watch.changes() == (True, None)
        # the folder itself moved away: from now on every check is a full one
        top.rename(tmp_path / "moved")
        assert watch.changes() == (True, None)
        assert watch.changes() == (True, None)
    finally:
        watch.close()


def test_without_inotify_every_request_is_checked(tmp_path: Path) -> None:
    missing = Watch.open(str(tmp_path / "missing"))  # nothing to watch: incomplete
    assert isinstance(missing, Watch) and not missing.complete
    assert missing.changes() == (True, None)
    assert missing.kind.startswith("inotify, incomplete")
    assert Always().changes() == (True, None)


def test_an_agent_server_sees_an_edit_at_once(small: KB) -> None:
    """The JSONL and MCP servers keep the same watch: no two-second trust window."""
    from vouch.methods import registry as ops
    from vouch.servers import server_context

    ctx = server_context("jsonl", kb_path=str(small.root))

    def found(query: str) -> list[str]:
        return [r["id"] for r in ops.invoke(ctx, "kb.search", {"query": query})]

    assert found("zebra crossing") == []
    written = claim(small, "Every zebra crossing near the office has a beacon")
    assert found("zebra crossing") == [written["id"]]
    path = small.dir / path_for_claim(written["id"])
    path.write_text(path.read_text().replace("beacon", "lighthouse"))
    assert found("lighthouse") == [written["id"]] and found("beacon") == []


OPERATIONS = (
    *("edit", "edit", "new", "delete", "chmod", "rename", "same"),
    *("stage", "unstage", "reset", "forget"),
)


def test_a_check_of_the_named_files_finds_what_a_full_check_finds(small: KB) -> None:
    """Random edits, stages, commits, renames, deletions and new files under `.vouch/`:
    after each, git asked only about the files the watch named (and those dirty before)
    gives the state git asked about every file gives."""
    import random

    from vouch.index import freshness

    rng = random.Random(7)
    index_file = small.root / ".git" / "index"

    def settle() -> None:  # git's index, as if written minutes ago: its stamp is trusted
        old = time.time() - 60
        os.utime(index_file, (old, old))

    def knowledge() -> list[Path]:
        return sorted(
            p
            for p in small.dir.rglob("*")
            if p.is_file() and p.suffix in (".yaml", ".md") and "index" not in p.parts
        )

    def commit_all(message: str) -> None:
        git(small.root, "add", "-A", ".vouch")
        git(small.root, "commit", "-qm", message, "--allow-empty")

    def step(n: int) -> None:
        files = knowledge()
        kind = rng.choice(OPERATIONS)
        target = rng.choice(files)
        if kind == "edit":
            target.write_text(target.read_text() + f"\n# edit {n}\n")
        elif kind == "new":
            claim(small, f"Claim number {n} about rollbacks and beacons")
        elif kind == "delete":
            target.unlink()
        elif kind == "chmod":
            os.chmod(target, 0o755 if not os.access(target, os.X_OK) else 0o644)
        elif kind == "rename":
            target.rename(target.with_name(f"moved-{n}-{target.name}"))
        elif kind == "same":
            target.write_text(target.read_text())  # same bytes, new mtime
        elif kind == "stage":
            git(small.root, "add", "-A", ".vouch")
            settle()
        elif kind == "unstage":
            git(small.root, "reset", "-q")
            settle()
        elif kind == "reset":  # git's index (and HEAD) back a few commits, files untouched
            commits = git(small.root, "rev-list", "HEAD").split()
            git(small.root, "reset", "-q", rng.choice(commits[1:] or commits))
            settle()
        elif kind == "forget":
            git(small.root, "rm", "-q", "--cached", "--ignore-unmatch", str(target))
            settle()
        if rng.random() < 0.1:
            commit_all(f"step {n}")
            settle()

    settle()
    watch = Watch.open(str(small.dir))
    assert isinstance(watch, Watch)
    previous = freshness.current(small)
    scoped = 0
    try:
        for n in range(100):
            step(n)
            _, paths = watch.changes()  # (a stage or a commit alone changes no file)
            probe = freshness.start(small, previous, paths)
            narrowed = probe._scope(paths) is not None
            scoped += narrowed
            fast = probe.result()
            full = freshness.current(small, previous)
            assert (fast.tree, dict(fast.dirty), fast.staged) == (
                full.tree,
                dict(full.dirty),
                full.staged,
            ), n
            assert fast.source_hash == full.source_hash
            previous = full
    finally:
        watch.close()
    assert scoped >= 40  # most checks looked only at the named files


def test_a_branch_of_many_folders_cannot_use_up_the_users_watches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The kernel's watches are the user's, shared with every tool they run: one
    process watches at most a quarter of them (and 16,384 folders); past that, every
    request is checked in full (sixth outsider sitting: 20,000 committed folders took
    20,028 watches)."""
    from vouch.servers import watch

    top = tmp_path / ".vouch"
    for n in range(12):
        (top / "claims" / f"d{n}").mkdir(parents=True)
    limit = tmp_path / "max_user_watches"
    limit.write_text("40\n")  # a quarter: 10 folders
    monkeypatch.setattr(watch, "LIMIT_FILE", str(limit))
    assert watch.watch_budget() == 10
    held = Watch.open(str(top))
    assert isinstance(held, Watch) and not held.complete and len(held._dirs) == 10
    held.close()
    limit.write_text("4000\n")
    roomy = Watch.open(str(top))
    assert isinstance(roomy, Watch) and roomy.complete and len(roomy._dirs) == 14
    roomy.close()
    limit.write_text("10000000\n")
    assert watch.watch_budget() == watch.MOST_WATCHES
