"""Many objects written in one batch are stored as one pack that git itself reads and
checks (`git index-pack`), in both object formats; few go loose; a batch that fails
stores nothing."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from conftest import git

from vouch.git import objects
from vouch.git.objects import PACK_AT, ObjectStore


@pytest.fixture(params=["sha1", "sha256"])
def repo(tmp_path: Path, request: pytest.FixtureRequest) -> Path:
    root = tmp_path / request.param
    root.mkdir()
    git(root, "init", "-q", f"--object-format={request.param}")
    return root


def packs(root: Path) -> list[Path]:
    return sorted((root / ".git" / "objects" / "pack").glob("*.pack"))


def loose(root: Path) -> int:
    found = root / ".git" / "objects"
    return sum(1 for d in found.iterdir() if len(d.name) == 2 for _ in d.iterdir())


def test_a_big_batch_is_one_pack_git_reads_back(repo: Path) -> None:
    store = ObjectStore(repo)
    blobs = [f"object {i}\n".encode() * (i % 7 + 1) for i in range(PACK_AT + 40)]
    big = bytes(range(256)) * 5000  # past the size where the pack header needs more bytes
    with store.batch():
        shas = [store.write("blob", data) for data in [*blobs, big]]
        tree = store.write("tree", objects.format_tree([("100644", "blob", shas[0], "a")]))
        assert store.read(shas[-1]) == ("blob", big)  # readable before it is stored
    assert len(packs(repo)) == 1 and loose(repo) == 0
    fresh = ObjectStore(repo)  # another process's view: only what git stored
    for sha, data in zip(shas, [*blobs, big], strict=True):
        assert fresh.read(sha) == ("blob", data)
    assert git(repo, "cat-file", "-t", tree).strip() == "tree"
    git(repo, "fsck", "--strict", "--no-dangling")


def test_a_small_batch_goes_loose(repo: Path) -> None:
    store = ObjectStore(repo)
    with store.batch():
        sha = store.write("blob", b"one\n")
        with store.batch():  # nested: the outer one stores
            store.write("blob", b"two\n")
    assert packs(repo) == [] and loose(repo) == 2
    assert git(repo, "cat-file", "-p", sha) == "one\n"


def test_a_batch_that_fails_stores_nothing(repo: Path) -> None:
    store = ObjectStore(repo)
    with pytest.raises(RuntimeError), store.batch():
        for i in range(PACK_AT * 2):
            store.write("blob", f"doomed {i}\n".encode())
        raise RuntimeError("killed midway")
    assert packs(repo) == [] and loose(repo) == 0
    missing = subprocess.run(
        ["git", "cat-file", "-e", store.hash("blob", b"doomed 0\n")], cwd=repo, check=False
    )
    assert missing.returncode != 0


def test_read_many_pipelines_reads_and_keeps_order_and_missing(repo: Path) -> None:
    """Objects written by git (hash-object), many and some larger than a pipe buffer,
    read back in one pipelined pass: same bytes as `git cat-file`, in request order, a
    missing name as None, an object this process wrote without asking git."""
    datas = [f"blob {i}\n".encode() * (i % 5 + 1) for i in range(150)]
    datas[7] = bytes(range(256)) * 1200  # 300 KiB: more than git's pipe holds at once
    shas = []
    for data in datas:
        done = subprocess.run(
            ["git", "hash-object", "-w", "--stdin"], cwd=repo, input=data, capture_output=True
        )
        shas.append(done.stdout.decode().strip())
    store = ObjectStore(repo)
    mine = store.write("blob", b"written here\n")
    missing = "f" * len(mine)
    names = [*shas[:100], missing, mine, *shas[100:]]
    found = store.read_many(names, chunk=16)
    assert found[100] is None
    assert found[101] == ("blob", b"written here\n")
    assert [f[1] for f in found[:100] + found[102:] if f] == datas
    assert store.read(shas[7]) == ("blob", datas[7])  # the pipe is in step afterwards
    store.close()
