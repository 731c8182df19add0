"""The user's registry of knowledge bases (`vouch kb add|list|remove`, issue 38 item 3):
kept in the XDG config folder, written atomically, names checked, hostile paths and
hand-edited files refused with a clear error and nothing changed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import _copy_template

from vouch.store import kb_registry


def registry() -> Path:
    return Path(os.environ["XDG_CONFIG_HOME"]) / "vouch" / "kbs.yaml"


def make_kb(request: pytest.FixtureRequest, where: Path) -> Path:
    """A real repository with a knowledge base `vouch init` made."""
    _copy_template(request, "kb", where)
    return where


def state() -> bytes | None:
    try:
        return registry().read_bytes()
    except FileNotFoundError:
        return None


def refused(result: object, code: str) -> dict[str, str]:
    out = json.loads(result.out)  # type: ignore[attr-defined]
    assert result.code == 1, result  # type: ignore[attr-defined]
    assert out["error"]["code"] == code, out
    assert "Traceback" not in result.err  # type: ignore[attr-defined]
    return dict(out["error"])


def test_add_list_remove_in_the_xdg_config_folder(
    request: pytest.FixtureRequest, tmp_path: Path, run_cli
) -> None:
    handbook = make_kb(request, tmp_path / "handbook")
    ops = make_kb(request, tmp_path / "ops-notes")
    added = run_cli("kb", "add", str(handbook), "--json")
    assert added.code == 0, added.err
    assert added.json()["added"] == {"name": "handbook", "path": str(handbook.resolve())}
    # the .vouch folder names its knowledge base too; --name chooses the name
    assert run_cli("kb", "add", str(ops / ".vouch"), "--name", "ops", "--json").code == 0
    assert registry().is_file()
    text = registry().read_text()
    assert f"handbook: {handbook.resolve()}" in text and f"ops: {ops.resolve()}" in text
    listed = run_cli("kb", "list", "--json").json()
    assert [(k["name"], k["path"]) for k in listed["kbs"]] == [
        ("handbook", str(handbook.resolve())),
        ("ops", str(ops.resolve())),
    ]
    # never indexed yet: said so, and listing made no index there
    assert {k["state"] for k in listed["kbs"]} == {"unindexed"}
    assert not (handbook / ".vouch" / "index").exists()
    human = run_cli("kb", "list", "--format", "human")
    assert "handbook" in human.out and "unindexed" in human.out
    assert run_cli("kb", "remove", "handbook", "--json").json()["removed"]["name"] == "handbook"
    assert [k["name"] for k in run_cli("kb", "list", "--json").json()["kbs"]] == ["ops"]
    assert (handbook / ".vouch" / "config.yaml").is_file()  # the repository is untouched
    assert refused(run_cli("kb", "remove", "handbook", "--json"), "E101")


def test_the_default_folder_is_dot_config_and_a_relative_xdg_is_ignored(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_cli
) -> None:
    kb = make_kb(request, tmp_path / "notes")
    monkeypatch.delenv("XDG_CONFIG_HOME")
    assert run_cli("kb", "add", str(kb), "--json").code == 0
    home = Path(os.environ["HOME"])
    assert (home / ".config" / "vouch" / "kbs.yaml").is_file()
    monkeypatch.setenv("XDG_CONFIG_HOME", "relative/config")
    monkeypatch.chdir(tmp_path)
    assert kb_registry.registry_path() == home / ".config" / "vouch" / "kbs.yaml"
    assert [e.name for e in kb_registry.entries()] == ["notes"]
    assert not (tmp_path / "relative").exists()


BAD_NAMES = ["all", "", "../x", "a/b", ".hidden", "-x", "x" * 65, "with space", "nul\x01", "é"]


@pytest.mark.parametrize("name", BAD_NAMES)
def test_bad_names_are_refused(
    request: pytest.FixtureRequest, tmp_path: Path, run_cli, name: str
) -> None:
    kb = make_kb(request, tmp_path / "notes")
    before = state()
    error = refused(run_cli("kb", "add", str(kb), "--name", name, "--json"), "E100")
    assert "not a knowledge-base name" in error["message"] and error["hint"]
    assert state() == before


def test_a_name_or_a_path_registered_twice_is_refused(
    request: pytest.FixtureRequest, tmp_path: Path, run_cli
) -> None:
    one = make_kb(request, tmp_path / "one")
    two = make_kb(request, tmp_path / "two")
    assert run_cli("kb", "add", str(one), "--json").code == 0
    before = state()
    assert (
        "registered already"
        in refused(run_cli("kb", "add", str(two), "--name", "one", "--json"), "E100")["message"]
    )
    assert (
        "registered already"
        in refused(run_cli("kb", "add", str(one), "--name", "other", "--json"), "E100")["message"]
    )
    assert state() == before


def test_hostile_paths_are_refused_at_add(
    request: pytest.FixtureRequest, tmp_path: Path, run_cli
) -> None:
    real = make_kb(request, tmp_path / "real")
    plain = tmp_path / "plain"  # a git repository, no knowledge base
    plain.mkdir()
    subprocess.run(["git", "init", "-q", str(plain)], check=True)
    vouch_file = tmp_path / "vouch-file"  # a repository whose .vouch is a file
    subprocess.run(["git", "init", "-q", str(vouch_file)], check=True)
    (vouch_file / ".vouch").write_text("config.yaml: not a folder\n")
    vouch_link = tmp_path / "vouch-link"  # .vouch a link to another's knowledge base
    subprocess.run(["git", "init", "-q", str(vouch_link)], check=True)
    (vouch_link / ".vouch").symlink_to(real / ".vouch")
    config_link = make_kb(request, tmp_path / "config-link")  # config.yaml a link
    (config_link / ".vouch" / "config.yaml").unlink()
    (config_link / ".vouch" / "config.yaml").symlink_to(real / ".vouch" / "config.yaml")
    before = state()
    for path, why in [
        (tmp_path / "nowhere", "does not exist"),
        (plain, "no .vouch folder"),
        (vouch_file, ".vouch there is a file"),
        (vouch_link, ".vouch there is a symbolic link"),
        (config_link, "config.yaml there is a symbolic link"),
    ]:
        error = refused(run_cli("kb", "add", str(path), "--json"), "E100")
        assert why in error["message"], (path, error)
        assert state() == before
    # a link the user gives is their own: the place it leads to is what is registered
    alias = tmp_path / "alias"
    alias.symlink_to(real)
    assert run_cli("kb", "add", str(alias), "--json").json()["added"]["path"] == str(real)


CORRUPT = {
    "not yaml": b"knowledge_bases: [unclosed\n",
    "a list": b"- a\n- b\n",
    "anchors": b"a: &x [1]\nknowledge_bases: *x\n",
    "unknown key": b"knowledge_bases: {}\nremotes: {}\n",
    "table is a list": b"knowledge_bases: [a, b]\n",
    "relative path": b"knowledge_bases:\n  a: relative/path\n",
    "path not text": b"knowledge_bases:\n  a: [1, 2]\n",
    "bad name": b"knowledge_bases:\n  ../x: /tmp\n",
    "reserved name": b"knowledge_bases:\n  all: /tmp\n",
    "not utf-8": b"knowledge_bases:\n  a: /tmp/\xff\n",
    "too large": b"# " + b"x" * (300 * 1024) + b"\n",
    "deep": b"knowledge_bases: " + b"[" * 200 + b"]" * 200 + b"\n",
}


@pytest.mark.parametrize("what", sorted(CORRUPT))
def test_a_hand_edited_registry_is_a_clear_error_and_is_never_overwritten(
    request: pytest.FixtureRequest, tmp_path: Path, run_cli, what: str
) -> None:
    kb = make_kb(request, tmp_path / "notes")
    registry().parent.mkdir(parents=True, exist_ok=True)
    registry().write_bytes(CORRUPT[what])
    for args in (
        ("kb", "list"),
        ("kb", "add", str(kb)),
        ("kb", "remove", "notes"),
        ("search", "--all", "deploys"),
        ("context", "--all", "deploys"),
    ):
        error = refused(run_cli(*args, "--json"), "E111")
        assert str(registry()) in error["message"] and "fix or delete" in error["hint"], error
        assert registry().read_bytes() == CORRUPT[what], args


def test_a_registry_that_is_a_link_or_a_folder_is_refused(
    request: pytest.FixtureRequest, tmp_path: Path, run_cli
) -> None:
    registry().parent.mkdir(parents=True, exist_ok=True)
    elsewhere = tmp_path / "elsewhere.yaml"
    elsewhere.write_text(f"knowledge_bases:\n  x: {tmp_path}\n")
    registry().symlink_to(elsewhere)
    assert "symbolic link" in refused(run_cli("kb", "list", "--json"), "E111")["message"]
    registry().unlink()
    registry().mkdir()
    assert refused(run_cli("kb", "list", "--json"), "E111")
    assert elsewhere.read_text() == f"knowledge_bases:\n  x: {tmp_path}\n"


def test_concurrent_adds_all_land(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    """Eight `vouch kb add` processes at once: the lock serialises the read-modify-write
    and each rename is whole, so every entry is there and the file always parses."""
    paths = [make_kb(request, tmp_path / f"kb{n}") for n in range(8)]
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "vouch", "kb", "add", str(p), "--json"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for p in paths
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    assert sorted(e.name for e in kb_registry.entries()) == sorted(f"kb{n}" for n in range(8))
    leftovers = [p.name for p in registry().parent.iterdir()]
    assert sorted(leftovers) == ["kbs.yaml", "kbs.yaml.lock"]
