"""Where the index lives: `.vouch/index/`, or a per-user cache when a clone cannot be
written, or wherever VOUCH_INDEX_DIR says.

The read-only tests need a user whom file permissions bind. Root is not one (it ignores
mode bits, and `access(2)` says yes to it), so as root the test body runs with the
effective uid and gid of `nobody` (and back); as anyone else, as themselves. Both ways
the clone's `.vouch/` is mode 0555, so `.vouch/index/` cannot be created: a real
EACCES from the kernel, not a mocked one.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import git
from index_support import claim, commit, index_dir

import vouch
from vouch.index import Index, index_status, location
from vouch.store.kb import KB

NOBODY = 65534


@pytest.fixture
def shared(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A directory every user may enter (pytest's own tmp_path is root's alone), with a
    git configuration they can read and a cache they can write."""
    top = _reachable_folder()
    home = top / "home"
    (home / ".gitconfig").write_text(
        "[user]\n\tname = Test Person\n\temail = test@example.invalid\n"
        "[init]\n\tdefaultBranch = main\n[commit]\n\tgpgsign = false\n[gc]\n\tauto = 0\n"
        "[safe]\n\tdirectory = *\n"
    )  # the clone belongs to another user
    cache = top / "cache"
    cache.mkdir()
    if os.geteuid() == 0:
        os.chown(home, NOBODY, NOBODY)
        os.chown(cache, NOBODY, NOBODY)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    monkeypatch.delenv(location.ENV, raising=False)
    try:
        yield top
    finally:
        shutil.rmtree(top, ignore_errors=True)


def _reachable_folder() -> Path:
    """A new folder, with a `home` in it, that `nobody` can enter when the tests run as
    root: in the temporary folder if every folder above it lets others through, else in
    /tmp or /var/tmp. Under a folder closed to others (mode 0700) nobody can reach the
    clone, and the read-only tests cannot be run: skipped, saying so."""
    tried = []
    for base in dict.fromkeys((tempfile.gettempdir(), "/tmp", "/var/tmp")):
        try:
            top = Path(tempfile.mkdtemp(prefix="vouch-location-", dir=base))
        except OSError:
            continue
        top.chmod(0o755)
        (top / "home").mkdir()
        try:
            with _as_nobody() if os.geteuid() == 0 else contextlib.nullcontext():
                os.stat(top / "home")
            return top
        except PermissionError:
            tried.append(base)
            shutil.rmtree(top, ignore_errors=True)
    pytest.skip(
        f"user nobody (uid {NOBODY}) cannot enter {' or '.join(tried)}: a folder above "
        "is closed to others (mode 0700?), so a read-only clone cannot be tried; set "
        "TMPDIR to a folder everyone may enter"
    )


def _vouch_readable_by_nobody() -> None:
    """As root the tests run vouch as `nobody`, who must read vouch's own files (its
    templates, modules imported on first use): not so in a clone under a folder closed
    to others. Skipped, saying so."""
    package = Path(vouch.__file__).parent
    try:
        with _as_nobody():
            (package / "templates" / "config.yaml").read_bytes()
            os.listdir(package / "index")
    except PermissionError:
        pytest.skip(
            f"user nobody (uid {NOBODY}) cannot read vouch's own files in {package}: a "
            "folder above is closed to others (mode 0700?), so a read-only clone cannot "
            "be tried as another user; run the tests from a clone everyone may read"
        )


@pytest.fixture
def clone(shared: Path) -> KB:
    from vouch.store.initkb import init_kb

    repo = shared / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "README.md").write_text("a project\n")
    init_kb(repo)
    kb = KB.open(repo)
    claim(kb, "Deploys run from the main branch via GitHub Actions")
    claim(kb, "The billing service stores invoices in PostgreSQL")
    commit(kb)
    assert not index_dir(kb).exists()
    return kb


@contextlib.contextmanager
def read_only(kb: KB) -> Iterator[None]:
    """`.vouch/` without write permission, for a user that permission binds."""
    mode = stat.S_IMODE(kb.dir.stat().st_mode)
    kb.dir.chmod(0o555)
    try:
        with _unprivileged():
            yield
    finally:
        kb.dir.chmod(mode)


@contextlib.contextmanager
def _unprivileged() -> Iterator[None]:
    """As root: the effective uid and gid of `nobody`, who must read vouch's own files."""
    if os.geteuid() != 0:
        yield
        return
    _vouch_readable_by_nobody()
    with _as_nobody():
        yield


@contextlib.contextmanager
def _as_nobody() -> Iterator[None]:
    groups = os.getgroups()
    os.setgroups([])
    os.setegid(NOBODY)
    os.seteuid(NOBODY)
    try:
        yield
    finally:
        os.seteuid(0)
        os.setegid(0)
        os.setgroups(groups)


def _cache_for(kb: KB, shared: Path) -> Path:
    key = hashlib.sha256(str(kb.dir.resolve()).encode()).hexdigest()[:16]
    return shared / "cache" / "vouch" / key / "index"


def _search(run_cli: Any, kb: KB, *args: str) -> list[str]:
    result = run_cli("search", "invoices", "--json", *args, cwd=kb.root)
    assert result.code == 0, result.err
    return [r["id"] for r in result.json()["results"]]


def test_a_writable_clone_keeps_its_index_beside_the_knowledge(clone: KB, run_cli: Any) -> None:
    assert _search(run_cli, clone)[0].startswith("the-billing-service")
    status = run_cli("index", "status", "--json", cwd=clone.root).json()
    assert (status["location"], status["path"]) == ("repository", str(index_dir(clone)))


def test_a_read_only_clone_searches_with_its_index_in_the_user_cache(
    clone: KB, shared: Path, run_cli: Any
) -> None:
    cache = _cache_for(clone, shared)
    with read_only(clone):
        assert _search(run_cli, clone)[0].startswith("the-billing-service")
        assert _search(run_cli, clone, "--fts-only")[0].startswith("the-billing-service")
        status = run_cli("index", "status", "--json", cwd=clone.root).json()
        human = run_cli("index", "status", cwd=clone.root).out
    assert not index_dir(clone).exists()
    assert (cache / "search.db").is_file()
    assert status["state"] == "fresh"
    assert (status["location"], status["path"]) == ("cache", str(cache))
    assert str(cache) in human


def test_a_clone_that_only_looks_writable_falls_back_on_the_first_write(
    clone: KB, shared: Path, run_cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # access(2) can say yes where a write is refused (a squashed network share, a
    # security module): the refused write itself moves the index to the cache
    monkeypatch.setattr(location, "_writable", lambda directory: True)
    with read_only(clone):
        assert _search(run_cli, clone)[0].startswith("the-billing-service")
        assert _search(run_cli, clone)[0].startswith("the-billing-service")
        assert run_cli("index", "rebuild", "--json", cwd=clone.root).code == 0
    assert not index_dir(clone).exists()
    assert (_cache_for(clone, shared) / "search.db").is_file()


def test_the_index_follows_the_knowledge_in_a_read_only_clone(clone: KB, run_cli: Any) -> None:
    with read_only(clone):
        assert _search(run_cli, clone)[0].startswith("the-billing-service")
    claim(clone, "Invoices are archived after seven years")  # the owner changes it
    with read_only(clone):
        index = Index.open(KB(clone.dir))
        try:
            assert index.last_report is not None and index.last_report.mode == "refresh"
        finally:
            index.close()
        assert len(_search(run_cli, clone, "--fts-only")) == 2


def test_vouch_index_dir_puts_the_index_anywhere(
    clone: KB, shared: Path, run_cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = shared / "scratch" / "idx"
    monkeypatch.setenv(location.ENV, str(elsewhere))
    assert _search(run_cli, clone)[0].startswith("the-billing-service")
    assert (elsewhere / "search.db").is_file() and not index_dir(clone).exists()
    status = index_status(KB(clone.dir))
    assert (status["state"], status["location"], status["path"]) == (
        "fresh",
        "environment",
        str(elsewhere),
    )


def test_an_unwritable_forced_location_is_a_permission_error(
    clone: KB, shared: Path, run_cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    locked = shared / "locked"
    locked.mkdir(mode=0o555)
    monkeypatch.setenv(location.ENV, str(locked / "idx"))
    with _unprivileged():
        result = run_cli("search", "invoices", "--json", cwd=clone.root)
    assert result.code != 0
    error = result.json()["error"]
    assert error["code"] == "E204" and location.ENV in error["hint"]


def test_cache_keys_differ_per_knowledge_base(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    one = location.in_cache("/srv/a/.vouch")
    two = location.in_cache("/srv/b/.vouch")
    assert one.path.parent.parent == two.path.parent.parent == tmp_path / "xdg" / "vouch"
    assert one.path != two.path and one.path.name == "index" and one.kind == "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/dir")  # not absolute: ignored (XDG)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert (
        location.in_cache("/srv/a/.vouch").path.parent.parent
        == tmp_path / "home" / ".cache" / "vouch"
    )
