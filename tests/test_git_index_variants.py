"""Every kind of index git may hand the patcher (`vouch.git.index_file`), built for real.

Each variant is made in a real repository of each object format, copied, and then the
same changes are staged twice: by vouch (`Repo.stage_entries`: patched in-process, or
handed to git when the patcher declines) and by `git update-index --index-info` in the
copy. The two indexes must say the same thing to git — entries, flags, sparse
directories, resolve-undo records, status with untracked files, the tree they write —
and pass `git fsck` (which checks the index checksum). Each variant also asserts that it
built what it claims (the index's version, extensions and flags, read independently of
the patcher) and which path vouch took, so a patcher that wrote a wrong index silently
fails here; the last tests show that they do fail for patchers that cut corners.
"""

from __future__ import annotations

import shutil
import struct
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import pytest
from conftest import git
from gate_support import write_files

from vouch.git import Repo
from vouch.git import index_file as gitindex

FILES = ("a.txt", "d/b.txt", "d/c.txt", "d/sub/e.txt", "z/y.txt", "d.txt", "d-x/f")
CHANGES: dict[str, str | None] = {
    "d/b.txt": "changed\n",  # replace an entry
    "d/bb.txt": "new in d\n",  # insert inside a directory
    "d/sub2/new.txt": "new dir\n",  # insert into a new directory
    "d/c.txt": None,  # remove
    "0first.txt": "sorts first\n",  # before every entry
    "zz/last.txt": "sorts last\n",  # after every entry (outside the sparse cone)
    "d.txt": "dot sorts before slash\n",
}
HOOK = r"""#!/bin/sh
# fsmonitor hook, protocol 2, honest: every path appended to .git/fsmon-log since the
# token git passes (the token is the log's line count); "/" (everything) at first
log="$(git rev-parse --git-dir)/fsmon-log"
touch "$log"
printf '%s\0' "$(wc -l < "$log" | tr -d ' ')"
case "$2" in
  ''|*[!0-9]*) printf '/\0' ;;
  *) tail -n "+$(($2 + 1))" "$log" | tr '\n' '\0' ;;
esac
"""


# -- an index reader written from git's format documentation, independent of the patcher --
@dataclass
class Parsed:
    version: int
    extensions: list[str]
    flagged: dict[str, int]  # path -> extended flags (skip-worktree, intent-to-add)
    sparse_dirs: list[str]
    conflicted: list[str]  # paths with entries at stages 1-3


def parse_index(path: Path, width: int) -> Parsed:
    data = path.read_bytes()
    assert data[:4] == b"DIRC"
    version, count = struct.unpack_from(">II", data, 4)
    pos, prev = 12, b""
    flagged: dict[str, int] = {}
    sparse: list[str] = []
    conflicted: list[str] = []
    for _ in range(count):
        mode = struct.unpack_from(">I", data, pos + 24)[0]
        flags = struct.unpack_from(">H", data, pos + 40 + width)[0]
        head = 40 + width + 2
        extended = 0
        if flags & 0x4000:
            extended = struct.unpack_from(">H", data, pos + head)[0]
            head += 2
        if version == 4:  # path: strip N bytes of the previous one, then a suffix
            q = pos + head
            byte = data[q]
            q += 1
            strip = byte & 0x7F
            while byte & 0x80:
                byte = data[q]
                q += 1
                strip = ((strip + 1) << 7) | (byte & 0x7F)
            nul = data.index(b"\0", q)
            name = prev[: len(prev) - strip] + data[q:nul]
            pos = nul + 1
        else:
            nul = data.index(b"\0", pos + head)
            name = data[pos + head : nul]
            pos += (head + len(name) + 8) & ~7
        prev = name
        if extended:
            flagged[name.decode()] = extended
        if mode == 0o40000:
            sparse.append(name.decode())
        if flags & 0x3000 and name.decode() not in conflicted:
            conflicted.append(name.decode())
    exts = []
    while pos < len(data) - width:
        exts.append(data[pos : pos + 4].decode())
        pos += 8 + struct.unpack_from(">I", data, pos + 4)[0]
    assert pos == len(data) - width
    return Parsed(version, exts, flagged, sparse, conflicted)


# -- building each variant -----------------------------------------------------------------
def make_repo(root: Path, algo: str) -> None:
    root.mkdir()
    git(root, "init", "-q", f"--object-format={algo}")
    for rel in FILES:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(f"{rel}\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "files")
    git(root, "write-tree")  # a cache-tree extension


def v2(root: Path) -> None:
    git(root, "update-index", "--index-version", "2")


def v3_skip_worktree(root: Path) -> None:
    git(root, "update-index", "--skip-worktree", "z/y.txt")  # git writes version 3


def v3_intent_to_add(root: Path) -> None:
    (root / "d" / "later.txt").write_text("later\n")
    git(root, "add", "-N", "d/later.txt")


def v4(root: Path) -> None:
    git(root, "update-index", "--index-version", "4")


def split_index(root: Path) -> None:
    git(root, "update-index", "--split-index")
    (root / "d" / "added.txt").write_text("added after the split\n")
    git(root, "add", "d/added.txt")  # one entry in the small index, the rest shared


def split_index_by_config(root: Path) -> None:
    """Every entry refreshed: the small index holds them as nameless replacements."""
    git(root, "config", "core.splitIndex", "true")
    git(root, "config", "splitIndex.maxPercentChange", "100")
    git(root, "update-index", "--force-write-index")


def untracked_cache(root: Path) -> None:
    git(root, "config", "core.untrackedCache", "true")
    git(root, "update-index", "--untracked-cache")
    (root / "d" / "scratch.txt").write_text("untracked\n")
    (root / "notes.txt").write_text("untracked\n")
    git(root, "status", "--porcelain", "--untracked-files=all")  # fills the cache


def fsmonitor(root: Path) -> None:
    hook = root.parent / "fsmonitor-hook"
    hook.write_text(HOOK)
    hook.chmod(0o755)
    git(root, "config", "core.fsmonitor", str(hook))
    git(root, "config", "core.fsmonitorHookVersion", "2")
    git(root, "update-index", "--fsmonitor")
    git(root, "status", "--porcelain")  # every entry checked and marked valid
    # a modified file the monitor reported: its bit in the FSMN bitmap says "look at me";
    # entries inserted before it shift its position
    (root / "a.txt").write_text("modified, unstaged\n")
    _log_changes(root, ["a.txt"])
    git(root, "status", "--porcelain")


def sparse_checkout(root: Path) -> None:
    git(root, "sparse-checkout", "set", "--cone", "d")


def sparse_index(root: Path) -> None:
    git(root, "config", "index.sparse", "true")
    git(root, "sparse-checkout", "set", "--cone", "--sparse-index", "d")


def end_of_entries(root: Path) -> None:
    git(root, "config", "index.recordEndOfIndexEntries", "true")
    git(root, "config", "index.recordOffsetTable", "true")
    git(root, "config", "index.threads", "4")
    git(root, "update-index", "--force-write-index")


def conflict(root: Path) -> None:
    git(root, "checkout", "-q", "-b", "other")
    (root / "z/y.txt").write_text("theirs\n")
    git(root, "commit", "-qam", "theirs")
    git(root, "checkout", "-q", "-")
    (root / "z/y.txt").write_text("ours\n")
    git(root, "commit", "-qam", "ours")
    subprocess.run(["git", "merge", "-q", "other"], cwd=root, capture_output=True)


def resolve_undo(root: Path) -> None:
    conflict(root)
    (root / "z/y.txt").write_text("resolved\n")
    git(root, "add", "z/y.txt")  # the conflict's stages move to the REUC extension


@dataclass(frozen=True)
class Variant:
    build: Callable[[Path], None]
    proof: Callable[[Parsed], bool]  # the index really is this variant
    fast: bool  # patched in-process (True) or handed to git (False)
    changes: tuple[tuple[str, str | None], ...] = tuple(CHANGES.items())


VARIANTS = {
    "v2": Variant(v2, lambda p: p.version == 2 and p.extensions == ["TREE"], True),
    "v3-skip-worktree": Variant(
        v3_skip_worktree, lambda p: p.version == 3 and p.flagged == {"z/y.txt": 0x4000}, True
    ),
    "v3-intent-to-add": Variant(
        v3_intent_to_add, lambda p: p.version == 3 and p.flagged == {"d/later.txt": 0x2000}, True
    ),
    "v3-touching-a-flagged-entry": Variant(
        v3_skip_worktree,
        lambda p: p.flagged == {"z/y.txt": 0x4000},
        False,
        (*CHANGES.items(), ("z/y.txt", "skip-worktree entry changed\n")),
    ),
    "v4": Variant(v4, lambda p: p.version == 4, False),
    "split-index": Variant(split_index, lambda p: "link" in p.extensions, False),
    "split-index-by-config": Variant(
        split_index_by_config, lambda p: "link" in p.extensions, False
    ),
    "untracked-cache": Variant(untracked_cache, lambda p: "UNTR" in p.extensions, True),
    "fsmonitor": Variant(fsmonitor, lambda p: "FSMN" in p.extensions, True),
    "sparse-checkout": Variant(
        sparse_checkout,
        lambda p: p.flagged == {"z/y.txt": 0x4000, "d-x/f": 0x4000} and not p.sparse_dirs,
        True,
    ),
    "sparse-checkout-touching-outside": Variant(
        sparse_checkout,
        lambda p: "z/y.txt" in p.flagged,
        False,
        (*CHANGES.items(), ("z/y.txt", "outside the cone\n")),
    ),
    "sparse-index": Variant(
        sparse_index,
        lambda p: "sdir" in p.extensions and p.sparse_dirs == ["d-x/", "z/"],
        False,
        (*CHANGES.items(), ("z/inside-a-sparse-directory.txt", "new\n")),
    ),
    "end-of-entries": Variant(
        end_of_entries, lambda p: {"EOIE", "IEOT"} <= set(p.extensions), True
    ),
    "conflict": Variant(conflict, lambda p: p.conflicted == ["z/y.txt"], True),
    "conflict-touched": Variant(
        conflict,
        lambda p: p.conflicted == ["z/y.txt"],
        False,
        (*CHANGES.items(), ("z/y.txt", "resolved by vouch\n")),
    ),
    "resolve-undo": Variant(resolve_undo, lambda p: "REUC" in p.extensions, True),
    "resolve-undo-touched": Variant(
        resolve_undo,
        lambda p: "REUC" in p.extensions,
        True,
        (*CHANGES.items(), ("z/y.txt", "the resolved path changed again\n")),
    ),
}


# -- applying the changes, and what git says about the result --------------------------------
def _log_changes(root: Path, paths: list[str]) -> None:
    """Tell the honest fsmonitor hook (when there is one) what changed."""
    log = root / ".git" / "fsmon-log"
    if log.exists():
        with log.open("a") as fh:
            fh.writelines(f"{p}\n" for p in paths)


def _write_files(root: Path, changes: dict[str, str | None]) -> dict[str, str | None]:
    blobs = write_files(root, changes)
    _log_changes(root, list(changes))
    return blobs


def by_vouch(root: Path, changes: dict[str, str | None]) -> bool:
    """Stage as the gate does; True when the index was patched in-process."""
    blobs = _write_files(root, changes)
    repo = Repo(root)
    if repo._stage_fast(blobs):
        return True
    repo.stage_entries(blobs, worktree_matches=False)  # what stage_entries falls back to
    return False


def by_git(root: Path, changes: dict[str, str | None]) -> None:
    blobs = _write_files(root, changes)
    null = Repo(root).store.null_id
    lines = [f"100644 {b}\t{p}" if b else f"0 {null}\t{p}" for p, b in blobs.items()]
    subprocess.run(
        ["git", "update-index", "--index-info"],
        cwd=root,
        check=True,
        input="\n".join(lines) + "\n",
        text=True,
    )


def what_git_sees(root: Path) -> dict[str, str]:
    return {
        "entries": git(root, "ls-files", "--sparse", "--stage"),
        "tags": git(root, "ls-files", "--sparse", "-t", "-v"),
        "resolve-undo": git(root, "ls-files", "--resolve-undo"),
        "status": git(root, "status", "--porcelain", "--untracked-files=all"),
        "staged": git(root, "diff", "--cached", "--name-status"),
        "tree": _write_tree(root),
    }


def _write_tree(root: Path) -> str:
    """The tree the index makes, or git's refusal (an unmerged index)."""
    proc = subprocess.run(["git", "write-tree"], cwd=root, capture_output=True, text=True)
    return proc.stdout if proc.returncode == 0 else f"refused: {proc.stderr}"


def check_variant(tmp_path: Path, algo: str, variant: Variant) -> None:
    ours, twin = tmp_path / "ours", tmp_path / "twin"
    make_repo(ours, algo)
    variant.build(ours)
    width = Repo(ours).store.width
    before = parse_index(ours / ".git" / "index", width)
    assert variant.proof(before), before  # the variant was really built
    shutil.copytree(ours, twin, symlinks=True)
    changes = dict(variant.changes)
    assert by_vouch(ours, changes) is variant.fast
    by_git(twin, changes)
    mine, theirs = what_git_sees(ours), what_git_sees(twin)
    assert mine == theirs
    for root in (ours, twin):
        git(root, "fsck", "--no-dangling")  # verifies the index checksum too
    after, reference = (parse_index(r / ".git" / "index", width) for r in (ours, twin))
    assert after.version == reference.version
    assert after.flagged == reference.flagged and after.sparse_dirs == reference.sparse_dirs
    assert after.conflicted == reference.conflicted
    kept = {"TREE", "REUC", "link", "sdir"}  # the caches git rebuilds may be dropped
    assert set(after.extensions) & kept == set(reference.extensions) & kept
    # the files vouch wrote are clean without git re-reading them (stat data recorded)
    if variant.fast:
        assert git(ours, "diff", "--name-only") == git(twin, "diff", "--name-only")
    # after git's next write both stay equal (a cache vouch dropped comes back)
    (ours / "d" / "late.txt").write_text("late\n")
    (twin / "d" / "late.txt").write_text("late\n")
    _log_changes(ours, ["d/late.txt"])
    _log_changes(twin, ["d/late.txt"])
    assert what_git_sees(ours) == what_git_sees(twin)


@pytest.mark.parametrize("algo", ["sha1", "sha256"])
@pytest.mark.parametrize("name", list(VARIANTS))
def test_each_index_variant_agrees_with_git(tmp_path: Path, algo: str, name: str) -> None:
    check_variant(tmp_path, algo, VARIANTS[name])


@pytest.mark.parametrize(
    "name",
    [
        "v2",
        "v3-skip-worktree",
        "untracked-cache",
        "fsmonitor",
        "sparse-checkout",
        "sparse-checkout-touching-outside",
        "sparse-index",
        "v4",
        "split-index",
    ],
)
def test_index_dirty_agrees_with_git_or_steps_aside(tmp_path: Path, name: str) -> None:
    root = tmp_path / "r"
    make_repo(root, "sha1")
    VARIANTS[name].build(root)
    (root / "d" / "b.txt").write_text("unstaged\n")
    (root / "d.txt").write_text("staged\n")
    git(root, "add", "d.txt")
    (root / "d" / "new.txt").write_text("untracked\n")
    _log_changes(root, ["d/b.txt", "d.txt", "d/new.txt"])
    repo = Repo(root)
    paths = ["a.txt", "d/b.txt", "d/c.txt", "d.txt", "d/new.txt", "z/y.txt", "d-x/f"]
    committed = {p: repo.blob_at("HEAD", p) for p in paths}
    answer = repo.index_dirty(paths, committed)
    if answer is None:  # the patcher declined: git answers
        assert name in (
            "v4",
            "split-index",
            "sparse-index",
            "v3-skip-worktree",
            "sparse-checkout",
            "sparse-checkout-touching-outside",
        )
        answer = repo.worktree_changes(paths)
    status = git(root, "status", "--porcelain", "--untracked-files=all", "--", *paths)
    assert sorted(answer) == sorted(line[3:] for line in status.splitlines())


# -- the tests can fail: patchers that cut corners are caught -------------------------------
# (each variant is marked as patched in-process, so only the comparison with git can fail)
def test_patching_a_split_index_would_be_caught(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(gitindex, "_UNSUPPORTED", set())
    with pytest.raises((AssertionError, subprocess.CalledProcessError)):
        check_variant(tmp_path, "sha1", replace(VARIANTS["split-index"], fast=True))


def test_patching_a_sparse_index_would_be_caught(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(gitindex, "_UNSUPPORTED", set())
    with pytest.raises((AssertionError, subprocess.CalledProcessError)):
        check_variant(tmp_path, "sha1", replace(VARIANTS["sparse-index"], fast=True))


def test_an_eoie_that_disagrees_is_declined(tmp_path: Path) -> None:
    root = tmp_path / "r"
    make_repo(root, "sha1")
    end_of_entries(root)
    index = root / ".git" / "index"
    assert gitindex.read(index) is not None
    data = bytearray(index.read_bytes())
    at = data.rindex(b"EOIE")
    struct.pack_into(">I", data, at + 8, struct.unpack_from(">I", data, at + 8)[0] - 8)
    index.write_bytes(bytes(data))
    assert gitindex.read(index) is None
