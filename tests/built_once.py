"""A repository a test module builds, built once per test session instead of once per
test process.

With `--dist worksteal` the tests of one module run in several test processes (xdist
workers), and a module-scoped fixture runs in each of them: a knowledge base that takes
seconds of vouch commands to build was built up to three times. `built_once` builds it
in whichever process asks first, under a lock in the folder the session's processes
share (the parent of each worker's base temporary folder), and hands the others the same
folder when it is done. Callers only read it, or copy it (`shutil.copytree`) to change
it: it is one folder for every process.
"""

from __future__ import annotations

import fcntl
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import hermetic


def _shared(factory: pytest.TempPathFactory) -> Path:
    """The folder all test processes of this session share."""
    base = factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def built_once(
    factory: pytest.TempPathFactory, name: str, build: Callable[[Path], Any]
) -> tuple[Path, Any]:
    """(the repository, what `build` returned): `build(root)` run in a new git repository
    under a pinned identity and a home of its own (`conftest.hermetic`), once a session.

    What `build` returns is handed to every process, so it must be JSON-like (names,
    ids; paths as strings relative to the repository)."""
    import json

    shared = _shared(factory)
    root = shared / f"built-{name}" / "repo"
    done = root.parent / "built.json"
    with open(shared / f"built-{name}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            shutil.rmtree(root.parent, ignore_errors=True)  # a build that failed midway
            with hermetic(factory, f"build-{name}") as made, pytest.MonkeyPatch.context() as mp:
                home = Path(os.environ["HOME"])  # as conftest's per-test isolation sets them
                mp.setenv("XDG_CONFIG_HOME", str(home / ".config"))
                mp.setenv("XDG_CACHE_HOME", str(home / ".cache"))
                mp.setenv("HF_HUB_OFFLINE", "1")
                result = build(made)
            shutil.move(str(made.parent), str(root.parent))
            done.write_text(json.dumps({"result": result}))
    return root, json.loads(done.read_text())["result"]


def copied(template: Path, dest: Path) -> Path:
    """A copy of the repository `template` at `dest` (without the search index, which
    names its folder: the copy's first search builds its own), git's stat data caught up
    with the copy's new inodes — as `vouch` would find the repository it was made in."""
    from conftest import git

    def no_index(folder: str, names: list[str]) -> list[str]:
        return ["index"] if Path(folder).name == ".vouch" else []

    shutil.copytree(template, dest, symlinks=True, ignore=no_index)
    git(dest, "update-index", "-q", "--refresh")
    return dest


def started(root: Path) -> Any:
    """The knowledge base of a new repository at `root` (a `built_once` build starts
    here): a first commit of a README, then `vouch init`."""
    from conftest import git

    from vouch.store.initkb import init_kb
    from vouch.store.kb import KB

    (root / "README.md").write_text("a project\n")
    git(root, "add", "README.md")
    git(root, "commit", "-qm", "initial")
    init_kb(root)
    return KB.open(root)
