"""Hermetic test setup: isolated HOME and git config, real git repositories in tmp dirs."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from vouch.cli import main
from vouch.store.kb import KB

FIXTURES = Path(__file__).parent / "fixtures"

# a cold `vouch search` the tests start must not leave a warm process behind
# (`vouch.autostart`); the tests of that start remove this from their commands' env
os.environ["VOUCH_NO_AUTO_WARM"] = "1"


# what the caller's environment may set that would make vouch or git act otherwise: a
# shell or CI system may name who commits (GIT_AUTHOR_*, GIT_COMMITTER_*), and git obeys
FOREIGN_ENV = (
    "VOUCH_KB",
    "VOUCH_AGENT",
    "VOUCH_DEBUG",
    "VOUCH_INDEX_DIR",
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_AUTHOR_NAME",
    "GIT_AUTHOR_EMAIL",
    "GIT_AUTHOR_DATE",
    "GIT_COMMITTER_NAME",
    "GIT_COMMITTER_EMAIL",
    "GIT_COMMITTER_DATE",
    "EMAIL",
)


@pytest.fixture(autouse=True)
def _isolate(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    for var in FOREIGN_ENV:
        monkeypatch.delenv(var, raising=False)
    (home / ".gitconfig").write_text(GITCONFIG)


@dataclass
class Result:
    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)


@pytest.fixture
def run_cli(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch):
    """Run `vouch ARGS` in-process, in `cwd` (default: the current directory)."""

    def _run(
        *args: str, cwd: Path | None = None, input: str | None = None, terminal: bool = True
    ) -> Result:
        # stdout is a person's terminal unless `terminal=False` (a pipe): with neither
        # --json nor --format, a command prints human text on one and JSON into the other
        if cwd is not None:
            monkeypatch.chdir(cwd)
        if input is not None:
            import io

            monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(input.encode())))
        capsys.readouterr()
        monkeypatch.setattr(sys.stdout, "isatty", lambda: terminal)
        code = main(list(args))
        captured = capsys.readouterr()
        return Result(code, captured.out, captured.err)

    return _run


def script(name: str) -> Any:
    """scripts/<name>.py as a module."""
    import importlib.util
    import sys

    path = Path(__file__).resolve().parents[1] / "scripts" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # as an import would: dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout


@pytest.fixture
def repo(tmp_path: Path, request: pytest.FixtureRequest) -> Path:
    """A git repository with one commit; when the test also uses `kb` (or
    `kb_with_sources`), that knowledge base already in it (see `_template`)."""
    path = tmp_path / "repo"
    names = request.fixturenames
    stage = "kb_with_sources" if "kb_with_sources" in names else "kb" if "kb" in names else "repo"
    _copy_template(request, stage, path)
    return path


@pytest.fixture
def kb(repo: Path) -> Iterator[KB]:
    # `repo` is a copy of a knowledge base `vouch init` made (`_build_kb`)
    yield KB.open(repo)


@pytest.fixture
def fresh(tmp_path: Path, request: pytest.FixtureRequest) -> KB:
    """A second, empty knowledge base (where a bundle is imported)."""
    root = tmp_path / "elsewhere"
    _copy_template(request, "fresh", root)
    return KB.open(root)


@pytest.fixture
def kb_with_sources(kb: KB) -> KB:
    """A knowledge base with the three example documents registered as sources."""
    # `repo` is a copy of one where they were registered (`_build_kb_with_sources`)
    return kb


# -- the repository fixtures are built once per test process, then copied for each test:
# a copy of a git repository is the same repository (objects, refs, vouch's state in
# .git/vouch), made in milliseconds instead of the git and `vouch init` runs that built it
def _build_repo(path: Path) -> None:
    (path / "README.md").write_text("a project\n")
    git(path, "add", "README.md")
    git(path, "commit", "-qm", "initial")


def _build_kb(path: Path) -> None:
    from vouch.store.initkb import init_kb

    _build_repo(path)
    init_kb(path)


def _build_kb_with_sources(path: Path) -> None:
    from vouch.methods.demo import example_files
    from vouch.store import sources

    _build_kb(path)
    kb = KB.open(path)
    items = [sources.intake_for_path(kb, p) for p in example_files()]
    sources.register_many(kb, items, "Test Person")


def _build_fresh(path: Path) -> None:
    from vouch.store.initkb import init_kb

    init_kb(path)


_BUILDERS = {
    "repo": _build_repo,
    "kb": _build_kb,
    "kb_with_sources": _build_kb_with_sources,
    "fresh": _build_fresh,
}
_TEMPLATES: dict[str, Path] = {}


def _template(request: pytest.FixtureRequest, stage: str) -> Path:
    """The repository `stage` builds (in a new `git init` repository, under a pinned
    identity), built on first use in this process."""
    found = _TEMPLATES.get(stage)
    if found is None:
        factory = request.getfixturevalue("tmp_path_factory")
        with hermetic(factory, f"template-{stage}") as root:
            _BUILDERS[stage](root)
        found = _TEMPLATES[stage] = root
    return found


def _copy_template(request: pytest.FixtureRequest, stage: str, dest: Path) -> None:
    shutil.copytree(_template(request, stage), dest, symlinks=True)
    # the copy's files have new inodes and times: git's index stat data catches up, as it
    # would after any `git status`, so plumbing (diff-files) sees the tree clean
    git(dest, "update-index", "-q", "--refresh")


GITCONFIG = (
    "[user]\n\tname = Test Person\n\temail = test@example.invalid\n"
    "[init]\n\tdefaultBranch = main\n[commit]\n\tgpgsign = false\n[gc]\n\tauto = 0\n"
)


# -- bytecode: where the environment says PYTHONDONTWRITEBYTECODE (as some CI images and
# sandboxes do), every `python -m vouch` the tests start compiled all of vouch again, and
# each test process rewrote every test module's asserts again. For this run only, the
# compiled files go to a private temporary folder (PYTHONPYCACHEPREFIX, never beside the
# sources), shared by the test processes and every process they start; removed at the end.
_PYCACHE_OWNER = "VOUCH_TESTS_PYCACHE"


def pytest_configure(config: pytest.Config) -> None:
    if not os.environ.get("PYTHONDONTWRITEBYTECODE") or os.environ.get(_PYCACHE_OWNER):
        return  # bytecode is written as usual, or a parent test process set this up
    folder = tempfile.mkdtemp(prefix="vouch-tests-pycache-")  # mode 0700
    os.environ[_PYCACHE_OWNER] = folder
    os.environ["PYTHONPYCACHEPREFIX"] = folder
    os.environ.pop("PYTHONDONTWRITEBYTECODE")
    sys.pycache_prefix = folder
    sys.dont_write_bytecode = False


def pytest_unconfigure(config: pytest.Config) -> None:
    folder = os.environ.get(_PYCACHE_OWNER)
    if folder and not hasattr(config, "workerinput"):  # the process that made it
        shutil.rmtree(folder, ignore_errors=True)


@contextlib.contextmanager
def hermetic(tmp_path_factory: pytest.TempPathFactory, name: str = "repo") -> Iterator[Path]:
    """For a module-scoped fixture (the autouse isolation is per test): a home with a
    pinned git identity, and a new git repository to build in."""
    home = tmp_path_factory.mktemp(f"home-{name}")
    (home / ".gitconfig").write_text(GITCONFIG)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOME", str(home))
        mp.setenv("GIT_CONFIG_NOSYSTEM", "1")
        mp.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
        for var in FOREIGN_ENV:
            mp.delenv(var, raising=False)
        root = tmp_path_factory.mktemp(name) / "repo"
        root.mkdir()
        git(root, "init", "-q")
        yield root
