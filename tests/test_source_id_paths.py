"""A file named like a source id's prefix (fourth outsider, row 30): `090ff1a8aa86`
registered at the work tree's root, cited by its path, silently resolved to the other
source whose id starts with those digits. A token naming both is refused (E103) naming
both, `./NAME` names the file, the whole id the source; and a file whose name is hex
no id starts with (`abcdef123456` typed in `abcdef/`) is read as its path, not refused
as an unknown id."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import git
from gate_support import call

from vouch.store import source_names
from vouch.store.kb import KB


def _two(kb: KB) -> tuple[str, str, str]:
    """docs/a.md registered; a file named after the first 12 digits of its id, at the
    root, registered too: (prefix, docs/a.md's id, the file's id)."""
    (kb.root / "docs").mkdir()
    (kb.root / "docs" / "a.md").write_text("the real policy\n")
    git(kb.root, "add", "docs")
    git(kb.root, "commit", "-qm", "docs")
    real = call(kb, "kb.register_source_from_path", {"path": "docs/a.md"})["id"]
    prefix = real[:12]
    (kb.root / prefix).write_text("a file named like an id\n")
    git(kb.root, "add", prefix)
    git(kb.root, "commit", "-qm", "hex name")
    named = call(kb, "kb.register_source_from_path", {"path": prefix})["id"]
    assert named != real
    return prefix, real, named


def _state(root: Path) -> tuple[str, str]:
    return git(root, "for-each-ref", "--format=%(refname) %(objectname)"), git(
        root, "status", "--porcelain"
    )


def test_a_path_that_is_also_an_id_prefix_is_refused_naming_both(kb: KB, run_cli) -> None:
    prefix, real, named = _two(kb)
    before = _state(kb.root)
    for token in (f"{prefix}:L1", prefix):
        res = run_cli("propose-claim", "--text", "Policy.", "--source", token, cwd=kb.root)
        assert res.code == 1 and "E103" in res.err, res.err  # docs/a.md silently before
        assert f"the file {prefix} (source {named[:12]})" in res.err
        assert f"starts with {prefix} ({real[:12]})" in res.err
        assert f"./{token}" in res.err and real in res.err  # the two ways that work
    assert _state(kb.root) == before  # no proposal, nothing written


def test_the_ways_the_error_names_resolve(kb: KB, monkeypatch: pytest.MonkeyPatch) -> None:
    prefix, real, named = _two(kb)
    monkeypatch.chdir(kb.root)
    assert source_names.resolve(kb, f"./{prefix}:L1") == f"{named}:L1"
    assert source_names.resolve(kb, f"{real}:L1") == f"{real}:L1"
    assert source_names.resolve(kb, real[:14]) == real  # a longer prefix: no such file
    (kb.root / prefix).unlink()  # no file there: the prefix is an id again
    assert source_names.resolve(kb, f"{prefix}:L1") == f"{real}:L1"


def test_a_hex_file_name_no_id_starts_with_is_its_path(
    kb: KB, monkeypatch: pytest.MonkeyPatch, run_cli
) -> None:
    folder = kb.root / "abcdef"
    folder.mkdir()
    (folder / "abcdef123456").write_text("hex named\n")
    git(kb.root, "add", "abcdef")
    git(kb.root, "commit", "-qm", "hex")
    sid = call(kb, "kb.register_source_from_path", {"path": "abcdef/abcdef123456"})["id"]
    if sid.startswith("abcdef123456"):
        pytest.skip("the file's own id starts with its name")
    monkeypatch.chdir(folder)
    assert source_names.resolve(kb, "abcdef123456:L1") == f"{sid}:L1"  # E101 before
    res = run_cli("propose-claim", "--text", "x", "--source", "abcd1234:L1", cwd=folder)
    assert res.code == 1 and "E101" in res.err  # a prefix of nothing, no file: as before
