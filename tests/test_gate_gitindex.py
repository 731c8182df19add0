"""The in-place index patcher agrees with git's own update-index, or steps aside.

Every other kind of index (split, sparse, untracked cache, fsmonitor, sha256, ...) is built
and compared in tests/test_git_index_variants.py."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import git
from gate_support import write_files

from vouch.git import Repo
from vouch.git import index_file as gitindex


@pytest.fixture
def files_repo(tmp_path: Path) -> Path:
    root = tmp_path / "r"
    root.mkdir()
    git(root, "init", "-q")
    for rel in ("a.txt", "d/b.txt", "d/c.txt", "d/sub/e.txt", "z/y.txt", "d.txt", "d-x/f"):
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"{rel}\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "files")
    return root


def _apply(root: Path, changes: dict[str, str | None], fast: bool) -> None:
    repo = Repo(root)
    blobs = write_files(root, changes)
    if fast:
        assert repo._stage_fast(blobs)
    else:
        lines = [f"100644 {b}\t{p}" if b else f"0 {'0' * 40}\t{p}" for p, b in blobs.items()]
        subprocess.run(
            ["git", "update-index", "--index-info"],
            cwd=root,
            check=True,
            input="\n".join(lines) + "\n",
            text=True,
        )


@pytest.mark.parametrize("version", ["2", "3"])
def test_patch_matches_git_update_index(files_repo: Path, tmp_path: Path, version: str) -> None:
    git(files_repo, "update-index", "--index-version", version)
    if version == "3":  # git writes version 3 only while an entry has extended flags
        git(files_repo, "update-index", "--skip-worktree", "z/y.txt")
    assert (files_repo / ".git" / "index").read_bytes()[4:8] == int(version).to_bytes(4, "big")
    git(files_repo, "write-tree")  # make sure a cache-tree extension exists
    twin = tmp_path / "twin"
    shutil.copytree(files_repo, twin)
    changes: dict[str, str | None] = {
        "d/b.txt": "changed\n",  # replace an entry
        "d/bb.txt": "new in d\n",  # insert inside a directory
        "d/sub2/new.txt": "new dir\n",  # insert into a new directory
        "d/c.txt": None,  # remove
        "0first.txt": "sorts first\n",  # before every entry
        "zz/last.txt": "sorts last\n",  # after every entry
        "d.txt": "dot sorts before slash\n",
    }
    _apply(files_repo, changes, fast=True)
    _apply(twin, changes, fast=False)
    assert git(files_repo, "ls-files", "-s") == git(twin, "ls-files", "-s")
    assert git(files_repo, "write-tree") == git(twin, "write-tree")
    assert git(files_repo, "status", "--porcelain") == git(twin, "status", "--porcelain")
    assert "M  d/b.txt" in git(files_repo, "status", "--porcelain")
    assert git(files_repo, "diff", "--name-only") == ""  # the stat data makes files clean


def test_index_dirty_agrees_with_status(files_repo: Path) -> None:
    repo = Repo(files_repo)
    head = {
        p: repo.blob_at("HEAD", p)
        for p in ("a.txt", "d/b.txt", "d/sub/e.txt", "new.txt", "z/y.txt")
    }
    assert repo.index_dirty(head, head) == []
    (files_repo / "a.txt").write_text("unstaged\n")
    (files_repo / "d/b.txt").write_text("staged\n")
    git(files_repo, "add", "d/b.txt")
    (files_repo / "new.txt").write_text("untracked\n")
    (files_repo / "z/y.txt").unlink()
    (files_repo / "d/sub/e.txt").touch()  # stat changed, content not: clean
    assert sorted(repo.index_dirty(head, head) or []) == ["a.txt", "d/b.txt", "new.txt", "z/y.txt"]


def test_unsupported_indexes_fall_back_to_git(files_repo: Path) -> None:
    git(files_repo, "update-index", "--index-version", "4")
    assert gitindex.read(Path(files_repo / ".git" / "index")) is None
    repo = Repo(files_repo)
    assert repo.index_dirty(["a.txt"], {"a.txt": repo.blob_at("HEAD", "a.txt")}) is None
    (files_repo / "n.txt").write_text("n\n")
    repo.stage_entries({"n.txt": repo.write_blob(b"n\n")})  # through git update-index
    assert "A  n.txt" in git(files_repo, "status", "--porcelain")


def test_a_held_index_lock_is_respected(files_repo: Path) -> None:
    lock = files_repo / ".git" / "index.lock"
    lock.write_text("")
    assert gitindex.update(files_repo / ".git" / "index", {}) is False
    assert lock.exists()


def test_random_patches_agree_with_git(tmp_path: Path) -> None:
    import random

    rng = random.Random(7)
    names = ["a", "b", "ab", "a-b", "a.b", "a0", "z", ".v", "_u", "A"]
    root = tmp_path / "rand"
    root.mkdir()
    git(root, "init", "-q")
    existing = set()
    for _ in range(40):
        rel = "/".join(rng.choice(names) for _ in range(rng.randint(1, 3))) + ".txt"
        if any(rel.startswith(e[:-4] + "/") or e.startswith(rel[:-4] + "/") for e in existing):
            continue
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(rel)
        existing.add(rel)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "x")
    for round_ in range(8):
        twin = tmp_path / f"twin{round_}"
        shutil.copytree(root, twin)
        changes: dict[str, str | None] = {}
        for _ in range(rng.randint(1, 5)):
            if existing and rng.random() < 0.3:
                changes[rng.choice(sorted(existing))] = None
            else:
                rel = "/".join(rng.choice(names) for _ in range(rng.randint(1, 3))) + ".md"
                clash = any(rel.startswith(e.rsplit(".", 1)[0] + "/") for e in existing)
                if not clash:
                    changes[rel] = f"{rel} {round_}\n"
        _apply(root, changes, fast=True)
        _apply(twin, changes, fast=False)
        assert git(root, "ls-files", "-s") == git(twin, "ls-files", "-s"), changes
        assert git(root, "write-tree") == git(twin, "write-tree")
        existing = set(git(root, "ls-files").split())
        git(root, "commit", "-qm", f"round {round_}", "--allow-empty")
