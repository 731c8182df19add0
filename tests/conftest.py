"""Hermetic test setup: isolated HOME and git config, real git repositories in tmp dirs."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from vouch.cli import main
from vouch.store.kb import KB

FIXTURES = Path(__file__).parent / "fixtures"


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
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    path.mkdir()
    git(path, "init", "-q")
    (path / "README.md").write_text("a project\n")
    git(path, "add", "README.md")
    git(path, "commit", "-qm", "initial")
    return path


@pytest.fixture
def kb(repo: Path) -> Iterator[KB]:
    from vouch.store.initkb import init_kb

    init_kb(repo)
    yield KB.open(repo)


@pytest.fixture
def fresh(tmp_path: Path) -> KB:
    """A second, empty knowledge base (where a bundle is imported)."""
    from vouch.store.initkb import init_kb

    root = tmp_path / "elsewhere"
    root.mkdir()
    git(root, "init", "-q")
    init_kb(root)
    return KB.open(root)


@pytest.fixture
def kb_with_sources(kb: KB) -> KB:
    """A knowledge base with the three example documents registered as sources."""
    from vouch.methods.demo import example_files
    from vouch.store import sources

    items = [sources.intake_for_path(kb, p) for p in example_files()]
    sources.register_many(kb, items, "Test Person")
    return kb


GITCONFIG = (
    "[user]\n\tname = Test Person\n\temail = test@example.invalid\n"
    "[init]\n\tdefaultBranch = main\n[commit]\n\tgpgsign = false\n[gc]\n\tauto = 0\n"
)


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
